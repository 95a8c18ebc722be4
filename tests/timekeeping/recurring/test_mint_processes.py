"""A tax practice's Tax Plan mints each subscriber's 2027 return in one tick on 1 February 2028:
two `manage.py tick` processes at once, and a tick killed mid-mint with another run to the end
(real processes on PostgreSQL, issue 32). Every period's job is opened exactly once, none is
lost, and each subscription's next mint is armed once.

The practice is bench/practice.py's (the demo's tax manifest, its clients filing in US, US-CA
and US-NY), its clients made in bulk and each subscribed with `plans.subscribe` on 25 January
2028. That morning it also owes NOTES no-op notes, an hour before the mint: the engine fires a
clock's owed timers in batches of 1,000 in tie order, each batch committed, so its first batch
holds the notes and the first 300 mints and commits them while the second mints the other 300.
A mint costs tens of milliseconds in a tick process (it opens a job and arms its clocks' timers),
so without them the first mints would commit only after a thousand, most of a minute.

A child process ticks the real clock with the wall clock fixed at 09:05 in New York on 1
February 2028 (`manage.py shell -c`, as bench/practice.py's ticks do): `call_command("tick")`.
"""

import json
import signal
import time
from collections import Counter
from datetime import UTC, date, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model

from tests.processes import needs_postgres, start_manage
from timekeeping import manifests
from timekeeping.basics import wallclock
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Brand, Job, Member, Record, Subject, Subscription, TickRun, Timer
from timekeeping.recurring import plans
from timekeeping.tick import phases

pytestmark = [needs_postgres, pytest.mark.django_db(transaction=True)]

CLIENTS = 600  # each on the Tax Plan: 600 returns minted in one tick
NOTES = 700  # owed first: the first batch of 1,000 holds them and 300 mints
SERVICE, PERIOD, NEXT = "annual-return", "2027", "2028"
CLIENT_INPUT = {"jurisdictions": ["US", "US-CA", "US-NY"], "earliest_credit_expiry": "2046-12-31"}
SUBSCRIBED = datetime(2028, 1, 25, 14, tzinfo=UTC)  # 09:00 in New York, a Tuesday
MINT_OWED = datetime(2028, 2, 1, 14, tzinfo=UTC)  # 09:00 in New York: "1mo after end" of 2027
NOTES_OWED = datetime(2028, 2, 1, 13, tzinfo=UTC)  # 08:00 in New York
TICKED = datetime(2028, 2, 1, 14, 5, tzinfo=UTC)  # 09:05 in New York: cron's tick
TICK = f"""
from datetime import datetime
from django.core.management import call_command
from timekeeping.basics import wallclock
with wallclock.fixed(datetime.fromisoformat({TICKED.isoformat()!r})):
    call_command("tick")
"""


def practice() -> Brand:
    """The tax practice: CLIENTS taxpayers on the Tax Plan since 25 January, and NOTES notes
    owed on 1 February an hour before their mint."""
    owner = get_user_model().objects.create_user("practice-owner", "owner@practice.example")
    brand = Brand.objects.create(name="Practice", slug="practice", owner=owner, plan="team")
    Member.objects.create(brand=brand, user=owner, role="owner")
    version = manifests.load(brand, json.loads(TAX_MANIFEST.read_text()))
    Subject.objects.bulk_create(
        [Subject(brand=brand, bundle=version.bundle, plan=brand.plan, kind="taxpayer",
                 key=f"{n:02d}-{n:07d}", name=f"Client {n}", zone="America/New_York",
                 input=CLIENT_INPUT, contact_email=f"client{n}@practice.example")
         for n in range(CLIENTS)])
    with wallclock.fixed(SUBSCRIBED):
        for subject in Subject.objects.filter(brand=brand).select_related("brand", "test_clock"):
            plans.subscribe(subject=subject, service="tax-plan", anchor=date(2028, 1, 25),
                            by="the practice")
    Timer.objects.bulk_create([
        Timer(brand=brand, key=f"note:{n:05d}", kind="delay", place=5, owed=NOTES_OWED,
              owner_opened=NOTES_OWED - timedelta(days=1), owner_id=f"note_{n}",
              payload={"operation": "timekeeping.note", "input": {"n": n}, "overdue_s": None})
        for n in range(NOTES)])
    mints = mint_timers(brand, PERIOD)
    assert len(mints) == CLIENTS and {t.owed for t in mints} == {MINT_OWED}
    assert {t.state for t in mints} == {"armed"}
    return brand


def mint_timers(brand: Brand, period: str) -> list[Timer]:
    """The annual return's mint timers for `period`, one per subscription (its key is
    `subscription:annual:period`)."""
    return list(Timer.objects.filter(brand=brand, kind="schedule",
                                     key__endswith=f":annual:{period}"))


