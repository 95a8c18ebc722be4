"""The engine that fires one brand clock's timers (the real one, or a test clock): passes to a
fixpoint, batches of BATCH_SIZE in tie order, a failing batch redone timer by timer, a
runaway stopped past MAX_PASSES (steps 2 and 3 of `timekeeping.tick`)."""

from __future__ import annotations

import time
from contextlib import suppress
from datetime import datetime
from functools import cache

from django.conf import settings
from django.db import DatabaseError, router, transaction
from django.db.models import Min

from timekeeping.basics import compiled, riding, shown, wallclock
from timekeeping.models import Brand, Record, TestClock, TickRun, Timer
from timekeeping.tick.results import ClockTick, Tracer
from timekeeping.timers import outbox, parking, records
from timekeeping.timers.arming import clock_timers
from timekeeping.timers.firing import Firing, TraceRow
from timekeeping.timers.heartbeat import Lateness

MAX_PASSES = 32
BATCH_SIZE = 1000
TIE_ORDER = ("owed", "place", "owner_opened", "key")
# What closing a clock's run writes.
CLOSING_FIELDS = ["instant", "finished", "passes", "fired", "armed", "held", "failed",
                  "dropped", "runaway", "unfinished"]


def _owed(brand: Brand | str, test_clock: TestClock | str | None, by: datetime):
    """Armed timers of a brand clock owed by `by` whose next attempt (after a failure) has
    come."""
    return clock_timers(brand, test_clock).filter(state=Timer.State.ARMED, owed__lte=by).filter(
        parking.come(by))


def _batch(owed, size: int):
    """A batch of owed timers in tie order, each locked, those another process holds passed
    by (SKIP LOCKED: they are its to fire; we never wait on them)."""
    return owed.order_by(*TIE_ORDER).select_for_update(skip_locked=True)[:size]


@cache
def _batch_read(size: int) -> compiled.Read:
    """A batch's read, compiled once for a batch's size (issue 32: compiling it and making
    each `Timer` through the queryset cost the no-op tick 6 µs a timer)."""
    return compiled.Read(lambda brand, test_clock, by: _batch(_owed(brand, test_clock, by), size),
                         model=Timer)


