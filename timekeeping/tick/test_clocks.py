"""Test clocks (SPEC S5): a brand clock whose time moves only when it is advanced.

An advance is a walk (`Walk`): asking for one (`request`) answers at once, with the clock
`advancing`; the tick walks it (`run_waiting`, a phase of `manage.py tick` and of the demo's
ticker) in slices. A slice takes the clock's lease, so two processes never walk one clock at
once, and walks instant by instant: it sets the clock's time to the instant, fires what is
owed there (so `late_by` is zero) in batches that each commit with their trace lines and the
walk's figures, then runs the schedules due. A killed slice loses at most the batch it was
in, which the next slice fires again; a timer fires once whoever walks it (each batch locks
its timers and fires only those still armed).

How a walk's ticks are spaced: it ticks at every instant a timer is owed, and for the
schedules at their due times, but never sooner than `step_s` after its last tick, where
`step_s` is the walk's span over WALK_TICKS (a day's walk or less: every due time of a
schedule of a minute or more). A schedule due between two ticks runs once, at the later
(J3: missed due times become one run). A walk ends with a tick at its target when a schedule
is due by then. A failing schedule backs off on the clock's own time, as on the real clock
(its waits count from the walk's tick, `schedules.parking`), and a parked one is due at no
instant of the walk. So a year of a one-minute schedule is about 1,440 ticks, not 525,600.

`advance` asks and walks in this process to the end: for the tick command, the demo's
set-up and tests.

A walk of years holds one batch at a time (issue 16): its trace goes to the database with
each batch (`WalkLine`), and a caller who wants the rows too is handed them batch by batch
(`trace`); nothing of a walk's firings is gathered in memory.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import DatabaseError, IntegrityError, connection, router, transaction
from django.db.models import F

from timekeeping.basics import inserted, instants, wallclock
from timekeeping.models import Schedule, ScheduleRun, TestClock, TickRun, Walk, WalkLine
from timekeeping.moves import rehearse
from timekeeping.schedules import engine as schedules
from timekeeping.tick import trace
from timekeeping.tick.clock import abandon_runs
from timekeeping.tick.engine import BATCH_SIZE, Engine
from timekeeping.tick.results import ClockTick, Sample, Tracer
from timekeeping.timers import leases, records

WALK_TICKS = 1440  # a walk ticks for schedules at most about this often (a day of minutes)
SLICE = timedelta(seconds=10)  # the longest slice of one walk before the next walk's turn
LEAST_SLICE = timedelta(milliseconds=50)  # the shortest
LEASE_MARGIN = timedelta(minutes=1)
INLINE_SLICE = timedelta(seconds=60)  # a slice of `advance` walked in this process
SCHEDULE_LEASE = timedelta(hours=1)  # a schedule run's lease, in the test clock's time
TRIES = 3  # slices in a row that fail before the walk is failed


class AdvanceRefused(Exception):
    """An advance that cannot start; `field` names what is wrong. Nothing was changed.
    `walking` is the walk already under way, when that is the reason."""

    def __init__(self, field: str, message: str, walking: Walk | None = None):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.walking = walking


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
        return instants.share(self.start, self.to, self.reached)


@dataclass
class Slice:
    """What one slice of a walk did."""

    walk: Walk
    ticked: ClockTick
    instants: int = 0
    done: bool = False


@dataclass
class WalksResult:
    """The walks phase of a tick: each slice walked, and the walks another process held."""

    slices: Sample[Slice] = field(default_factory=Sample)
    held: list[str] = field(default_factory=list)


def create(*, brand, name: str, frozen_time: datetime) -> TestClock:
    if frozen_time.tzinfo is None:
        raise ValueError("frozen_time: give an aware instant")
    return TestClock.objects.create(brand=brand, name=name, frozen_time=frozen_time)


def walking(test_clock: TestClock) -> Walk | None:
    return Walk.objects.filter(brand_id=test_clock.brand_id, test_clock=test_clock,
                               state=Walk.State.WALKING).first()


def latest(test_clock: TestClock) -> Walk | None:
    """The clock's latest walk; while it walks, `reached` is the clock's time as the caller
    read it (the walk's row is written when something fires, and at each slice's end)."""
    walk = Walk.objects.filter(brand_id=test_clock.brand_id, test_clock=test_clock).order_by(
        "-requested", "-pk").first()
    if walk is not None and walk.state == Walk.State.WALKING:
        walk.reached = max(walk.reached, test_clock.frozen_time)
    return walk


def request(test_clock: TestClock, *, to: datetime, by: str = "") -> Walk:
    """Ask for an advance to `to`: a walk the tick will take. Refused (AdvanceRefused) when
    `to` is naive or before the clock's time, or a walk is under way, naming its target."""
    if to.tzinfo is None:
        raise AdvanceRefused("to", "give an aware instant (with Z or an offset)")
    with transaction.atomic():
        # The clock's row lock orders two requests at once; the unique index is the backstop.
        current = TestClock.objects.select_for_update().get(pk=test_clock.pk)
        under_way = walking(current)
        if under_way is not None:
            raise _already(under_way)
        if to < current.frozen_time:
            raise AdvanceRefused(
                "to", f"{to:%Y-%m-%dT%H:%M:%SZ} is before the clock's time "
                f"{current.frozen_time:%Y-%m-%dT%H:%M:%SZ}; a test clock only moves forward")
        span = (to - current.frozen_time).total_seconds()
        try:
            with transaction.atomic():
                walk = Walk.objects.create(
                    brand_id=current.brand_id, test_clock=current, start=current.frozen_time,
                    to=to, reached=current.frozen_time, by=by[:200],
                    step_s=math.ceil(span / WALK_TICKS) if span > WALK_TICKS * 60 else 0)
        except IntegrityError:
            raise _already(walking(current)) from None
        TestClock.objects.filter(pk=current.pk).update(status=TestClock.Status.ADVANCING)
    test_clock.status = TestClock.Status.ADVANCING
    return walk


