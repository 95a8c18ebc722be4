"""The tick: every owed timer fired once, in a fixed order (SPEC S4, DESIGN decision 4).

For each brand clock with armed timers owed by the tick's instant:

1. Take the clock's lease with one conditional UPDATE whose row count is checked, so a
   second tick process skips the clock and the clock's order holds. Exactly once does not
   rest on the lease: each batch locks its timers (FOR UPDATE SKIP LOCKED) and fires only
   those still armed, so even a tick that outlived its lease cannot fire a timer twice.
2. A pass selects the armed timers owed by the instant in tie order (owed, place, when the
   owner opened, key byte by byte) and fires them in batches of 1,000: one transaction per
   batch, the handlers first, then bulk writes (timers, records, deliveries). A handler that
   raises rolls the batch back, and the batch is redone with one savepoint per timer, so the
   failure is recorded (`timer.failed`) and undoes nothing else; the timer stays armed and is
   tried again at the next tick.
3. Timers armed during a pass and owed by the instant fire in the next pass; the passes repeat
   to a fixpoint. Past 32 passes the tick stops that clock, records `tick.runaway`, and puts an
   alarm for the brand's owner in the outbox.
4. The tick keeps a time budget (50 s by default); what it does not reach, the next tick does.
   A killed tick loses nothing: a firing and its effects commit together or not at all.

5. Each brand clock, each connection's minute of timed moves and each later phase runs in
   its own guard (`timekeeping.timers.faults`): a failure is recorded once per place, its brand's
   owner told once, and the rest of the tick goes on. Only a database that is gone stops it.

A `TickRun` row keeps what each tick of each clock did. Test clocks are ticked only by their
walks (`timekeeping.tick.test_clocks`), which walk each owed instant with this engine, in the
tick's walks phase.
"""

from __future__ import annotations

import json
import time
import traceback
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Generic, TypeVar

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, Exists, F, Min, OuterRef

from timekeeping.basics import instants, shown, wallclock
from timekeeping.digests import send as digests
from timekeeping.models import (
    Brand,
    Fault,
    Heartbeat,
    Record,
    ScheduleRun,
    TestClock,
    TickRun,
    Timer,
)
from timekeeping.moves import job as moves
from timekeeping.schedules import engine as schedules
from timekeeping.tick import housekeeping
from timekeeping.timers import leases, outbox, records
from timekeeping.timers.arming import clock_timers
from timekeeping.timers.faults import Faults, database_gone
from timekeeping.timers.firing import Firing, TraceRow, flush_all

MAX_PASSES = 32
BATCH_SIZE = 1000
DEFAULT_BUDGET = timedelta(seconds=50)
LEASE_MARGIN = timedelta(minutes=1)
TIE_ORDER = ("owed", "place", "owner_opened", "key")
# A clock with at most this many owed timers ticks in a group of small clocks, and a group
# holds at most a batch's worth of timers and this many clocks.
GROUP_OWED = 100
GROUP_CLOCKS = 500
# How many clocks, schedule runs, connections and walks a tick's result keeps to show; beyond
# it, only their count and figures (`Sample`).
SAMPLE = 100
# The tick lists the clocks owing timers this many brands at a time.
CLOCK_PAGE = 2000
# How late timers fired, in seconds: the upper bounds of the tick's histogram (/metrics), the
# last bucket unbounded.
LATE_BY_BOUNDS = (1, 5, 15, 30, 60, 120, 300, 900, 3600, 21600, 86400)
# What closing a clock's run writes.
CLOSING_FIELDS = ["instant", "finished", "passes", "fired", "armed", "held", "failed",
                  "dropped", "runaway", "unfinished"]


@dataclass
class Lateness:
    """How late fired timers fired: a count per bucket of `LATE_BY_BOUNDS` and the sum."""

    counts: list[int] = field(default_factory=lambda: [0] * (len(LATE_BY_BOUNDS) + 1))
    sum_s: float = 0.0

    def add(self, seconds: float) -> None:
        self.counts[bisect_left(LATE_BY_BOUNDS, seconds)] += 1
        self.sum_s += seconds

    def merge(self, other: Lateness) -> None:
        self.counts = [a + b for a, b in zip(self.counts, other.counts, strict=True)]
        self.sum_s += other.sum_s

    def as_dict(self) -> dict:
        return {"late_by": self.counts, "late_by_sum_s": self.sum_s}

    @classmethod
    def of(cls, counts: dict) -> Lateness:
        kept = counts.get("late_by")
        if not isinstance(kept, list) or len(kept) != len(LATE_BY_BOUNDS) + 1:
            return cls()  # none yet, or kept with other bounds: start again
        return cls(counts=[int(n) for n in kept], sum_s=float(counts.get("late_by_sum_s", 0)))