def tick_to_the_end(brand: Brand, at: datetime) -> None:
    """Tick at `at` in this process until nothing of the brand's is owed: the ticks' budgets
    may not reach the end on a slow machine, and cron's next ticks go on, as these do."""
    for _ in range(10):
        if not Timer.objects.filter(brand=brand, state="armed", owed__lte=at).exists():
            return
        with wallclock.fixed(at):
            phases.run_once(now=at)
    assert not Timer.objects.filter(brand=brand, state="armed", owed__lte=at).exists()


def minted_once_each(brand: Brand) -> None:
    """Every subscriber's 2027 return opened once, by one fired mint, on one record; and
    each subscription's 2028 mint armed once."""
    subscriptions = set(Subscription.objects.filter(brand=brand).values_list("pk", flat=True))
    assert len(subscriptions) == CLIENTS
    jobs = Counter(Job.objects.filter(brand=brand).values_list("subject", "service", "period"))
    assert len(jobs) == CLIENTS and set(jobs.values()) == {1}
    assert {(service, period) for _, service, period in jobs} == {(SERVICE, PERIOD)}
    mints = mint_timers(brand, PERIOD)
    assert {t.owner_id for t in mints} == subscriptions and {t.state for t in mints} == {"fired"}
    fired = Counter(Record.objects.filter(kind="timer.fired", timer__in=[t.id for t in mints])
                    .values_list("timer", flat=True))
    assert len(fired) == CLIENTS and set(fired.values()) == {1}
    minted = Record.objects.filter(brand=brand, kind="schedule.minted")
    assert minted.count() == CLIENTS
    assert Counter(minted.values_list("data__subscription", flat=True)) == Counter(subscriptions)
    opened = Counter(Job.objects.filter(brand=brand).values_list("pk", flat=True))
    assert Counter(minted.values_list("job", flat=True)) == opened
    assert Counter(Record.objects.filter(brand=brand, kind="job.opened")
                   .values_list("job", flat=True)) == opened
    following = mint_timers(brand, NEXT)
    assert Counter(t.owner_id for t in following) == Counter(subscriptions)
    assert {(t.state, t.owed.date()) for t in following} == {("armed", date(2029, 2, 1))}
    notes = Counter(Record.objects.filter(brand=brand, kind="note")
                    .values_list("data__input__n", flat=True))
    assert len(notes) == NOTES and set(notes.values()) == {1}


def test_two_ticks_at_once_mint_every_subscribers_return_exactly_once():
    brand = practice()
    began = time.monotonic()
    ticks = [start_manage("shell", "-c", TICK), start_manage("shell", "-c", TICK)]
    outputs = [process.communicate(timeout=300) for process in ticks]
    assert [process.returncode for process in ticks] == [0, 0], outputs
    took = time.monotonic() - began
    tick_to_the_end(brand, TICKED)
    minted_once_each(brand)
    # One of the two processes ticked the practice's clock (its lease); the other found it
    # held, or, started late, nothing owed.
    pids = {str(process.pid) for process in ticks}
    runs = [run for run in TickRun.objects.filter(brand=brand)
            if run.holder.split(":")[1] in pids]
    assert len(runs) == 1 and runs[0].error == "" and runs[0].fired > 0, outputs
    assert not Brand.objects.filter(pk=brand.pk).exclude(lease_holder="").exists()
    said = [line for out, _ in outputs for line in out.splitlines() if line.startswith("tick ")]
    print(f"two ticks at once: {CLIENTS} returns minted in {took:.1f} s; {said}")


def test_a_tick_killed_mid_mint_leaves_no_job_opened_twice_and_none_missing():
    brand = practice()
    victim = start_manage("shell", "-c", TICK)
    began, jobs = time.monotonic(), Job.objects.filter(brand=brand)
    # The first batch commits the notes and the first mints; the second is minting.
    while time.monotonic() < began + 120 and not jobs.exists():
        time.sleep(0.01)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    killed_at, jobs_when_killed = time.monotonic() - began, jobs.count()
    assert 0 < jobs_when_killed < CLIENTS, "the tick was not caught mid-mint"
    assert Record.objects.filter(brand=brand, kind="schedule.minted").count() == jobs_when_killed
    # The killed tick's lease is still on the clock; its holder is gone, so the next tick
    # takes the clock at once, marks the killed run abandoned and mints the rest.
    brand.refresh_from_db()
    assert brand.lease_holder.split(":")[1] == str(victim.pid)
    rest = time.monotonic()
    tick_to_the_end(brand, TICKED + timedelta(minutes=1))
    rest = time.monotonic() - rest
    minted_once_each(brand)
    runs = list(TickRun.objects.filter(brand=brand).order_by("started"))
    assert runs[0].holder.split(":")[1] == str(victim.pid)
    assert [run.error.startswith("abandoned") for run in runs] == [True] + [False] * (
        len(runs) - 1)
    assert not Brand.objects.filter(pk=brand.pk).exclude(lease_holder="").exists()
    print(f"killed at {killed_at:.1f} s with {jobs_when_killed} of {CLIENTS} returns minted; "
          f"the rest in {rest:.1f} s, {len(runs)} run(s)")
