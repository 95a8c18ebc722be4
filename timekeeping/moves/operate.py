"""What operators see of a connection's timed moves: the backlog, the rows set aside, and a
preview of what will move in the next hours and why (A6-A8)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from timekeeping.models import Brand, Connection, SetAside
from timekeeping.moves import job
from timekeeping.moves.rows import Venue

SCAN = 100_000

# What else a preview says a row's move would set off: the wiring adds each teller (the
# brand's automations, `timekeeping.automations.words.previewed`). A teller gets the brand,
# the table and the state the row would enter, and answers sentences.
Teller = Callable[[Brand, str, str], list[str]]
_tellers: list[Teller] = []


def tell_with(teller: Teller) -> None:
    """Add a teller of what a previewed move sets off (once: adding one twice is a no-op)."""
    if teller not in _tellers:
        _tellers.append(teller)


@dataclass(frozen=True)
class Backlog:
    table: str
    rule: int
    move: str
    due: int
    oldest: datetime | None


def backlog(link: Connection, *, now: datetime, venue: Venue | None = None) -> list[Backlog]:
    """Per timed move, the rows due and not yet moved; of `venue` when given (a test clock's
    rehearsal, at its time), else of the live tables."""
    venue = venue or Venue.of(link)
    found = job.candidates(venue, now, SCAN)
    lines = []
    for name, table in venue.tables.items():
        for rule in table.states.timed if table.states else ():
            mine = [due for due in found if due.table == name and due.rule.number == rule.number]
            lines.append(Backlog(name, rule.number, f"{rule.from_state} → {rule.to}", len(mine),
                                 min((due.moment for due in mine), default=None)))
    return lines


def set_aside(link: Connection, *, now: datetime) -> list[SetAside]:
    return list(SetAside.objects.filter(brand_id=link.brand_id, connection=link,
                                        test_clock__isnull=True,
                                        until__gt=now).order_by("until"))


def preview(link: Connection, *, now: datetime, hours: int,
            venue: Venue | None = None) -> list[str]:
    """What will move in the next `hours`, in order, one line per row: its rule, its moment,
    and what the move would set off (the tellers'); of `venue` when given, as `backlog`."""
    venue = venue or Venue.of(link)
    until = now + timedelta(hours=hours)
    lines: list[str] = []
    told: dict[tuple[str, str], list[str]] = {}  # asked once per table and state
    for due in job.candidates(venue, until, SCAN):
        if due.moment <= now:
            continue
        at = due.rule.at
        entered = (due.table, due.rule.to)
        if entered not in told:
            told[entered] = [said for teller in _tellers
                             for said in teller(link.brand, *entered)]
        lines.append(f"{due.moment:%Y-%m-%d %H:%M}Z  {due.table} #{due.pk}  "
                     f"{due.rule.from_state} → {due.rule.to}  (timed move {due.rule.number}: "
                     f"{_said(at)})" + "".join(f"; {said}" for said in told[entered]))
    return lines


def _said(at: dict) -> str:
    text = at["column"]
    time = at.get("time")
    if isinstance(time, str):
        text += f" at {time}"
    elif isinstance(time, dict) and "hours" in time:
        text += f" at the {'closing' if time.get('edge') == 'closes' else 'opening'} hour"
    elif isinstance(time, dict) and "table" in time:
        text += f" at {time['table']}.{time['column']}"
    for key in ("plus", "minus"):
        if key in at:
            unit, amount = next(iter(at[key].items()))
            amount = f"{amount['table']}.{amount['column']}" if isinstance(amount, dict) \
                else amount
            text += f" {key} {amount} {unit}"
    return text