@dataclass
class ClockTick:
    """What one tick (or one advance) did on one brand clock: its run's figures, never its
    firings (a trace is handed on batch by batch as it is made, `Tracer`)."""

    run: TickRun
    start: datetime | None = None
    late_by: Lateness = field(default_factory=lambda: Lateness())


# Told each batch's trace rows, inside the batch's transaction, with the run of the clock
# they fired on: a trace is written as it is made, never gathered (issue 16).
Tracer = Callable[[TickRun, list[TraceRow]], None]


T = TypeVar("T")


class Sample(Generic[T]):
    """How many things a tick met, and the first SAMPLE of them: a tick's result is the same
    size whether it met ten clocks or a hundred thousand (DESIGN decision 4)."""

    def __init__(self, items: Iterable[T] = ()):
        self.items: list[T] = []
        self.count = 0
        self.extend(items)

    def add(self, item: T) -> None:
        self.count += 1
        if len(self.items) < SAMPLE:
            self.items.append(item)

    def extend(self, items: Iterable[T]) -> None:
        for item in items:
            self.add(item)

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __getitem__(self, index: int) -> T:
        return self.items[index]

    def __repr__(self) -> str:
        return f"Sample({self.count}, first {self.items!r})"


FIGURES = ("fired", "armed", "held", "failed", "dropped")


