"""The trace of a tick or an advance (SPEC S5), in UTC:

    tc_7Hq4 · 2028-02-01 14:00Z → 20:00Z · UTC · 4 fired · 52 armed · 1 held · 2 passes
      pass  owed               fired              place  kind      on              what
      1     2028-02-01 14:00Z  2028-02-01 14:00Z  2      schedule  sbn_7Hq2        annual …
              armed 1   2029-02-01 14:00Z  2  schedule  sbn_7Hq2   annual · period 2028

Timers armed by a firing are listed indented under it, grouped by owner and kind, with their
count and earliest owed time; held timers likewise. `on` limits the rows to timers whose owner
is one of the given ids, and to the timers their firings armed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime

from timekeeping import kinds
from timekeeping.firing import TraceRow
from timekeeping.models import Timer, Walk, WalkLine
from timekeeping.tick import ClockTick

COLUMNS = ("  pass  owed               fired              place  kind      on              "
           "what")


def at(instant: datetime | None) -> str:
    if instant is None:
        return "—"
    return instant.strftime("%Y-%m-%d %H:%M:%SZ" if instant.second else "%Y-%m-%d %H:%MZ")


def shown_rows(rows: list[TraceRow], on: Iterable[str] | None) -> list[TraceRow]:
    if not on:
        return rows
    wanted = set(on)
    shown_ids: set[str] = set()
    shown = []
    for row in rows:
        if row.timer.owner_id in wanted or row.timer.armed_by in shown_ids:
            shown.append(row)
            shown_ids.add(row.timer.id)
            shown_ids.update(timer.id for timer in row.armed)
    return shown


def header(*, label: str, start: datetime, end: datetime, fired: int, armed: int, held: int,
           passes: int, failed: int = 0, runaway: bool = False) -> str:
    end_text = at(end)
    if end.date() == start.date():
        end_text = end_text[len("YYYY-MM-DD "):]
    text = (f"{label} · {at(start)} → {end_text} · UTC · {fired} fired · {armed} armed · "
            f"{held} held · {passes} passes")
    if failed:
        text += f" · {failed} failed"
    if runaway:
        text += " · RUNAWAY (stopped at 32 passes)"
    return text


def row_lines(row: TraceRow) -> list[str]:
    """A firing's line, and under it the lines of what it armed and held."""
    return [_row(row), *_armed_lines(row.armed),
            *(_held_line(timer, why) for timer, why in row.held)]


def held_count(row: TraceRow) -> int:
    return len(row.held) + (1 if row.outcome == "held" else 0)


def render(ticked: ClockTick, *, label: str, start: datetime, end: datetime,
           on: Iterable[str] | None = None) -> str:
    rows = shown_rows(ticked.rows, on)
    lines = [header(label=label, start=start, end=end,
                    fired=sum(1 for row in rows if row.outcome == "fired"),
                    armed=sum(len(row.armed) for row in rows),
                    held=sum(held_count(row) for row in rows), passes=ticked.run.passes,
                    failed=sum(1 for row in rows if row.outcome == "failed"),
                    runaway=ticked.run.runaway), COLUMNS]
    for row in rows:
        lines.extend(row_lines(row))
    return "\n".join(lines)


def walk_lines(walk: Walk, *, on: Iterable[str] | None = None,
               limit: int | None = None) -> Iterator[str]:
    """A test clock's walk as `render` prints an advance, read from its stored lines a page
    at a time (a walk of years keeps its trace in the database, not in memory), or its
    first `limit` lines. With `on`, the chosen lines are gathered first, since the header
    counts only them."""
    label, end = walk.test_clock_id, walk.reached
    if on:
        wanted, shown_ids, chosen = set(on), set(), []
        for line in _lines(walk).iterator(chunk_size=2000):
            if line.owner in wanted or line.armed_by in shown_ids:
                chosen.append((line.outcome, len(line.armed), line.held, line.text))
                shown_ids.add(line.timer)
                shown_ids.update(line.armed)
        yield header(label=label, start=walk.start, end=end,
                     fired=sum(1 for line in chosen if line[0] == "fired"),
                     armed=sum(line[1] for line in chosen),
                     held=sum(line[2] for line in chosen), passes=walk.passes,
                     failed=sum(1 for line in chosen if line[0] == "failed"),
                     runaway=walk.runaway)
        yield COLUMNS
        yield from (line[3] for line in chosen)
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