def _already(walk: Walk | None) -> AdvanceRefused:
    target = f" to {walk.to:%Y-%m-%dT%H:%M:%SZ}" if walk is not None else ""
    return AdvanceRefused("test_clock", f"it is advancing{target} already; an advance runs to "
                          "its end before the next is asked for", walking=walk)


def advance(test_clock: TestClock, *, to: datetime, batch_size: int = BATCH_SIZE,
            progress: Callable[[Progress], None] | None = None, by: str = "",
            trace: Tracer | None = None) -> ClockTick:
    """Ask for an advance and walk it here to the end, firing every owed timer at its own
    instant. With `trace`, each batch's trace rows are handed to it as they are made."""
    walk = request(test_clock, to=to, by=by)
    done = drive(walk, batch_size=batch_size, progress=progress, trace=trace)
    test_clock.refresh_from_db()
    return done


def drive(walk: Walk, *, batch_size: int = BATCH_SIZE,
          progress: Callable[[Progress], None] | None = None,
          trace: Tracer | None = None) -> ClockTick:
    """Walk `walk` in this process until it ends, slice after slice. While another process
    holds it, wait for that one (its progress is heard as it goes). A failure is raised."""
    holder = leases.holder_name()
    heard = progress or (lambda _: None)
    run, slices = None, 0
    while True:
        # Bounded slices, so a process killed here leaves a lease that soon runs out.
        done = walk_slice(walk, holder=holder,
                          deadline=time.monotonic() + INLINE_SLICE.total_seconds(),
                          batch_size=batch_size, progress=heard, trace=trace, inline=True)
        walk.refresh_from_db()
        if done is not None:
            run, slices = done.ticked.run, slices + 1
        if walk.state != Walk.State.WALKING:
            break
        if done is None:
            heard(Progress(walk.start, walk.to, walk.reached, walk.fired))
            time.sleep(0.2)  # another process walks it: wait for it, without a busy loop
    if walk.state == Walk.State.FAILED:
        raise WalkFailed(walk)
    heard(Progress(walk.start, walk.to, walk.to, walk.fired))
    if run is None or slices > 1:
        # Walked (at least partly) by another process: the figures are the walk's own.
        run = TickRun(brand_id=walk.brand_id, test_clock_id=walk.test_clock_id,
                      instant=walk.to, fired=walk.fired, armed=walk.armed, held=walk.held,
                      failed=walk.failed, dropped=walk.dropped, passes=walk.passes,
                      runaway=walk.runaway)
    return ClockTick(run=run, start=walk.start)