@dataclass
class TickResult:
    """What a tick did: counts, and bounded samples of the clocks, runs, connections and
    walks it met (`Sample`); nothing per timer."""

    instant: datetime
    clocks: Sample[ClockTick] = field(default_factory=Sample)
    totals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FIGURES, 0))
    passes_max: int = 0
    runaway: Sample[str] = field(default_factory=Sample)
    skipped: Sample[str] = field(default_factory=Sample)
    unreached: Sample[str] = field(default_factory=Sample)
    schedule_runs: Sample[ScheduleRun] = field(default_factory=Sample)
    schedule_skips: Sample[ScheduleRun] = field(default_factory=Sample)
    moves: Sample[moves.Minute] = field(default_factory=Sample)
    rows_moved: int = 0
    rows_set_aside: int = 0
    moves_unreached: Sample[str] = field(default_factory=Sample)
    walks: object | None = None  # test_clocks.WalksResult, when the walks phase ran
    digests: digests.Sent | None = None
    sweep: outbox.SweepResult | None = None
    housekeeping: housekeeping.Pass | None = None
    faults: list[Fault] = field(default_factory=list)
    lateness: Lateness = field(default_factory=Lateness)

    def add(self, ticked: ClockTick) -> None:
        """A clock's tick: its figures added in, the tick itself kept only in the sample."""
        self.clocks.add(ticked)
        for name in FIGURES:
            self.totals[name] += getattr(ticked.run, name)
        self.passes_max = max(self.passes_max, ticked.run.passes)
        if ticked.run.runaway:
            self.runaway.add(ticked.run.brand_id)
        self.lateness.merge(ticked.late_by)

    def add_minute(self, minute: moves.Minute) -> None:
        self.moves.add(minute)
        self.rows_moved += len(minute.moved)  # at most moves.CAP a minute
        self.rows_set_aside += minute.set_aside

    def total(self, name: str) -> int:
        return self.totals[name]

    def summary(self) -> str:
        parts = [
            f"tick {self.instant:%Y-%m-%d %H:%M:%SZ}",
            f"{len(self.clocks)} clock(s)",
            *(f"{self.total(name)} {name}" for name in FIGURES),
        ]
        if self.clocks:
            parts.append(f"{self.passes_max} pass(es) at most")
        if self.runaway:
            parts.append("RUNAWAY")
        if self.skipped:
            parts.append(f"{len(self.skipped)} skipped (leased by another tick)")
        if self.unreached:
            parts.append(f"{len(self.unreached)} left for the next tick (budget)")
        if self.schedule_runs or self.schedule_skips:
            parts.append(f"{len(self.schedule_runs)} schedule run(s), "
                         f"{len(self.schedule_skips)} skipped")
        if self.rows_moved or self.rows_set_aside:
            parts.append(f"{self.rows_moved} row(s) moved, {self.rows_set_aside} set aside")
        if self.moves_unreached:
            parts.append(f"{len(self.moves_unreached)} connection(s) left for the next tick "
                         "(budget)")
        parts += self.walk_parts()
        if self.digests is not None and self.digests.written:
            parts.append(f"{self.digests.written} digest(s) written")
        if self.sweep is not None:
            parts.append(f"outbox {self.sweep.sent} sent, {self.sweep.retried} retried, "
                         f"{self.sweep.failed} failed")
        if self.housekeeping is not None and self.housekeeping.deleted:
            parts.append("housekeeping deleted " + ", ".join(
                f"{count} {label}" for label, count in self.housekeeping.deleted.items()))
        if self.housekeeping is not None and self.housekeeping.months_made:
            parts.append("records' months made: " + ", ".join(self.housekeeping.months_made))
        if self.housekeeping is not None and self.housekeeping.months_dropped:
            parts.append("records' months dropped: " + ", ".join(
                self.housekeeping.months_dropped))
        parts += [f"FAILED {fault.phase} {fault.where}: {fault.error.splitlines()[0][:200]}"
                  for fault in self.faults]
        return " · ".join(parts)

    def as_dict(self) -> dict:
        """The tick as one structured log event (LOG_FORMAT=json): the figures of the summary,
        each under its own key, instants in UTC with Z. Lists of clocks, runs and walks are
        their first SAMPLE; the counts beside them say how many there were."""
        return {
            "event": "tick", "instant": instants.z(self.instant), "clocks": len(self.clocks),
            **{name: self.total(name) for name in FIGURES},
            "passes_max": self.passes_max,
            "runaway": list(self.runaway),
            "skipped": list(self.skipped), "skipped_count": len(self.skipped),
            "unreached": list(self.unreached), "unreached_count": len(self.unreached),
            "schedule_runs_count": len(self.schedule_runs),
            "schedule_skips_count": len(self.schedule_skips),
            "schedule_runs": [{"schedule": run.schedule.name, "due": instants.z(run.due),
                               "outcome": run.outcome, "reason": run.reason,
                               "items": run.items}
                              for run in [*self.schedule_runs, *self.schedule_skips]],
            "rows_moved": self.rows_moved, "rows_set_aside": self.rows_set_aside,
            "connections_unreached": list(self.moves_unreached),
            "connections_unreached_count": len(self.moves_unreached),
            "walks_count": len(self.walks.slices) if self.walks is not None else 0,
            "walks": [{"test_clock": done.walk.test_clock_id, "to": instants.z(done.walk.to),
                       "reached": instants.z(done.walk.reached), "instants": done.instants,
                       "done": done.done, "fired": done.ticked.run.fired}
                      for done in (self.walks.slices if self.walks is not None else [])],
            "digests_written": self.digests.written if self.digests is not None else 0,
            "outbox": ({"sent": self.sweep.sent, "retried": self.sweep.retried,
                        "failed": self.sweep.failed} if self.sweep is not None else None),
            "housekeeping_deleted": dict(self.housekeeping.deleted)
            if self.housekeeping is not None else {},
            "records_months_made": list(self.housekeeping.months_made)
            if self.housekeeping is not None else [],
            "records_months_dropped": list(self.housekeeping.months_dropped)
            if self.housekeeping is not None else [],
            "faults": [{"phase": fault.phase, "where": fault.where,
                        "error": fault.error.splitlines()[0][:200] if fault.error else ""}
                       for fault in self.faults],
        }

    def walk_parts(self) -> list[str]:
        if self.walks is None:
            return []
        parts = [f"walked {done.walk.test_clock_id} to {done.walk.reached:%Y-%m-%d %H:%M:%SZ}"
                 f" ({'done' if done.done else f'{done.walk.share:.0%}'}, "
                 f"{done.ticked.run.fired} fired)" for done in self.walks.slices]
        if self.walks.held:
            parts.append(f"{len(self.walks.held)} walk(s) held by another tick")
        return parts

    def report(self) -> list[str]:
        """What `manage.py tick` and `tick --loop` print: the summary and a line per schedule
        run, or with LOG_FORMAT=json one JSON object holding both."""
        if settings.LOG_FORMAT == "json":
            return [json.dumps(self.as_dict(), sort_keys=True)]
        return [self.summary(), *self.run_lines()]

    def run_lines(self) -> list[str]:
        """One line per schedule run or skip, for `tick --loop` and the demo's server."""
        lines = []
        for run in [*self.schedule_runs, *self.schedule_skips]:
            said = f" ({run.reason})" if run.reason else ""
            items = f", {run.items} item(s)" if run.items else ""
            lines.append(f"  schedule {run.schedule.name} due {run.due:%Y-%m-%d %H:%M:%SZ}: "
                         f"{run.outcome}{said}{items}")
        return lines


