"""Test clocks (SPEC S5): a brand clock whose time moves only when it is advanced.

`advance` walks each owed instant in order up to `to`, setting the clock's time to it and
firing what is owed there (so `late_by` is zero), then leaves the clock at `to`. While it
runs the clock's status is `advancing`; one advance at a time (the clock's lease). A
`progress` callback hears after each instant walked how far the walk has come.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import router, transaction

from timekeeping import clock, leases
from timekeeping.models import Schedule, TestClock
from timekeeping.schedules import engine as schedules
from timekeeping.tick import BATCH_SIZE, ClockTick, Engine, abandon_runs

ADVANCE_LEASE = timedelta(hours=1)


class AdvanceRefused(Exception):
    """An advance that cannot start; `field` names what is wrong. Nothing was changed."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


@dataclass(frozen=True)
class Progress:
    """How far a walk has come: from `start` to `to`, at `reached`, `fired` timers so far."""

    start: datetime
    to: datetime
    reached: datetime
    fired: int

    @property
    def share(self) -> float:
        """The part of the walk's span behind it, 0 to 1."""
        span = (self.to - self.start).total_seconds()
        return 1.0 if span <= 0 else min(1.0, (self.reached - self.start).total_seconds() / span)


def create(*, brand, name: str, frozen_time: datetime) -> TestClock:
    if frozen_time.tzinfo is None:
        raise ValueError("frozen_time: give an aware instant")
    return TestClock.objects.create(brand=brand, name=name, frozen_time=frozen_time)


def advance(test_clock: TestClock, *, to: datetime, batch_size: int = BATCH_SIZE,
            progress: Callable[[Progress], None] | None = None) -> ClockTick:
    """Move `test_clock` forward to `to`, firing every owed timer at its own instant."""
    if to.tzinfo is None:
        raise AdvanceRefused("to", "give an aware instant (with Z or an offset)")
    if to < test_clock.frozen_time:
        raise AdvanceRefused(
            "to", f"{to:%Y-%m-%dT%H:%M:%SZ} is before the clock's time "
            f"{test_clock.frozen_time:%Y-%m-%dT%H:%M:%SZ}; a test clock only moves forward",
        )
    holder = leases.holder_name()
    now = clock.wall_now()
    if not leases.take(TestClock, test_clock.pk, holder=holder, now=now,
                       until=now + ADVANCE_LEASE,
                       extra={"status": TestClock.Status.ADVANCING}):
        raise AdvanceRefused("test_clock", f"{test_clock.pk} is being advanced already")
    start = test_clock.frozen_time
    engine = Engine(test_clock.brand, test_clock, holder=holder, deadline=math.inf,
                    batch_size=batch_size)
    try:
        abandon_runs([test_clock.brand_id], test_clock=test_clock, now=now)
        engine.start(start)
        # The brand's schedules run on this clock's time too: the first advance is the first
        # tick that sees them (J2), and each due time is walked like a timer's.
        schedules.sync(schedules.declared_for(test_clock.brand), brand=test_clock.brand,
                       test_clock=test_clock, now=start)
        heard = progress or (lambda _: None)
        _walk(engine, test_clock, to, holder,
              lambda reached: heard(Progress(start, to, reached, engine.run.fired)))
        _set_time(test_clock, to)
        heard(Progress(start, to, to, engine.run.fired))
        ticked = engine.finish(to)
    except BaseException as error:
        if isinstance(error, Exception):
            engine.fail(error)
        leases.give_back(TestClock, test_clock.pk, holder=holder,
                         extra={"status": TestClock.Status.INTERNAL_FAILURE})
        raise
    leases.give_back(TestClock, test_clock.pk, holder=holder,
                     extra={"status": TestClock.Status.READY})
    test_clock.status = TestClock.Status.READY
    ticked.start = start
    return ticked


def _walk(engine: Engine, test_clock: TestClock, to: datetime, holder: str,
          walked: Callable[[datetime], None]) -> None:
    last: tuple[datetime, int] | None = None
    schedule_steps = 0  # runs and skips taken: each moves a schedule's due time on
    rows = Schedule.objects.filter(test_clock=test_clock, active=True)
    while not engine.run.runaway:
        due = rows.filter(next_due__lte=to).order_by("next_due").values_list(
            "next_due", flat=True).first()
        owed = min((at for at in (engine.next_owed(to), due) if at is not None), default=None)
        if owed is None:
            return
        instant = max(owed, test_clock.frozen_time)
        progress = engine.run.fired + engine.run.failed + engine.run.dropped + schedule_steps
        if last == (instant, progress):
            return  # what is left at this instant is held by another process
        last = (instant, progress)
        _set_time(test_clock, instant)
        engine.fire_at(instant)
        claims, skips = schedules.claim_due(list(rows.all()), now=instant, holder=holder,
                                            lease_until=instant + ADVANCE_LEASE)
        schedules.run_inline(claims, tick=instant)
        schedule_steps += len(claims) + len(skips)
        walked(instant)


def _set_time(test_clock: TestClock, instant: datetime) -> None:
    TestClock.objects.filter(pk=test_clock.pk).update(frozen_time=instant)
    test_clock.frozen_time = instant


def preview(test_clock: TestClock, *, to: datetime) -> ClockTick:
    """An advance inside a transaction that is rolled back: what would fire by `to`. With a
    schedules store of its own (J6), its writes there are rolled back too."""
    store = router.db_for_write(Schedule)
    with transaction.atomic(), transaction.atomic(using=store):
        ticked = advance(test_clock, to=to)
        transaction.set_rollback(True)
        transaction.set_rollback(True, using=store)
    test_clock.refresh_from_db()
    return ticked