class WalkFailed(Exception):
    def __init__(self, walk: Walk):
        super().__init__(f"the walk of {walk.test_clock_id} to {walk.to:%Y-%m-%dT%H:%M:%SZ} "
                         f"failed: {walk.error}")
        self.walk = walk


def walk_slice(walk: Walk, *, holder: str, deadline: float, batch_size: int = BATCH_SIZE,
               progress: Callable[[Progress], None] | None = None, trace: Tracer | None = None,
               inline: bool = False, record_failure: bool = True) -> Slice | None:
    """One slice of `walk`, until it ends or `deadline` (time.monotonic) passes. None when
    another process holds the clock or the walk has ended. A failure is recorded on the walk
    (`_failed`) and raised; with `record_failure` false, the caller records it."""
    now = wallclock.wall_now()
    # However short the time left, a slice walks a little: the walk always comes on.
    deadline = max(deadline, time.monotonic() + LEAST_SLICE.total_seconds())
    test_clock = _take(walk, holder=holder, now=now, deadline=deadline)
    if test_clock is None:
        return None

    def noted(run: TickRun, rows: list) -> None:
        _note(walk, test_clock, rows)
        if trace is not None:
            trace(run, rows)

    engine = Engine(test_clock.brand, test_clock, holder=holder, deadline=deadline,
                    batch_size=batch_size, trace=noted)
    walked = Slice(walk=walk, ticked=ClockTick(run=engine.run))
    if walk.last_tick is not None:
        walk.last_tick = test_clock.frozen_time  # the last instant walked, killed or not
    try:
        with _unhurried():
            abandon_runs([test_clock.brand_id], test_clock=test_clock, now=now)
            _end_lost_runs(test_clock, now=now)
            engine.start(test_clock.frozen_time)
            _sync(walk, test_clock)
            # However long the slice's set-up took, its walk has its least time: the walk
            # always comes on, on a busy machine too.
            engine.deadline = max(engine.deadline,
                                  time.monotonic() + LEAST_SLICE.total_seconds())
            walked.done = _walk(engine, walk, test_clock, holder, walked, progress)
            if walked.done:
                _set_time(test_clock, walk.to)
            walked.ticked = engine.finish(test_clock.frozen_time)
            walked.ticked.start = walk.start
            walk.runaway = walk.runaway or engine.run.runaway
            _close(walk, test_clock)
    except Exception as error:
        engine.fail(error)
        if record_failure:
            _failed(walk, error, holder=holder, at_once=inline)
        raise
    _end_slice(walk, walked, test_clock, holder=holder)
    return walked


def _take(walk: Walk, *, holder: str, now: datetime, deadline: float) -> TestClock | None:
    """The walk's clock, its lease taken until the slice's deadline; None when another
    process holds it or the walk has ended."""
    left = timedelta(seconds=max(0.0, deadline - time.monotonic()))
    if not leases.take(TestClock, walk.test_clock_id, holder=holder, now=now,
                       until=now + left + LEASE_MARGIN):
        return None
    walk.refresh_from_db()
    test_clock = TestClock.objects.select_related("brand").get(pk=walk.test_clock_id)
    if walk.state != Walk.State.WALKING:
        leases.give_back(TestClock, test_clock.pk, holder=holder)
        return None
    return test_clock