class Engine:
    """Fires the timers of one brand clock (the real one, or a test clock)."""

    def __init__(self, brand: Brand, test_clock: TestClock | None, *, holder: str,
                 deadline: float, batch_size: int = BATCH_SIZE, trace: Tracer | None = None):
        self.brand = brand
        self.test_clock = test_clock
        self.deadline = deadline
        self.batch_size = batch_size
        self.failed_ids: set[str] = set()
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
        owed = self._timers().filter(state=Timer.State.ARMED, owed__lte=by)
        if self.failed_ids:
            owed = owed.exclude(id__in=self.failed_ids)
        return owed.aggregate(first=Min("owed"))["first"]

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
        owed = self._timers().filter(state=Timer.State.ARMED, owed__lte=instant)
        if exclude:
            owed = owed.exclude(id__in=exclude)
        # SKIP LOCKED: timers another process holds are its to fire; we never wait on them.
        return list(owed.order_by(*TIE_ORDER).select_for_update(skip_locked=True)
                    [: self.batch_size])

    def _firing(self, instant: datetime, pass_no: int) -> Firing:
        return Firing(brand=self.brand, test_clock=self.test_clock, instant=instant,
                      run=self.run, pass_no=pass_no,
                      first_seq=self.run.fired + self.run.dropped + self.run.failed,
                      traced=self.trace is not None)

    def _fire_batch(self, instant: datetime, pass_no: int, armed_now: set[str]) -> int:
        exclude = self.failed_ids | armed_now
        try:
            with transaction.atomic():
                timers = self._select(instant, exclude)
                if not timers:
                    return 0
                batch = self._firing(instant, pass_no)
                for timer in timers:
                    batch.fire(timer)
                batch.flush()
                if self.trace is not None:
                    self.trace(self.run, batch.rows)
        except Exception:  # noqa: BLE001 - a handler's, or its writes': found and recorded below
            # A handler raised, or what it handed over could not be written (a record's data
            # that is not JSON, a delivery the database refuses): redo the batch one timer at
            # a time, so the culprit is recorded and the others fire.
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
                    with transaction.atomic():
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
        self.run.armed += len(batch.armed_log)
        self.run.held += len(batch.held_log) + len(batch.holding)
        for timer in batch.fired:
            self.late_by.add((batch.instant - timer.owed).total_seconds())

    def _failed(self, timer: Timer, error: Exception, instant: datetime, pass_no: int) -> str:
        message = records.error_text(error)
        Timer.objects.filter(pk=timer.pk).update(
            attempts=F("attempts") + 1,
            last_error="".join(traceback.format_exception(error))[-4000:].replace("\x00", "\\0"),
        )
        Record.objects.create(kind="timer.failed", instant=instant, brand=self.brand,
                              test_clock=self.test_clock, timer=timer.id,
                              data={"error": message, "pass": pass_no, "run": self.run.id})
        self.failed_ids.add(timer.id)
        self.run.failed += 1
        return message

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


def tick_clock(brand: Brand, *, instant: datetime, deadline: float, holder: str,
               batch_size: int = BATCH_SIZE, trace: Tracer | None = None) -> ClockTick | None:
    """One tick of a brand's real clock; None when another process holds its lease."""
    now = wallclock.wall_now()
    engine = Engine(brand, None, holder=holder, deadline=deadline, batch_size=batch_size,
                    trace=trace)
    # Taking the lease, marking a killed tick's runs abandoned and opening this run commit
    # together, and so do closing the run and giving the lease back: two commits of
    # bookkeeping a clock, around the firing's own (bench/brands.py).
    with transaction.atomic():
        _bookkeeping()
        if not leases.take(Brand, brand.pk, holder=holder, now=now,
                           until=_lease_end(now, deadline)):
            return None
        abandon_runs([brand.pk], now=now)
        engine.start(instant)
    return _fire_and_close(engine, instant)


def _fire_and_close(engine: Engine, instant: datetime, first_pass: int = 1) -> ClockTick:
    """Fire a clock whose lease this process holds and whose run is open, close its run and
    give its lease back."""
    brand, holder = engine.brand, engine.run.holder
    given_back = False
    try:
        with wallclock.fixed(instant):
            engine.fire_at(instant, first_pass)
        with transaction.atomic():
            _bookkeeping()
            ticked = engine.finish(instant)
            leases.give_back(Brand, brand.pk, holder=holder)
            given_back = True
        return ticked
    except Exception as error:
        engine.fail(error)
        raise
    finally:
        if not given_back:
            leases.give_back(Brand, brand.pk, holder=holder)


