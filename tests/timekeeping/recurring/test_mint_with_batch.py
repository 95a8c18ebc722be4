"""A mint arms its subscription's next mint with its firing batch (issue 32,
`arming.rearm_later`): written together when the batch is written, as `arming.rearm` would
have armed each (a live one owed then kept, one owed at another time superseded), and
before any handler that could read or end it. The timers the mint's order arms (its dates'
reminders, `Firing.arm_fresh`) are written with the batch too, at most so many kept."""

from datetime import timedelta
from math import ceil

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.timekeeping.recurring.test_mint_queries import MINTED, SUBSCRIBED, subscribed
from timekeeping.basics import wallclock
from timekeeping.models import Brand, Job, Record, Subscription, TickRun, Timer
from timekeeping.tick import phases
from timekeeping.timers import arming, firing, kinds
from timekeeping.timers.kinds import Place

pytestmark = pytest.mark.django_db(transaction=True)


def _practice(actors, clients: int) -> Brand:
    return subscribed(actors, "practice", clients)


def _next_mints(brand: Brand) -> list[Timer]:
    return list(Timer.objects.filter(brand=brand, kind="schedule",
                                     key__endswith=":annual:2028").order_by("key", "armed_at"))


def _tick() -> CaptureQueriesContext:
    with wallclock.fixed(MINTED), CaptureQueriesContext(connection) as tick:
        phases.run_once(now=MINTED, sweep=False)
    return tick


def test_the_batch_writes_the_next_mints_in_one_insert_each_armed_by_its_mint(actors):
    brand = _practice(actors, 3)
    tick = _tick()
    assert Job.objects.filter(brand=brand, service="annual-return").count() == 3
    mints = {timer.payload["subscription"]: timer for timer in Timer.objects.filter(
        brand=brand, kind="schedule", key__endswith=":annual:2027")}
    armed = _next_mints(brand)
    assert len(armed) == 3 and {timer.state for timer in armed} == {Timer.State.ARMED}
    for timer in armed:
        mint = mints[timer.payload["subscription"]]
        assert (timer.armed_by, timer.owner_id) == (mint.pk, mint.owner_id)
        assert timer.owed == mint.owed.replace(year=2029)  # 1 February, 09:00 in New York
    # One write for the timers the batch's orders armed (their dates' reminders: written
    # with the batch, `Firing.arm_fresh`), one for the next mints. PostgreSQL streams the
    # first with COPY (`stored.write_new`); SQLite's INSERT takes as many rows as its limit
    # of parameters allows.
    inserts = [query["sql"] for query in tick.captured_queries
               if query["sql"].startswith(("INSERT", "COPY"))
               and query["sql"].split("(", 1)[0].endswith(('INTO "timekeeping_timer" ',
                                                           'COPY "timekeeping_timer" '))]
    fresh = Timer.objects.filter(brand=brand, armed_at=MINTED).exclude(kind="schedule").count()
    per_write = fresh if connection.vendor == "postgresql" else \
        connection.ops.bulk_batch_size(Timer._meta.concrete_fields, [None] * fresh)
    assert fresh > 3 * 10 and len(inserts) == ceil(fresh / per_write) + 1 < 3 + 1
    # The run counts each timer the tick armed (or armed held: a return's deadline waits on
    # its organizer), the next mints among them.
    run = TickRun.objects.get(brand=brand, instant=MINTED)
    assert run.armed + run.held == Timer.objects.filter(brand=brand, armed_at=MINTED).count()


def test_a_next_mint_armed_at_another_time_is_superseded_and_one_armed_then_is_kept(actors):
    # As `rearm`: a live timer under the next mint's key owed at another time (a plan
    # changed) is superseded, and one already owed then is the one that stays.
    brand = _practice(actors, 2)
    moved, kept = Subscription.objects.filter(brand=brand).order_by("pk")
    owed = Timer.objects.get(key=f"{moved.pk}:annual:2027").owed.replace(year=2029)
    with wallclock.fixed(SUBSCRIBED):
        early = arming.arm(brand=brand, kind="schedule", key=f"{moved.pk}:annual:2028",
                           owed=owed - timedelta(days=1), owner_id=moved.pk,
                           payload={"subscription": moved.pk, "schedule": "annual",
                                    "period": "2028", "order": "annual-return"})
        standing = arming.arm(brand=brand, kind="schedule", key=f"{kept.pk}:annual:2028",
                              owed=owed, owner_id=kept.pk,
                              payload={"subscription": kept.pk, "schedule": "annual",
                                       "period": "2028", "order": "annual-return"})
    _tick()
    early.refresh_from_db()
    assert (early.state, early.ended_by) == (Timer.State.SUPERSEDED, "re-armed")
    live = [timer for timer in _next_mints(brand) if timer.state == Timer.State.ARMED]
    assert sorted((timer.owner_id, timer.owed) for timer in live) == sorted(
        [(moved.pk, owed), (kept.pk, owed)])
    assert standing.pk in {timer.pk for timer in live}