class Engine:
    """Fires the timers of one brand clock (the real one, or a test clock)."""

    def __init__(self, brand: Brand, test_clock: TestClock | None, *, holder: str,
                 deadline: float, batch_size: int = BATCH_SIZE, trace: Tracer | None = None):
        self.brand = brand
        self.test_clock = test_clock
        self.deadline = deadline
        self.batch_size = batch_size
        # Told each batch's trace rows inside the batch's transaction (a test clock's walk
        # keeps its figures and trace there, so they commit with what fired); without it, no
        # trace rows are made.
        self.trace = trace
        self.late_by = Lateness()
        self.run = TickRun(brand=brand, test_clock=test_clock, holder=holder,
                           started=wallclock.wall_now())

    def start(self, instant: datetime) -> None:
        self.run.instant = instant
        self.run.save(force_insert=True)

    def finish(self, instant: datetime) -> ClockTick:
        self.run.instant = instant
        self.run.finished = wallclock.wall_now()
        self.run.save(update_fields=CLOSING_FIELDS)
        return ClockTick(run=self.run, late_by=self.late_by)

    def fail(self, error: Exception) -> None:
        """The clock's tick stopped on an error its batches could not isolate."""
        if self.run._state.adding:
            return  # it failed before its run was written
        self.run.error = records.error_text(error)
        self.run.finished = wallclock.wall_now()
        # The error being raised is what matters; a database that refuses this too (a broken
        # transaction) leaves the run to housekeeping, which marks it abandoned.
        with suppress(DatabaseError):
            self.run.save(update_fields=["error", "finished", "passes", "fired", "armed",
                                         "failed", "dropped", "runaway", "unfinished"])

    def _timers(self):
        return clock_timers(self.brand, self.test_clock)

    def next_owed(self, by: datetime) -> datetime | None:
        """The first instant by `by` at which a timer is due: owed, or retried after a
        failure (its next attempt, always after its owed)."""
        armed = self._timers().filter(state=Timer.State.ARMED, owed__lte=by)
        # Two reads each an index serves (the first owed in owed order; the few backing off
        # by their next attempt), not one over every armed timer (the least of a COALESCE).
        owed = armed.filter(next_attempt__isnull=True).aggregate(first=Min("owed"))["first"]
        retried = armed.filter(next_attempt__lte=by).aggregate(
            first=Min("next_attempt"))["first"]
        return min((due for due in (owed, retried) if due is not None), default=None)

    # -- passes ----------------------------------------------------------------------------

    def fire_at(self, instant: datetime, first_pass: int = 1) -> None:
        """Fire everything owed by `instant`, pass after pass, to a fixpoint (from
        `first_pass`, when a group of clocks fired the passes before it)."""
        for pass_no in range(first_pass, MAX_PASSES + 2):
            if pass_no > MAX_PASSES:
                self._runaway(instant)
                return
            self.run.passes = max(self.run.passes, pass_no)  # the deepest pass at any instant
            armed_now: set[str] = set()
            while True:
                if time.monotonic() > self.deadline:
                    self.run.unfinished = True
                    return
                # A short batch took every owed timer no other process holds: asking again
                # would find none (those it armed are this pass's, excluded until the next).
                if self._fire_batch(instant, pass_no, armed_now) < self.batch_size:
                    break
            # The fixpoint: nothing armed during this pass is owed by the instant.
            if not armed_now or not self._timers().filter(
                id__in=armed_now, state=Timer.State.ARMED, owed__lte=instant
            ).exists():
                return

    def _select(self, instant: datetime, exclude: set[str]) -> list[Timer]:
        if exclude:  # timers this pass armed: a statement of its own for each such batch
            owed = _owed(self.brand, self.test_clock, instant).exclude(id__in=exclude)
            return list(_batch(owed, self.batch_size))
        test_clock = self.test_clock.pk if self.test_clock is not None else None
        return _batch_read(self.batch_size)(brand=self.brand.pk, test_clock=test_clock,
                                            by=instant)

    def _firing(self, instant: datetime, pass_no: int) -> Firing:
        return Firing(brand=self.brand, test_clock=self.test_clock, instant=instant,
                      run=self.run, pass_no=pass_no,
                      first_seq=self.run.fired + self.run.dropped + self.run.failed,
                      traced=self.trace is not None)

    def _fire_batch(self, instant: datetime, pass_no: int, armed_now: set[str]) -> int:
        exclude = armed_now
        try:
            # What the batch's handlers park (`basics.riding`: a job's steps) rides in its
            # later statements, or is sent as the batch ends.
            with transaction.atomic(), riding.parked(router.db_for_write(Timer)):
                timers = self._select(instant, exclude)
                if not timers:
                    return 0
                batch = self._firing(instant, pass_no)
                batch.take_rows()  # its orders' new rows written with it (`timers.made`)
                batch.prepare(timers)
                for timer in timers:
                    batch.fire(timer)
                batch.flush()
                if self.trace is not None:
                    self.trace(self.run, batch.rows)
        except Exception:  # noqa: BLE001 - a handler's, or its writes': found and recorded below
            # A handler raised, or what it handed over could not be written (a record's data
            # that is not JSON, a delivery the database refuses, an order's job whose period
            # another took meanwhile), or a statement may have missed the new rows it held
            # (`RowsReadBack`): redo the batch one timer at a time, each order writing its rows
            # as it makes them, so the culprit is recorded and the others fire.
            return self._redo_one_by_one(instant, pass_no, exclude, armed_now)
        self._account(batch, armed_now)
        return len(timers)

    def _redo_one_by_one(self, instant: datetime, pass_no: int, exclude: set[str],
                         armed_now: set[str]) -> int:
        """A firing failed: redo the batch with a savepoint per timer, so the failure is
        recorded and the others fire."""
        rows: list[TraceRow] = []
        with transaction.atomic():
            timers = self._select(instant, exclude)
            for timer in timers:
                batch = self._firing(instant, pass_no)
                try:
                    with transaction.atomic(), riding.parked(router.db_for_write(Timer)):
                        batch.fire(timer)
                        batch.flush()
                except Exception as error:  # noqa: BLE001 - a handler's failure is recorded
                    message = self._failed(timer, error, instant, pass_no)
                    if self.trace is not None:
                        rows.append(TraceRow(pass_no, timer, None, what=message,
                                             outcome="failed"))
                    continue
                self._account(batch, armed_now)
                rows += batch.rows
            if self.trace is not None:
                self.trace(self.run, rows)
        return len(timers)

    def _account(self, batch: Firing, armed_now: set[str]) -> None:
        armed_now |= batch.owed_now
        self.run.fired += len(batch.fired)
        self.run.dropped += len(batch.dropped)
        self.run.armed += batch.armed_count
        self.run.held += batch.held_count + len(batch.holding)
        for late_s in batch.late_s:
            self.late_by.add(late_s)

    def _failed(self, timer: Timer, error: Exception, instant: datetime, pass_no: int) -> str:
        """A handler's failure, written on its timer (`timers.parking`): the index leaves it
        out until its next attempt, so the engine keeps nothing of it."""
        timer.brand, timer.test_clock = self.brand, self.test_clock  # read once, not per timer
        parking.failed(timer, error=error, instant=instant,
                       details={"pass": pass_no, "run": self.run.id})
        self.run.failed += 1
        return records.error_text(error)

    def _runaway(self, instant: datetime) -> None:
        self.run.runaway = True
        still_owed = self._timers().filter(state=Timer.State.ARMED, owed__lte=instant).count()
        Record.objects.create(
            kind="tick.runaway", instant=instant, brand=self.brand, test_clock=self.test_clock,
            data={"passes": MAX_PASSES, "run": self.run.id, "still_owed": still_owed},
        )
        owner = self.brand.owner
        if owner is not None and owner.email:
            outbox.enqueue_email(
                brand=self.brand, to=[owner.email], key=f"tick.runaway:{self.run.id}",
                subject=f"Keeping Time: scheduled work on {self.brand.name} ran away",
                body=(f"On {shown.moment(instant, self.brand.calendar_rules().zone_name)} "
                      f"scheduled work on {self.brand.name} kept starting more work, more "
                      f"than {MAX_PASSES} rounds deep, so Keeping Time stopped it. "
                      f"{still_owed} scheduled item(s) still wait. See your console:\n\n"
                      f"{settings.SITE_URL}/console/{self.brand.pk}/\n"),
            )