def close_runs(runs: list[TickRun]) -> None:
    """Write the closing figures of many runs in one statement. On PostgreSQL an UPDATE from
    arrays (one parameter per column; Django's bulk_update builds a CASE per run and field,
    which cost a group of 2,000 small clocks more than their firing); elsewhere bulk_update."""
    if not runs:
        return
    if connection.vendor != "postgresql":
        TickRun.objects.bulk_update(runs, fields=CLOSING_FIELDS)
        return
    table = connection.ops.quote_name(TickRun._meta.db_table)
    columns = [TickRun._meta.get_field(name).column for name in CLOSING_FIELDS]
    types = {"instant": "timestamptz", "finished": "timestamptz", "runaway": "boolean",
             "unfinished": "boolean"}
    sets = ", ".join(f"{connection.ops.quote_name(column)} = v.{connection.ops.quote_name(column)}"
                     for column in columns)
    arrays = ", ".join(f"unnest(%s::{types.get(name, 'integer')}[]) AS "
                       f"{connection.ops.quote_name(column)}"
                       for name, column in zip(CLOSING_FIELDS, columns, strict=True))
    key, brand = connection.ops.quote_name("id"), connection.ops.quote_name("brand_id")
    with connection.cursor() as cursor:
        # Each run found by its brand and id: on a database sharded by brand, the brands
        # named and the join on the brand send each run's row to its brand's shard.
        brands = sorted({run.brand_id for run in runs})
        cursor.execute(
            f"UPDATE {table} SET {sets} FROM (SELECT unnest(%s::text[]) AS id, "
            f"unnest(%s::text[]) AS brand_id, {arrays}) AS v "
            f"WHERE {table}.{brand} IN ({', '.join(['%s'] * len(brands))}) "
            f"AND {table}.{brand} = v.brand_id AND {table}.{key} = v.id",
            [[run.id for run in runs], [run.brand_id for run in runs],
             *([getattr(run, name) for run in runs] for name in CLOSING_FIELDS), *brands])


def _lease_end(now: datetime, deadline: float) -> datetime:
    return now + timedelta(seconds=max(0.0, deadline - time.monotonic())) + LEASE_MARGIN