def _arms_next(timer: Timer, firing) -> str:
    arming.rearm_later(brand=firing.brand, test_clock=None, kind="test_reads_own",
                       key=f"{timer.owner_id}:next", owed=firing.instant + timedelta(days=1),
                       why="re-armed", owner_id=timer.owner_id)
    return "armed its next"


def _reads_next(timer: Timer, firing) -> str:
    found = Timer.objects.filter(brand=firing.brand, key__in=["x:next", "y:next"])
    return " ".join(sorted(found.values_list("key", flat=True))) or "none"


# Test kinds that keep to their owner, as a mint does: one arms its owner's next timer with
# the batch, one (later in the batch) says which owners' next timers it finds written.
kinds.register("test_arms_next", place=Place.CYCLE, describe=lambda timer: timer.key,
               keeps_to_owner=True)(_arms_next)
kinds.register("test_reads_own", place=Place.SCHEDULE, describe=lambda timer: timer.key,
               keeps_to_owner=True)(_reads_next)


def test_a_handler_of_the_same_owner_finds_its_next_timer_written_and_another_owners_not(
        brand):
    at = MINTED
    for owner in ("x", "y"):
        arming.arm(brand=brand, kind="test_arms_next", key=f"{owner}:arms", owed=at,
                   owner_id=owner)
    # z's reader fires first (its owner opened first), then x's.
    arming.arm(brand=brand, kind="test_reads_own", key="z:reads", owed=at, owner_id="z",
               owner_opened=at - timedelta(hours=1))
    arming.arm(brand=brand, kind="test_reads_own", key="x:reads", owed=at, owner_id="x",
               owner_opened=at)
    with wallclock.fixed(at):
        phases.run_once(now=at, sweep=False)
    said = dict(Record.objects.filter(kind="timer.fired", brand=brand).values_list(
        "data__key", "data__what"))
    # z's reader, keeping to z, leaves what the batch armed for x and y unwritten; x's finds
    # them written (one write, both) before it runs.
    assert said["z:reads"] == "none"
    assert said["x:reads"] == "x:next y:next"
    assert Timer.objects.filter(key__in=["x:next", "y:next"], state=Timer.State.ARMED).count() == 2


def _dates_reminders(timer: Timer, firing) -> str:
    return f"found {Timer.objects.filter(brand=firing.brand, owner_type='occurrence').count()}"


# Test kinds firing after a batch's mints (a place after theirs), saying how many reminders of
# the returns' dates they find written: one keeps to an owner of its own, one does not.
kinds.register("test_counts_kept", place=Place.ASK, describe=lambda timer: timer.key,
               keeps_to_owner=True)(_dates_reminders)
kinds.register("test_counts_any", place=Place.ASK, describe=lambda timer: timer.key)(
    _dates_reminders)


def test_the_orders_timers_are_written_with_the_batch_before_a_handler_that_may_read_them(
        actors):
    brand = _practice(actors, 2)
    owed = Timer.objects.filter(brand=brand, kind="schedule").first().owed
    with wallclock.fixed(SUBSCRIBED):
        for kind, key in (("test_counts_kept", "a"), ("test_counts_any", "b")):
            arming.arm(brand=brand, kind=kind, key=key, owed=owed, owner_id=key)
    _tick()
    said = dict(Record.objects.filter(kind="timer.fired", brand=brand, data__kind__startswith=
                                      "test_").values_list("data__key", "data__what"))
    written = Timer.objects.filter(brand=brand, owner_type="occurrence").count()
    # The one keeping to its own owner fires with the orders' timers not yet written; the
    # other, which might read them, finds every one written first.
    assert written > 2 * 10 and said == {"a": "found 0", "b": f"found {written}"}


def test_a_batch_keeps_at_most_so_many_fresh_timers_before_it_writes_them(actors, monkeypatch):
    brand = _practice(actors, 3)
    monkeypatch.setattr(firing, "FRESH_KEPT", 1)  # each order's written when it ends
    tick = _tick()
    inserts = [query["sql"] for query in tick.captured_queries
               if query["sql"].split("(", 1)[0].endswith(('INTO "timekeeping_timer" ',
                                                           'COPY "timekeeping_timer" '))]
    assert len(inserts) == 3 + 1
    run = TickRun.objects.get(brand=brand, instant=MINTED)
    assert run.armed + run.held == Timer.objects.filter(brand=brand, armed_at=MINTED).count()
