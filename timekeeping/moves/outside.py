"""A brand's tables and the systems outside that know the truth of their rows: two steps for
pulses (`timekeeping.schedules.pulses`) to take over a brand's manifest tables (SPEC T3, T5, T6):

- `reconcile` sets a copy to the truth outside (a warehouse's counts, a provider's statuses):
  each line the outside system answered is written to the row it names, unless that row was
  changed here within a grace period (the outside system may not have heard of the change yet,
  and "correcting" it would undo it) or already holds those values.
- `revive` finds work that stopped: rows still in a state whose last change is older than an
  age. It asks the outside system about each (the `ask` callable) before it moves anything, and
  moves the row only where the answer names a move; silence is not a failure.

Both select by state and by what is on the rows, never by the time since the last pulse, so a
missed pulse costs a delay and the next one does its work; both take a bounded step (`limit`
rows) and leave the rest to the next pulse; and both decide through the tables' own writes
(`rows.update`, `rows.move`): checked, locked NOWAIT, audited, with their effects. Running
either twice, or two at once, changes nothing more than once: the second write finds the row
already set or moved.

A pulse calls them (docs/schedules.md, "Pulses over a brand's tables").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Max

from timekeeping.models import RowAudit
from timekeeping.moves.rows import MoveRefused, Venue, move, update
from timekeeping.moves.values import ValuesInvalid, clean

LIMIT = 1000
MAX_LIMIT = 10_000


class PulseRefused(ValueError):
    """The pulse was called wrongly (a table or column the venue does not have, a limit out of
    range): nothing was read or written."""


@dataclass
class Reconciled:
    set: list[int] = field(default_factory=list)  # rows written to the truth
    same: int = 0  # rows that already held it
    fresh: list[int] = field(default_factory=list)  # changed here within the grace: skipped
    missing: list = field(default_factory=list)  # keys of lines no row has
    refused: dict = field(default_factory=dict)  # key: why the write was refused
    left: int = 0  # lines past the limit, for the next pulse


@dataclass
class Revived:
    asked: int = 0
    moved: list[tuple[int, str]] = field(default_factory=list)  # (row, to)
    left_alone: list[int] = field(default_factory=list)  # the answer named no move
    refused: dict = field(default_factory=dict)  # row: why the move was refused


def reconcile(venue: Venue, table: str, truth: Iterable[dict], *, key: str, now: datetime,
              grace: timedelta, who: str = "reconcile", limit: int = LIMIT) -> Reconciled:
    """Set the rows of `table` to `truth`: lines of `{key: value, column: value, …}`, each
    naming its row by the `key` column. Rows changed here (any audited write) within `grace`
    before `now` are skipped; so are rows already holding the line's values. Each write is
    `rows.update` (the columns a writer may write, checked; audited as an update by `who`); a
    refusal is reported by key and changes nothing on that row."""
    spec = _table(venue, table)
    _limit(limit)
    if key != "id" and key not in spec.columns:
        raise PulseRefused(f"key: {table} has no column {key!r}")
    if grace < timedelta(0):
        raise PulseRefused("grace: must not be negative")
    lines = list(truth)
    result = Reconciled(left=max(0, len(lines) - limit))
    lines = lines[:limit]
    model = venue.model(table)
    db = venue.link.database
    wanted = [line.get(key) for line in lines]
    rows = {getattr(row, key): row for row in model.objects.using(db).filter(
        **{f"{key}__in": [value for value in wanted if value is not None]})}
    changed = _last_changed(venue, table, [row.pk for row in rows.values()])
    raw = venue.raw_table(table)
    for line in lines:
        name = line.get(key)
        row = rows.get(name)
        if row is None:
            result.missing.append(name)
            continue
        values = {column: value for column, value in line.items() if column != key}
        try:
            converted = clean(spec, raw, values)
        except ValuesInvalid as invalid:
            result.refused[name] = str(invalid)
            continue
        if all(getattr(row, column) == value for column, value in converted.items()):
            result.same += 1
            continue
        last = changed.get(row.pk)
        if last is not None and last > now - grace:
            result.fresh.append(row.pk)
            continue
        try:
            update(venue, table, row.pk, values, who=who, at=now)
        except (MoveRefused, ValuesInvalid) as refused:
            result.refused[name] = str(refused)
            continue
        result.set.append(row.pk)
    return result


def revive(venue: Venue, table: str, *, state: str, older_than: timedelta, now: datetime,
           ask: Callable[[object], str | None], who: str = "revive",
           limit: int = 100) -> Revived:
    """Rows of `table` still in `state` and unchanged for `older_than` (their last audited
    change, or never changed here), oldest first, at most `limit`: for each, `ask(row)` asks
    the outside system and answers the state to move the row to, or None to leave it alone.
    The move is `rows.move` by `who`, judged under the row's lock as a person's is: a row that
    left `state` meanwhile, or a move the table does not list, is refused and reported."""
    spec = _table(venue, table)
    _limit(limit)
    if not spec.states:
        raise PulseRefused(f"table: {table} keeps no states")
    if state not in _states(spec.states):
        raise PulseRefused(f"state: {table} has no state {state!r}")
    if older_than <= timedelta(0):
        raise PulseRefused("older_than: must be positive")
    model = venue.model(table)
    db = venue.link.database
    candidates = model.objects.using(db).filter(**{spec.states.column: state}).order_by("pk")
    result = Revived()  # every row asked ends moved, left alone or refused
    start = 0
    while result.asked < limit:
        chunk = list(candidates[start:start + limit])
        if not chunk:
            break
        start += limit
        changed = _last_changed(venue, table, [row.pk for row in chunk])
        stopped = [row for row in chunk
                   if changed.get(row.pk) is None or changed[row.pk] <= now - older_than]
        for row in stopped[:limit - result.asked]:
            result.asked += 1
            to = ask(row)
            if to is None:
                result.left_alone.append(row.pk)
                continue
            try:
                move(venue, table, row.pk, to, who=who, at=now, seen=state)
            except MoveRefused as refused:
                result.refused[row.pk] = f"{refused.code}: {refused.message}"
                continue
            result.moved.append((row.pk, to))
    return result


def _table(venue: Venue, table: str):
    if table not in venue.tables:
        raise PulseRefused(f"table: the brand has no table {table!r}")
    return venue.tables[table]


def _states(states) -> set[str]:
    named = {states.initial, *states.moves}
    for targets in states.moves.values():
        named.update(targets)
    for timed in states.timed:
        named.update((timed.from_state, timed.to))
    return named


def _limit(limit: int) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise PulseRefused(f"limit: a whole number from 1 to {MAX_LIMIT}")


def _last_changed(venue: Venue, table: str, pks: list[int]) -> dict[int, datetime]:
    """When each row was last changed here (its latest audit entry): one grouped query."""
    if not pks:
        return {}
    return dict(RowAudit.objects.filter(connection=venue.link, test_clock__isnull=True,
                                        table=table, row__in=pks)
                .values("row").annotate(last=Max("at")).values_list("row", "last"))