class Group:
    """Small brand clocks ticked together, so what a clock costs does not grow with the
    number of brands (issue 14, "Many brands"): one commit takes all their leases, marks
    their killed runs abandoned and opens their runs; one transaction selects their owed
    timers in clock order (brand, then the tie order) and fires the first pass of every
    clock, writing all of them with one UPDATE and one COPY; one commit closes the runs and
    gives the leases back. A dozen round trips for a group, instead of ten for each clock.

    Each clock keeps its order (its timers fire in tie order, its later passes after its
    first) and still fails alone: when a handler raises or the group's writes fail, the
    group's firing is rolled back and each clock is fired on its own, as a large clock is,
    with a savepoint per timer in the batch that failed. A clock whose first pass armed
    timers owed by the instant fires its next passes on its own. A lease held by another
    process is skipped, and one a process that died here held is taken clock by clock; a
    clock another process fired since the tick listed it is let go without a run.
    """

    def __init__(self, brands: list[Brand], *, instant: datetime, deadline: float,
                 holder: str, faults: Faults, result: TickResult, batch_size: int,
                 trace: Tracer | None = None):
        self.brands = brands
        self.trace = trace
        self.instant = instant
        self.deadline = deadline
        self.holder = holder
        self.faults = faults
        self.result = result
        self.batch_size = batch_size
        self.engines: dict[str, Engine] = {}
        self.orphaned: list[Brand] = []  # leased by a process that died here

    def tick(self) -> None:
        try:
            self._open()
        except Exception:  # noqa: BLE001 - nothing committed: each clock ticks on its own
            if database_gone():
                raise
            self._alone(self.brands)
            return
        self._alone(self.orphaned)
        if not self.engines:
            return
        try:
            again, first_pass = self._first_pass(), 2
        except Exception:  # noqa: BLE001 - rolled back: each clock fires on its own
            if database_gone():
                raise
            again, first_pass = list(self.engines.values()), 1
        closed = [engine for engine in self.engines.values() if engine not in again]
        for engine in again:
            self._guarded(engine.brand, _fire_and_close, engine, self.instant, first_pass)
        self._close(closed)

    def _open(self) -> None:
        now = wallclock.wall_now()
        with transaction.atomic():
            _bookkeeping()
            taken = leases.take_many(Brand, [brand.pk for brand in self.brands],
                                     holder=self.holder, now=now,
                                     until=_lease_end(now, self.deadline))
            # A clock another tick process fired since this one listed it owes nothing now:
            # its lease goes straight back, and it gets no run.
            owing = set(real_owed(self.instant, brand_id__in=list(taken))
                        .values_list("brand_id", flat=True).distinct())
            # A lease not taken is another live process's (skipped: it keeps that clock's
            # order), or one a process that died here left, which is taken clock by clock.
            held = dict(Brand.objects.filter(
                pk__in=[brand.pk for brand in self.brands if brand.pk not in taken],
            ).values_list("pk", "lease_holder")) if len(taken) < len(self.brands) else {}
            orphaned = {pk for pk, holder in held.items() if leases.is_dead_here(holder)}
            let_go = taken - owing
            if let_go:
                leases.give_back_many(Brand, list(let_go), holder=self.holder)
            taken &= owing
            engines = {brand.pk: Engine(brand, None, holder=self.holder,
                                        deadline=self.deadline, batch_size=self.batch_size,
                                        trace=self.trace)
                       for brand in self.brands if brand.pk in taken}
            if engines:
                abandon_runs(list(taken), now=now)
                for engine in engines.values():
                    engine.run.instant = self.instant
                TickRun.objects.bulk_create([engine.run for engine in engines.values()])
        self.engines = engines
        self.orphaned = [brand for brand in self.brands if brand.pk in orphaned]
        self.result.skipped.extend(pk for pk in held if pk not in orphaned)

    def _first_pass(self) -> list[Engine]:
        """Fire the owed timers of every clock of the group, in clock order, in one
        transaction; the clocks whose first pass armed timers owed by the instant."""
        batches: list[tuple[Engine, Firing]] = []
        with wallclock.fixed(self.instant), transaction.atomic():
            owed = (real_owed(self.instant, brand_id__in=list(self.engines))
                    .order_by("brand_id", *TIE_ORDER).select_for_update(skip_locked=True))
            for timer in owed:
                engine = self.engines[timer.brand_id]
                if not batches or batches[-1][0] is not engine:
                    batches.append((engine, engine._firing(self.instant, 1)))
                timer.brand = engine.brand
                batches[-1][1].fire(timer)
            flush_all([batch for _, batch in batches])
            if self.trace is not None:
                for engine, batch in batches:
                    self.trace(engine.run, batch.rows)
        for engine in self.engines.values():
            engine.run.passes = 1
        owed_now: set[str] = set()
        for engine, batch in batches:
            engine._account(batch, owed_now)
        if not owed_now:
            return []
        owed_again = set(Timer.objects.filter(
            id__in=owed_now, state=Timer.State.ARMED, owed__lte=self.instant,
        ).values_list("brand_id", flat=True))
        return [engine for engine in self.engines.values() if engine.brand.pk in owed_again]

    def _close(self, engines: list[Engine]) -> None:
        """Close the runs of the clocks that fired in the group alone and give back every
        lease of the group still held, in one commit."""
        now = wallclock.wall_now()
        try:
            with transaction.atomic():
                _bookkeeping()
                for engine in engines:
                    engine.run.instant, engine.run.finished = self.instant, now
                close_runs([engine.run for engine in engines])
                leases.give_back_many(Brand, [engine.brand.pk for engine in engines],
                                      holder=self.holder)
        except Exception:  # noqa: BLE001 - closed clock by clock, each in its own guard
            if database_gone():
                raise
            for engine in engines:
                self._guarded(engine.brand, self._close_alone, engine)
            return
        for engine in engines:
            self.faults.succeeded(Fault.Phase.TIMERS, engine.brand.pk)
            self.result.add(ClockTick(run=engine.run, late_by=engine.late_by))

    def _close_alone(self, engine: Engine) -> ClockTick:
        with transaction.atomic():
            ticked = engine.finish(self.instant)
            leases.give_back(Brand, engine.brand.pk, holder=self.holder)
        return ticked

    def _alone(self, brands: list[Brand]) -> None:
        for brand in brands:
            self._guarded(brand, tick_clock, brand, instant=self.instant,
                          deadline=self.deadline, holder=self.holder,
                          batch_size=self.batch_size, trace=self.trace)

    def _guarded(self, brand: Brand, work, *args, **kwargs) -> None:
        guarded_clock(self.faults, self.result, brand, work, *args, **kwargs)


def guarded_clock(faults: Faults, result: TickResult, brand: Brand, work, *args,
                  **kwargs) -> None:
    """Work on one brand clock in its own guard: its tick goes on the result, or its skip
    (None: another process holds its lease)."""
    with faults.guard(Fault.Phase.TIMERS, where=brand.pk, brand=brand):
        ticked = work(*args, **kwargs)
        if ticked is None:
            result.skipped.add(brand.pk)
        else:
            result.add(ticked)