def _sync(walk: Walk, test_clock: TestClock) -> None:
    """The walk's first slice puts the brand's schedules on the test clock."""
    if not walk.synced:
        # The brand's schedules run on this clock's time too: the walk's first tick
        # is the first tick that sees them (J2).
        schedules.sync(schedules.declared_for(test_clock.brand),
                       brand=test_clock.brand, test_clock=test_clock, now=walk.start)
        Walk.objects.filter(pk=walk.pk).update(synced=True)
        walk.synced = True


def _end_slice(walk: Walk, walked: Slice, test_clock: TestClock, *, holder: str) -> None:
    """A slice walked without error: counted on the walk, the walk done when it reached its
    target, and the clock's lease given back (the clock ready again when done)."""
    ended = {"state": Walk.State.DONE, "finished": wallclock.wall_now()} if walked.done else {}
    Walk.objects.filter(pk=walk.pk).update(slices=F("slices") + 1, tries=0, error="", **ended)
    if walked.done:
        walk.state, walk.finished = Walk.State.DONE, ended["finished"]
        leases.give_back(TestClock, walk.test_clock_id, holder=holder,
                         extra={"status": TestClock.Status.READY})
    else:
        leases.give_back(TestClock, test_clock.pk, holder=holder)


def _failed(walk: Walk, error: Exception, *, holder: str, at_once: bool) -> None:
    """A slice stopped on an error its batches could not isolate: tried again by the next
    slice, and failed for good after TRIES in a row (or at once, walked in a request)."""
    tries = walk.tries + 1
    ended = at_once or tries >= TRIES
    fields = {"tries": tries, "error": records.error_text(error)}
    if ended:
        fields.update(state=Walk.State.FAILED, finished=wallclock.wall_now())
    try:
        with transaction.atomic():
            Walk.objects.filter(pk=walk.pk).update(**fields)
            if ended:
                TestClock.objects.filter(pk=walk.test_clock_id).update(
                    status=TestClock.Status.INTERNAL_FAILURE)
    finally:
        leases.give_back(TestClock, walk.test_clock_id, holder=holder)


def _end_lost_runs(test_clock: TestClock, *, now: datetime) -> None:
    """Schedule runs of this clock still running: their slice was killed (this one holds the
    clock's lease, so no one else runs them). Failed, and their schedules freed."""
    lost = ScheduleRun.objects.filter(schedule__test_clock=test_clock,
                                      outcome=ScheduleRun.Outcome.RUNNING)
    for run in lost.select_related("schedule"):
        ScheduleRun.objects.filter(pk=run.pk, outcome=ScheduleRun.Outcome.RUNNING).update(
            outcome=ScheduleRun.Outcome.FAILED, reason="lease_expired", finished=now)
        Schedule.objects.filter(pk=run.schedule_id, lease_holder=run.holder).update(
            lease_holder="", lease_until=None)


