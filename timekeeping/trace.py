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

from collections.abc import Iterable
from datetime import datetime

from timekeeping import kinds
from timekeeping.firing import TraceRow
from timekeeping.models import Timer
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


def render(ticked: ClockTick, *, label: str, start: datetime, end: datetime,
           on: Iterable[str] | None = None) -> str:
    rows = shown_rows(ticked.rows, on)
    fired = sum(1 for row in rows if row.outcome == "fired")
    armed = sum(len(row.armed) for row in rows)
    held = sum(len(row.held) for row in rows) + sum(1 for row in rows if row.outcome == "held")
    end_text = at(end)
    if end.date() == start.date():
        end_text = end_text[len("YYYY-MM-DD "):]
    header = (f"{label} · {at(start)} → {end_text} · UTC · {fired} fired · {armed} armed · "
              f"{held} held · {ticked.run.passes} passes")
    failed = sum(1 for row in rows if row.outcome == "failed")
    if failed:
        header += f" · {failed} failed"
    if ticked.run.runaway:
        header += " · RUNAWAY (stopped at 32 passes)"
    lines = [header, COLUMNS]
    for row in rows:
        lines.append(_row(row))
        lines.extend(_armed_lines(row.armed))
        lines.extend(_held_line(timer, why) for timer, why in row.held)
    return "\n".join(lines)


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