def _bookkeeping() -> None:
    """The transaction only keeps the tick's books (a lease, a run): on PostgreSQL its commit
    does not wait for the disk. Lost in a crash, a lease is free again and a run unfinished,
    which the next tick marks abandoned; what fired is committed by the firing's own,
    durable, transaction, which also flushes these."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


def abandon_runs(brand_ids: list[str], *, now: datetime,
                 test_clock: TestClock | None = None) -> int:
    """Runs of these clocks left unfinished by a tick that was killed. Called by the holder
    of the clocks' leases, so no live tick is running them."""
    return TickRun.objects.filter(brand_id__in=brand_ids, test_clock=test_clock,
                                  finished__isnull=True).update(finished=now,
                                                                error=housekeeping.ABANDONED)


def beat(instant: datetime, late_by: Lateness) -> None:
    """The tick passed: its heartbeat, and its firings added to the running histogram of how
    late timers fired (ticks at once add in turn, under the row's lock)."""
    with transaction.atomic():
        heartbeat, _ = Heartbeat.objects.select_for_update().get_or_create(name="tick")
        kept = Lateness.of(heartbeat.counts)
        kept.merge(late_by)
        heartbeat.at = instant
        heartbeat.counts = {**heartbeat.counts, **kept.as_dict()}
        heartbeat.save(update_fields=["at", "counts"])


def heartbeat() -> tuple[datetime | None, Lateness]:
    """When the last tick passed (None before the first), and the running histogram of how
    late the real clocks' timers fired."""
    at, counts = Heartbeat.objects.filter(name="tick").values_list("at", "counts").first() or (
        None, {})
    return at, Lateness.of(counts or {})


def last_tick() -> datetime | None:
    """When the last tick passed (its heartbeat), or None before the first."""
    return heartbeat()[0]


def real_owed(instant: datetime, **brand):
    """Armed timers of the real clocks owed by `instant`, of the brand(s) named first (the
    partial index `timer_armed_real` serves the brand, then the owed time)."""
    return Timer.objects.filter(**brand, test_clock__isnull=True, state=Timer.State.ARMED,
                                owed__lte=instant)


def owed_clocks(instant: datetime, brand_ids: list[str] | None = None, *, after: str = "",
                limit: int | None = None) -> list[Brand]:
    """Brands whose real clock has armed timers owed by `instant`, in brand order (those
    after `after`, at most `limit`), each with `owed`, how many. Two queries: the brands, by
    an index probe per brand on the armed timers' partial index (a probe stops at the first
    owed timer and learns to skip the entries of timers fired since, so an empty tick stays
    cheap however many are armed or were just fired); then, for those brands only, their
    owed timers counted."""
    owed = real_owed(instant, brand=OuterRef("pk"))
    brands = Brand.objects.filter(Exists(owed)).select_related("owner").order_by("pk")
    if brand_ids is not None:
        brands = brands.filter(pk__in=brand_ids)
    if after:
        brands = brands.filter(pk__gt=after)
    found = list(brands[:limit] if limit is not None else brands)
    if not found:
        return found
    counts = dict(real_owed(instant, brand_id__in=[brand.pk for brand in found])
                  .order_by().values("brand_id").annotate(n=Count("id"))
                  .values_list("brand_id", "n"))
    for brand in found:
        brand.owed = counts.get(brand.pk, 0)
    return found


def groups(brands: list[Brand]) -> tuple[list[list[Brand]], list[Brand]]:
    """The small clocks packed into groups, in brand order, and the large ones, which tick
    alone."""
    packed: list[list[Brand]] = []
    alone: list[Brand] = []
    owed = 0
    for brand in brands:
        if brand.owed > GROUP_OWED:
            alone.append(brand)
            continue
        if not packed or owed + brand.owed > BATCH_SIZE or len(packed[-1]) >= GROUP_CLOCKS:
            packed.append([])
            owed = 0
        packed[-1].append(brand)
        owed += brand.owed
    return packed, alone