def _walk(engine: Engine, walk: Walk, test_clock: TestClock, holder: str, walked: Slice,
          progress: Callable[[Progress], None] | None) -> bool:
    """Walk instant by instant until nothing is owed by the target (True), or the slice's
    time is up (False). At each instant: the clock's time; the firings, batch by batch, each
    committed with its trace lines and the walk's figures (`_note`, as the tick commits a
    batch with its effects); the rehearsal's timed moves (`moves.rehearse`: its rows move at
    the clock's time, as live rows move on the real clock); then the schedules' runs, in one
    transaction."""
    last: tuple[datetime, int] | None = None
    steps = 0  # schedule runs and skips, and rehearsal minutes: each moves a due time on
    # Not parked (issue 31): a parked schedule is due at no instant, so the walk neither
    # stops at its old due time nor mistakes it, never taken, for work another process holds.
    active = Schedule.objects.filter(test_clock=test_clock, active=True, parked__isnull=True)
    rehearsal = rehearse.of(test_clock)
    to = walk.to
    while not engine.run.runaway:
        if walked.instants and time.monotonic() > engine.deadline:
            return False
        rows, due = _schedules_due(active, walk, test_clock)
        timer_owed = engine.next_owed(to)
        rows_owed = (rehearse.next_due(rehearsal, now=test_clock.frozen_time, until=to)
                     if rehearsal is not None else None)
        owed = min((at for at in (timer_owed, due, rows_owed) if at is not None), default=None)
        if owed is None:
            return True
        instant = max(owed, test_clock.frozen_time)
        moved = engine.run.fired + engine.run.failed + engine.run.dropped + steps
        if last == (instant, moved):
            return True  # what is left at this instant is held by another process
        last = (instant, moved)
        fires = timer_owed is not None and timer_owed <= instant
        if fires:
            # Its time first (a handler reads it), then the firings, each batch committed
            # with its trace lines and the walk's figures (`_note`).
            _set_time(test_clock, instant)
            engine.fire_at(instant)
            if engine.run.unfinished:
                return False  # the slice's time ran out inside this instant: the next goes on
        if rows_owed is not None and rows_owed <= instant:
            _set_time(test_clock, instant)
            rehearse.run(rehearsal, now=instant)  # each move its own transaction (A7)
            steps += 1
        with transaction.atomic():
            if test_clock.frozen_time != instant:
                _set_time(test_clock, instant)
            claims, skips = schedules.claim_due(rows, now=instant, holder=holder,
                                                lease_until=instant + SCHEDULE_LEASE)
            schedules.run_inline(claims, tick=instant)
            steps += len(claims) + len(skips)
            _ticked(walk, instant)
        walked.instants += 1
        if progress is not None:
            progress(Progress(walk.start, to, instant, walk.fired))
    return True


def _schedules_due(active, walk: Walk, test_clock: TestClock) -> tuple[list, datetime | None]:
    """The clock's active schedules, read again (each run moves its due time), and the next
    instant a schedule is due by the walk's target, spaced `step_s` from the last tick."""
    rows = list(active.all())
    for row in rows:  # known here: spare each run two reads
        row.brand, row.test_clock = test_clock.brand, test_clock
    due = min((row.next_due for row in rows
               if row.next_due is not None and row.next_due <= walk.to), default=None)
    if due is not None and walk.last_tick is not None:
        due = min(max(due, walk.last_tick + timedelta(seconds=walk.step_s)), walk.to)
    return rows, due


def _note(walk: Walk, test_clock: TestClock, new_rows: list) -> None:
    """A batch's trace lines and the walk's figures, in the batch's own transaction."""
    if not new_rows:
        return
    first = walk.line_count
    inserted.insert([
        WalkLine.fresh(brand_id=walk.brand_id, walk=walk, seq=first + n, timer=row.timer.id,
                       owner=row.timer.owner_id, armed_by=row.timer.armed_by or "",
                       armed=[t.id for t in row.armed], outcome=row.outcome,
                       held=trace.held_count(row), text="\n".join(trace.row_lines(row)))
        for n, row in enumerate(new_rows)])
    counts = dict.fromkeys(trace.FIGURES, 0)
    trace.tally_rows(counts, new_rows)
    counts["line_count"] = len(new_rows)
    for name, n in counts.items():
        setattr(walk, name, getattr(walk, name) + n)
    walk.passes = max(walk.passes, *(row.pass_no for row in new_rows))
    walk.reached = walk.last_tick = test_clock.frozen_time
    Walk.objects.filter(pk=walk.pk).update(
        reached=walk.reached, last_tick=walk.reached, passes=walk.passes,
        **{name: F(name) + n for name, n in counts.items() if n})


def _ticked(walk: Walk, instant: datetime) -> None:
    """The walk ticked at `instant`: written at its first tick (so a resumed walk spaces its
    ticks from the last); later, the clock's time says it, and the slice's end writes it."""
    first = walk.last_tick is None
    walk.reached = walk.last_tick = instant
    if first:
        Walk.objects.filter(pk=walk.pk).update(reached=instant, last_tick=instant)


