"""The trace of a tick or an advance (SPEC S5), in UTC:

    tc_7Hq4 · 2028-02-01 14:00Z → 20:00Z · UTC · 4 fired · 52 armed · 1 held · 2 passes
      pass  owed               fired              place  kind      on              what
      1     2028-02-01 14:00Z  2028-02-01 14:00Z  2      schedule  sbn_7Hq2        annual …
              armed 1   2029-02-01 14:00Z  2  schedule  sbn_7Hq2   annual · period 2028

Timers armed by a firing are listed indented under it, grouped by owner and kind, with their
count and earliest owed time; held timers likewise. `on` limits the rows to timers whose owner
is one of the given ids, and to the timers their firings armed.

Nothing here gathers a trace in memory: a test clock's walk stores its lines as it goes and
they are read back a page at a time (`walk_lines`); the real tick's is written as each batch
is made (`Stream`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime

from timekeeping.models import TickRun, Timer, Walk, WalkLine
from timekeeping.timers import kinds
from timekeeping.timers.firing import TraceRow

COLUMNS = ("  pass  owed               fired              place  kind      on              "
           "what")


def at(instant: datetime | None) -> str:
    if instant is None:
        return "—"
    return instant.strftime("%Y-%m-%d %H:%M:%SZ" if instant.second else "%Y-%m-%d %H:%MZ")


def header(*, label: str, start: datetime, end: datetime, fired: int, armed: int, held: int,
           passes: int, failed: int = 0, runaway: bool = False, dropped: int = 0) -> str:
    end_text = at(end)
    if end.date() == start.date():
        end_text = end_text[len("YYYY-MM-DD "):]
    return f"{label} · {at(start)} → {end_text} · UTC · " + counted(
        fired=fired, armed=armed, held=held, passes=passes, failed=failed, runaway=runaway)


def counted(*, fired: int, armed: int, held: int, passes: int, failed: int = 0,
            runaway: bool = False, dropped: int = 0) -> str:
    """The figures a trace's header (or a clock's section of the real tick's) ends with;
    `dropped` is counted with the others but not printed (a dropped firing says so in its
    line)."""
    text = f"{fired} fired · {armed} armed · {held} held · {passes} passes"
    if failed:
        text += f" · {failed} failed"
    if runaway:
        text += " · RUNAWAY (stopped at 32 passes)"
    return text


FIGURES = ("fired", "failed", "dropped", "armed", "held")


def tally(figures: dict[str, int], *, outcome: str, armed: int, held: int) -> None:
    """Count one trace line (a firing, its outcome, what it armed and held) into `figures`,
    which holds FIGURES."""
    if outcome in ("fired", "failed", "dropped"):
        figures[outcome] += 1
    figures["armed"] += armed
    figures["held"] += held


def tally_rows(figures: dict[str, int], rows: Iterable[TraceRow]) -> None:
    for row in rows:
        tally(figures, outcome=row.outcome, armed=len(row.armed), held=held_count(row))


class Chosen:
    """Which lines `--on` shows: a timer whose owner is one of `on`, and the timers their
    firings armed (only those timers' ids are kept). Without `on`, every line."""

    def __init__(self, on: Iterable[str] | None):
        self.wanted = set(on or ())
        self.ids: set[str] = set()

    def __call__(self, *, owner: str, armed_by: str, timer: str, armed: Iterable[str]) -> bool:
        if not self.wanted:
            return True
        if owner in self.wanted or armed_by in self.ids:
            self.ids.add(timer)
            self.ids.update(armed)
            return True
        return False


def row_lines(row: TraceRow) -> list[str]:
    """A firing's line, and under it the lines of what it armed and held."""
    return [_row(row), *_armed_lines(row.armed),
            *(_held_line(timer, why) for timer, why in row.held)]


def held_count(row: TraceRow) -> int:
    return len(row.held) + (1 if row.outcome == "held" else 0)


class Stream:
    """The trace of a tick of the real clocks, written as it is made (issue 16): a `Tracer`
    for `tick.phases.run_once`, handed each batch's rows inside its transaction. A clock's rows come
    under a line naming it and the instant, and end with its figures (of the rows shown):

        bnd_4Kp2 real clock · 2026-12-01 09:00Z · UTC
          pass  owed               fired              place  kind      on              what
          1     2026-12-01 08:59Z  2026-12-01 09:00Z  5      delay     sbj_7Hq2        …
        bnd_4Kp2 real clock · 1 fired · 0 armed · 0 held · 1 passes

    A group of small clocks fires their first passes together, so a clock whose later
    passes follow another clock's rows has a second section. `on` as `--on`: the ids of the
    timers shown are kept, to show what their firings armed."""

    def __init__(self, write: Callable[[str], None], *, instant: datetime,
                 on: Iterable[str] | None = None):
        self.write, self.instant = write, instant
        self.chosen = Chosen(on)
        self.clock = ""
        self.figures = dict.fromkeys(FIGURES, 0)
        self.passes = 0

    def __call__(self, run: TickRun, rows: list[TraceRow]) -> None:
        shown = [row for row in rows if self.chosen(
            owner=row.timer.owner_id, armed_by=row.timer.armed_by, timer=row.timer.id,
            armed=(timer.id for timer in row.armed))]
        if not shown:
            return
        if run.brand_id != self.clock:
            self.end()
            self.clock = run.brand_id
            self.write(f"{self.clock} real clock · {at(self.instant)} · UTC")
            self.write(COLUMNS)
        for row in shown:
            for line in row_lines(row):
                self.write(line)
        tally_rows(self.figures, shown)
        self.passes = max(self.passes, *(row.pass_no for row in shown))

    def end(self) -> None:
        """The figures of the section written last (call it once the tick is over)."""
        if not self.clock:
            return
        self.write(f"{self.clock} real clock · " + counted(**self.figures, passes=self.passes))
        self.clock = ""
        self.figures, self.passes = dict.fromkeys(FIGURES, 0), 0


def walk_lines(walk: Walk, *, on: Iterable[str] | None = None,
               limit: int | None = None) -> Iterator[str]:
    """A test clock's walk as `tick --trace` prints it, read from its stored lines a page at
    a time (a walk of years keeps its trace in the database, not in memory), or its first
    `limit` lines. With `on`, the lines are read twice: once, without their text, to choose
    them and count them for the header (only the chosen timers' ids are kept), then for the
    text of those chosen."""
    label, end = walk.test_clock_id, walk.reached
    if on:
        chosen, figures = Chosen(on), dict.fromkeys(FIGURES, 0)
        for owner, armed_by, timer, armed, outcome, held in _lines(walk).values_list(
                "owner", "armed_by", "timer", "armed", "outcome", "held").iterator(
                chunk_size=2000):
            if chosen(owner=owner, armed_by=armed_by, timer=timer, armed=armed):
                tally(figures, outcome=outcome, armed=len(armed), held=held)
        yield header(label=label, start=walk.start, end=end, passes=walk.passes,
                     runaway=walk.runaway, **figures)
        yield COLUMNS
        shown = 0
        for timer, text in _lines(walk).values_list("timer", "text").iterator(chunk_size=2000):
            if timer in chosen.ids and (limit is None or shown < limit):
                shown += 1
                yield text
        return
    yield header(label=label, start=walk.start, end=end, fired=walk.fired, armed=walk.armed,
                 held=walk.held, passes=walk.passes, failed=walk.failed, runaway=walk.runaway)
    yield COLUMNS
    texts = _lines(walk).values_list("text", flat=True)
    yield from texts[:limit] if limit is not None else texts.iterator(chunk_size=2000)


def _lines(walk: Walk):
    return WalkLine.objects.filter(brand_id=walk.brand_id, walk=walk).order_by("seq")


def _row(row: TraceRow) -> str:
    timer = row.timer
    what = row.what
    if row.outcome != "fired":
        what = f"{row.outcome} · {what}"
    fired = at(row.fired) if row.outcome == "fired" else "—"
    return (f"  {row.pass_no:<5} {at(timer.owed):<18} {fired:<18} {timer.place:<6} "
            f"{timer.kind:<9} {timer.owner_id:<15} {what}")


def _armed_lines(armed: list[Timer]) -> list[str]:
    groups: dict[tuple[str, str, int], list[Timer]] = {}
    for timer in armed:
        groups.setdefault((timer.owner_id, timer.kind, timer.place), []).append(timer)
    lines = []
    for (owner, kind, place), timers in groups.items():
        first = min(timers, key=lambda timer: timer.owed)
        what = kinds.get(kind).describe(first)
        lines.append(f"          armed {len(timers):<3} {at(first.owed):<18} {place:<2} "
                     f"{kind:<9} {owner:<10} {what}")
    return lines


def _held_line(timer: Timer, why: str) -> str:
    return (f"          held  1   {'—':<18} {timer.place:<2} {timer.kind:<9} "
            f"{timer.owner_id:<10} {why}")