def run_once(*, now: datetime | None = None, budget: timedelta = DEFAULT_BUDGET,
             brand_ids: list[str] | None = None, sweep: bool = True,
             batch_size: int = BATCH_SIZE, phases: bool = True,
             trace: Tracer | None = None) -> TickResult:
    """One tick (D2, J9), each phase while the budget lasts, each brand clock, connection and
    phase in its own guard (`timekeeping.timers.faults`):

    1. timers: every real brand clock with timers owed, a page of CLOCK_PAGE brands at a
       time, the small ones in groups (`Group`), then the large ones one by one;
    2. schedules: the due ones and those asked for by hand, side by side;
    3. timed moves: each connection's minute;
    4. test clocks' walks (`timekeeping.tick.test_clocks`), in slices;
    5. digests: each person's digest due, written to the outbox once per period
       (`timekeeping.digests.send`);
    6. the outbox sweep;
    7. runs whose lease expired, and housekeeping (at most hourly).

    It holds one batch of timers at a time (issue 16): the result keeps counts and bounded
    samples, and with `trace`, each batch's trace rows are handed to it as they are made.
    """
    instant = now or wallclock.wall_now()
    deadline = time.monotonic() + budget.total_seconds()
    holder = leases.holder_name()
    result = TickResult(instant=instant)
    faults = Faults(instant)
    after = ""
    while True:
        page = owed_clocks(instant, brand_ids, after=after, limit=CLOCK_PAGE)
        small, large = groups(page)
        for group in small:
            if time.monotonic() > deadline:
                result.unreached.extend(brand.pk for brand in group)
                continue
            Group(group, instant=instant, deadline=deadline, holder=holder, faults=faults,
                  result=result, batch_size=batch_size, trace=trace).tick()
        for brand in large:
            if time.monotonic() > deadline:
                result.unreached.add(brand.pk)
                continue
            guarded_clock(faults, result, brand, tick_clock, brand, instant=instant,
                          deadline=deadline, holder=holder, batch_size=batch_size, trace=trace)
        if len(page) < CLOCK_PAGE:
            break
        after = page[-1].pk
        if time.monotonic() > deadline:  # the rest are the next tick's: only counted
            rest = real_owed(instant, brand_id__gt=after).order_by("brand_id")
            if brand_ids is not None:
                rest = rest.filter(brand_id__in=brand_ids)
            result.unreached.extend(rest.values_list("brand_id", flat=True).distinct()
                                    .iterator())
            break
    if phases and time.monotonic() < deadline:
        with faults.guard(Fault.Phase.SCHEDULES, where="schedules"):
            done = schedules.run_due(now=instant, deadline=deadline, holder=holder)
            result.schedule_runs, result.schedule_skips = Sample(done.runs), Sample(done.skips)
    if phases and time.monotonic() < deadline:
        for link in moves.due_connections(now=instant):
            if time.monotonic() > deadline:  # its minute is the next tick's
                result.moves_unreached.add(link.pk)
                continue
            with faults.guard(Fault.Phase.MOVES, where=link.pk, brand=link.brand):
                result.add_minute(moves.run_connection(link, now=instant, holder=holder))
    if phases and time.monotonic() < deadline:
        result.walks = walk_test_clocks(faults, deadline=deadline, holder=holder,
                                        batch_size=batch_size)
    if phases and time.monotonic() < deadline:
        result.digests = send_digests(faults, instant, deadline)
    if sweep and time.monotonic() < deadline:
        with faults.guard(Fault.Phase.OUTBOX, where="outbox"):
            result.sweep = outbox.sweep()
    if phases and time.monotonic() < deadline:
        with faults.guard(Fault.Phase.HOUSEKEEPING, where="housekeeping"):
            schedules.expire_leases(now=instant)
            result.housekeeping = housekeeping.run(now=instant, holder=holder)
    if phases:
        beat(instant, result.lateness)
    result.faults = faults.raised
    return result


def send_digests(faults: Faults, instant: datetime, deadline: float) -> digests.Sent:
    """The digests phase: each digest in its own guard, its brand's owner told of a fault."""
    def guard(digest):
        return faults.guard(Fault.Phase.DIGESTS, where=digest.pk, brand=digest.brand)

    return digests.run_due(now=instant, deadline=deadline, guard=guard)


def walk_test_clocks(faults: Faults, *, deadline: float, holder: str,
                     batch_size: int = BATCH_SIZE):
    """The walks phase: test clocks' advances, each slice in its own guard."""
    from timekeeping.tick import test_clocks

    def guard(walk):
        return faults.guard(Fault.Phase.WALKS, where=walk.test_clock_id, brand=walk.brand)

    return test_clocks.run_waiting(deadline=deadline, holder=holder, batch_size=batch_size,
                                   guard=guard)


def preview(*, to: datetime, brand_ids: list[str] | None = None,
            trace: Tracer | None = None) -> TickResult:
    """The real clocks' timers at `to`, inside a transaction that is rolled back: what would
    fire. Sends nothing, runs no schedule."""
    with transaction.atomic():
        result = run_once(now=to, brand_ids=brand_ids, sweep=False, phases=False, trace=trace)
        transaction.set_rollback(True)
    return result