def _close(walk: Walk, test_clock: TestClock) -> None:
    """The slice's end: where the walk has come, and its schedules' runs so far (counted,
    so a killed slice's runs count too)."""
    runs = ScheduleRun.objects.filter(schedule__test_clock=test_clock, by_hand=False,
                                      tick__gt=walk.start, tick__lte=test_clock.frozen_time)
    walk.schedule_runs = runs.exclude(outcome=ScheduleRun.Outcome.SKIPPED).count()
    walk.reached = test_clock.frozen_time
    Walk.objects.filter(pk=walk.pk).update(
        reached=walk.reached, schedule_runs=walk.schedule_runs, runaway=walk.runaway,
        last_tick=walk.last_tick and test_clock.frozen_time)


@contextmanager
def _unhurried():
    """A slice's commits do not wait for the disk (PostgreSQL): a test clock's walk, not a
    real clock's. A crash of the database server may lose the last instants committed; each
    is whole (its firings, their effects and the walk's figures) or absent, and the walk
    walks it again."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit TO OFF")
    try:
        yield
    finally:
        if connection.connection is not None and not connection.needs_rollback:
            with suppress(DatabaseError), connection.cursor() as cursor:
                cursor.execute("RESET synchronous_commit")


def _set_time(test_clock: TestClock, instant: datetime) -> None:
    TestClock.objects.filter(pk=test_clock.pk).update(frozen_time=instant)
    test_clock.frozen_time = instant


def run_waiting(*, deadline: float, holder: str, batch_size: int = BATCH_SIZE,
                guard=None) -> WalksResult:
    """The walks phase of a tick: each walking walk, oldest first, a slice of at most SLICE
    at a time, round after round until none is left or `deadline` passes. `guard(walk)` is
    a context manager that records a slice's failure and lets the others go on."""
    result = WalksResult()
    held: set[str] = set()
    while time.monotonic() < deadline:
        waiting = [walk for walk in Walk.objects.filter(state=Walk.State.WALKING)
                   .select_related("brand").order_by("requested", "pk")
                   if walk.pk not in held]
        if not waiting:
            break
        for walk in waiting:
            if time.monotonic() >= deadline:
                break
            until = min(deadline, time.monotonic() + SLICE.total_seconds())
            done, raised = None, None
            with guard(walk) if guard is not None else nullcontext():
                try:
                    done = walk_slice(walk, holder=holder, deadline=until,
                                      batch_size=batch_size, record_failure=guard is None)
                except Exception as error:
                    raised = error
                    raise
            if raised is not None:
                # Recorded once the guard has undone the slice's own writes.
                _failed(walk, raised, holder=holder, at_once=False)
            if done is None:
                held.add(walk.pk)  # another process walks it, or it failed: not this tick
                if raised is None and walk.state == Walk.State.WALKING:
                    result.held.append(walk.pk)
                continue
            result.slices.add(done)
            if not done.done and not done.instants:
                held.add(walk.pk)  # it could not come on (its first instant is too long)
    return result


def any_waiting() -> bool:
    return Walk.objects.filter(state=Walk.State.WALKING).exists()


def preview(test_clock: TestClock, *, to: datetime,
            lines: Callable[[str], None] | None = None,
            on: Iterable[str] | None = None) -> ClockTick:
    """An advance inside a transaction that is rolled back: what would fire by `to`, and
    with `lines`, its trace told line by line (`trace.walk_lines`, `on` as there) before the
    rollback. With a schedules store of its own (J6), its writes there are rolled back too."""
    store = router.db_for_write(Schedule)
    with transaction.atomic(), transaction.atomic(using=store):
        walk = request(test_clock, to=to)
        ticked = drive(walk)  # it reads the walk again as it goes: its figures are current
        if lines is not None:
            for line in trace.walk_lines(walk, on=on):
                lines(line)
        transaction.set_rollback(True)
        transaction.set_rollback(True, using=store)
    test_clock.refresh_from_db()
    return ticked
