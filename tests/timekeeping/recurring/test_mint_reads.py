"""A batch of mints reads at once what its mints would each read (issue 32,
`recurring.kinds.schedule.prepare`, `clocks.prepare_orders`): the subscriptions, locked, with
their subjects; the subjects, locked against an erasure; and which periods are held. Each is
its mint's once: a subscription another timer of the batch changes first is read again by
its mint, and a period an earlier order of the batch took is found taken."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.timekeeping.recurring.test_mint_queries import MINTED, subscribed
from timekeeping import clocks
from timekeeping.basics import wallclock
from timekeeping.models import Job, Occurrence, Record, Subject, Subscription, TickRun, Timer
from timekeeping.tick import phases
from timekeeping.timers import arming, in_progress, kinds
from timekeeping.timers.firing import Firing
from timekeeping.timers.kinds import Place

pytestmark = pytest.mark.django_db(transaction=True)


def _tick() -> CaptureQueriesContext:
    with wallclock.fixed(MINTED), CaptureQueriesContext(connection) as tick:
        phases.run_once(now=MINTED, sweep=False)
    return tick


def _reads_of(tick: CaptureQueriesContext, table: str) -> int:
    return sum(1 for query in tick.captured_queries if query["sql"].startswith("SELECT")
               and query["sql"].split(" FROM ", 1)[-1].startswith(f'"{table}"'))


def _minted(brand) -> dict[str, str]:
    """What each subscription's mint said it did, by subscription."""
    return {record.data["owner"]: record.data["what"] for record in Record.objects.filter(
        brand=brand, kind="timer.fired", data__kind="schedule")}


def test_a_batch_of_mints_reads_its_subscriptions_subjects_and_periods_once(actors, settings):
    settings.DEBUG = True
    brand = subscribed(actors, "practice", 6)
    tick = _tick()
    assert Job.objects.filter(brand=brand, service="annual-return", period="2027").count() == 6
    assert Record.objects.filter(brand=brand, kind="schedule.minted").count() == 6
    # One read each for the batch, not one a mint (17 statements a return before, 9 now).
    assert _reads_of(tick, "timekeeping_subscription") == 1
    assert _reads_of(tick, "timekeeping_subject") == 1
    assert _reads_of(tick, "calendars_postponement") == 1
    held = [query["sql"] for query in tick.captured_queries
            if query["sql"].startswith('SELECT "timekeeping_job"."subject_id"')]
    assert len(held) == 1
    # Nothing a new job holds is read back: its asks and deadlines were made by its order.
    assert _reads_of(tick, "timekeeping_deadline") == 0
    assert _reads_of(tick, "timekeeping_ask") == 0


def _ends_first(timer: Timer, firing) -> str:
    """A test kind in place 1, owned by a subscription: ends it before its mint fires."""
    Subscription.objects.filter(pk=timer.owner_id).update(state=Subscription.State.CANCELLED)
    return "ended the subscription"


def _orders_first(timer: Timer, firing) -> str:
    """A test kind in place 1, owned by a subject: orders its 2027 return before the mint."""
    subject = Subject.objects.get(pk=timer.owner_id)
    job = clocks.order(brand=firing.brand, service="annual-return", subject=subject,
                       period="2027", by="a test")
    return f"ordered {job.pk}"


kinds.register("test_ends_first", place=Place.CYCLE, describe=lambda timer: timer.key)(
    _ends_first)
kinds.register("test_orders_first", place=Place.CYCLE, describe=lambda timer: timer.key)(
    _orders_first)


def _arm_first(brand, kind: str, owner_id: str) -> None:
    arming.arm(brand=brand, kind=kind, key=f"{kind}:{owner_id}",
               owed=MINTED - timedelta(minutes=5), owner_type="test", owner_id=owner_id)


def _first_then_mint(actors, kind: str, owned_by) -> tuple:
    """Three clients minting; a `kind` timer owned by (`owned_by`) the first subscription's
    owner fires first in the batch. The brand, the first subscription, and what it said."""
    brand = subscribed(actors, "practice", 3)
    first, *others = Subscription.objects.filter(brand=brand).order_by("pk")
    _arm_first(brand, kind, owned_by(first))
    _tick()
    said = _minted(brand)
    assert all("annual →" in said[other.pk] for other in others)
    return brand, first, said[first.pk]


def test_a_subscription_an_earlier_timer_of_the_batch_changed_is_read_by_its_mint(actors):
    brand, ended, said = _first_then_mint(actors, "test_ends_first", lambda sub: sub.pk)
    assert "the subscription ended: nothing minted" in said
    assert not Job.objects.filter(subject=ended.subject, period="2027").exists()
    assert Job.objects.filter(brand=brand, period="2027").count() == 2


def test_a_period_an_earlier_order_of_the_batch_took_is_found_taken(actors):
    brand, taken, said = _first_then_mint(actors, "test_orders_first",
                                          lambda sub: sub.subject_id)
    assert "already held by a job: nothing minted" in said
    assert Job.objects.filter(subject=taken.subject, period="2027").count() == 1
    assert Job.objects.filter(brand=brand, period="2027").count() == 3


def test_a_postponement_made_inside_a_batch_moves_the_dates_its_later_orders_open(actors):
    # The batch reads the brand's postponements once; a delay's operation that adds one
    # says so (`in_progress.forget`), and the next order reads them again.
    brand = subscribed(actors, "practice", 2)
    first, second = Subject.objects.filter(brand=brand).order_by("pk")
    batch = Firing(brand=brand, test_clock=None, instant=MINTED, run=TickRun(id="tick_test"),
                   pass_no=1, first_seq=0)
    token = in_progress.enter(batch)
    try:
        with wallclock.fixed(MINTED):
            before = clocks.order(brand=brand, service="annual-return", subject=first,
                                  period="2027", by="a test")
            due = _federal(before)
            clocks.add_postponement(calendar=brand.calendar, from_date=due, through=due,
                                    to=due + timedelta(days=30), where={},
                                    notice="A storm closed the offices", by="a test")
            after = clocks.order(brand=brand, service="annual-return", subject=second,
                                 period="2027", by="a test")
    finally:
        in_progress.leave(token)
    assert _federal(after) == due + timedelta(days=30)


def _federal(job: Job):
    return Occurrence.objects.get(clock__job=job, clock__name="file", item="US").due
