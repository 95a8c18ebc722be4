"""What moved in a rehearsal, when and why, in the reader's words (issue 29):

    Order 1042 (Ines) cancelled at Fri 23 Oct 2026, 22:00 BST: still placed at closing time
    on the day of its pickup.

Read from the rehearsal's audit (`RowAudit` rows of its test clock): each timed move, with the
rule that made it (the table's one timed move from the state the row left, A2), and each
linked row an effect moved with it. The engine's words (the rule's number, the move) go in
`details`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from timekeeping.basics import shown
from timekeeping.models import RowAudit, TestClock
from timekeeping.moves.rows import Venue

MOST_SHOWN = 500  # lines read at once, the newest last


@dataclass(frozen=True)
class Moved:
    at: datetime
    table: str
    row: int
    kind: str  # "timed move" or "effect"
    from_state: str
    to: str
    said: str
    details: str


def lines(test_clock: TestClock, venue: Venue, *, limit: int = MOST_SHOWN) -> list[Moved]:
    """The rehearsal's moves, oldest first (at most `limit`, the latest of them)."""
    audit = list(RowAudit.objects.filter(
        brand_id=test_clock.brand_id, test_clock=test_clock, kind__in=["timed move", "effect"])
        .order_by("-at", "-id")[:limit])
    return [_line(venue, entry) for entry in reversed(audit)]


def _line(venue: Venue, entry: RowAudit) -> Moved:
    spec = venue.tables.get(entry.table)
    column = spec.states.column if spec and spec.states else "status"
    was, now = (entry.before or {}).get(column, ""), (entry.after or {}).get(column, "")
    when = shown.moment(entry.at, venue.zone)
    became = _became(now)
    thing = f"{_thing(entry.table)} {entry.row}{_label(entry.after or {}, spec)}"
    if entry.kind == "effect":
        said = f"{thing} {became} at {when}: {_cause(venue, entry)}."
        details = f"{entry.table}:{entry.row} · effect · {was} → {now}"
    else:
        rule = next((r for r in spec.states.timed if r.from_state == was), None) if spec \
            else None
        why = f"still {was} at {_reason(rule.at)}" if rule else f"still {was} when it was due"
        said = f"{thing} {became} at {when}: {why}."
        details = (f"{entry.table}:{entry.row} · timed move {rule.number if rule else '?'} · "
                   f"{was} → {now}")
    return Moved(entry.at, entry.table, entry.row, entry.kind, was, now, said, details)


def _became(state: str) -> str:
    """"cancelled"; "moved to no show"."""
    words = state.replace("_", " ")
    return words if words.endswith("ed") else f"moved to {words}"


def _thing(table: str) -> str:
    """A table's row, as people name it: orders → "Order", order_lines → "Order line"."""
    words = table.replace("_", " ")
    if words.endswith("s") and not words.endswith("ss"):
        words = words[:-1]
    return words[:1].upper() + words[1:]


def _human(column: str) -> str:
    for ending in ("_at", "_on"):
        if column.endswith(ending) and len(column) > len(ending):
            column = column[: -len(ending)]
    return column.replace("_", " ")


def _label(after: dict, spec) -> str:
    """The row's first text value (a customer, a holder, a guest), to name it by."""
    if spec is None:
        return ""
    for name, column in spec.columns.items():
        value = after.get(name)
        if column.type == "text" and isinstance(value, str) and value and (
                not spec.states or name != spec.states.column):
            return f" ({value[:60]})"
    return ""


def _reason(at: dict) -> str:
    """A timed move's moment in words: "closing time on the day of its pickup"."""
    base = f"its {_human(at['column'])}"
    time = at.get("time")
    if isinstance(time, str):
        said = f"{time} on the day of {base}"
    elif isinstance(time, dict) and "hours" in time:
        edge = "closing time" if time.get("edge") == "closes" else "opening time"
        said = f"{edge} on the day of {base}"
    elif isinstance(time, dict) and "table" in time:
        said = f"the {_human(time['column'])} time set in {time['table']}, on the day of {base}"
    elif isinstance(time, dict) and "column" in time:
        said = f"its {_human(time['column'])} on the day of {base}"
    else:
        said = base
    for key, word in (("plus", "after"), ("minus", "before")):
        if key in at:
            unit, amount = next(iter(at[key].items()))
            if isinstance(amount, dict):
                said = f"the {_human(amount['column'])} {unit} set in {amount['table']} " \
                       f"{word} {said}"
            else:
                said = f"{amount} {unit[:-1] if amount == 1 else unit} {word} {said}"
    return said


def _cause(venue: Venue, entry: RowAudit) -> str:
    """Why an effect moved a linked row: the row it links to entered a state."""
    for parent, raw in ((name, venue.raw_table(name)) for name in venue.tables):
        for effect in (raw.get("states") or {}).get("effects", []):
            if effect.get("table") == entry.table and effect.get("to") == \
                    (entry.after or {}).get(venue.tables[entry.table].states.column):
                link = (entry.after or {}).get(effect.get("link"))
                return f"its {_thing(parent).lower()} {link} was {effect.get('when')}"
    return "a row it links to moved"
