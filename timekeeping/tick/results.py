"""What a tick did: a clock's tick (`ClockTick`), the tick's result (`TickResult`) with its
bounded samples (`Sample`), and the trace hook (`Tracer`)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, TypeVar

from django.conf import settings

from timekeeping.basics import instants
from timekeeping.digests import send as digests
from timekeeping.models import Fault, ScheduleRun, TickRun
from timekeeping.moves import job as moves
from timekeeping.tick import housekeeping
from timekeeping.timers import outbox
from timekeeping.timers.firing import TraceRow
from timekeeping.timers.heartbeat import Lateness

# How many clocks, schedule runs, connections and walks a tick's result keeps to show; beyond
# it, only their count and figures (`Sample`).
SAMPLE = 100


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
