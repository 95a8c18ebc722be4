"""Rows of a brand's manifest tables: reading settings and hours, writing with an audit,
and moves a person makes (listed moves, moves that wait for a time; SPEC A1, A10), with the
moves of linked rows they set off (A7)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import lru_cache

from django.db import OperationalError, transaction
from django.forms.models import model_to_dict

from calendars.hours import HoursRow
from timekeeping.models import (
    BrandTable,
    Connection,
    Manifest,
    RowAudit,
    SampleRow,
    TestClock,
)
from timekeeping.moves import effects
from timekeeping.moves.moments import MomentOutOfRange, Reader, moment_of
from timekeeping.moves.tables import model_for
from timekeeping.moves.values import clean
from timekeeping.specs.current import current
from timekeeping.specs.tables import Move, States, Table, compile_tables
from timekeeping.timers import records


class MoveRefused(Exception):
    """A refused write: its code (STATE_MOVE_REFUSED, …) and details, for a 409."""

    def __init__(self, code: str, message: str, details: dict | None = None):
        super().__init__(message)
        self.code, self.message, self.details = code, message, details or {}


@lru_cache(maxsize=64)
def _section(bundle: str) -> dict:
    document = Manifest.objects.filter(bundle=bundle).values_list("document", flat=True).first()
    return (document or {}).get("tables", {})


@lru_cache(maxsize=64)
def _tables(bundle: str) -> dict[str, Table]:
    return compile_tables(_section(bundle))


@dataclass
class Venue:
    """A brand's tables on its connection, with what moments read.

    `tables` are those the current manifest declares; `retired`, those an earlier version
    declared and the current one removed, read with the last version that declared them:
    their rows are kept and readable, never written or moved."""

    link: Connection
    tables: dict[str, Table]
    bundle: str = ""
    # Within one minute's job, settings and opening hours are read once, not once per row
    # judged; a person's write reads them afresh (`remember=False`, the default).
    remembered: dict | None = None
    retired: dict[str, Table] = field(default_factory=dict)
    retired_in: dict[str, str] = field(default_factory=dict)  # table: its last bundle
    # A test clock's id: the venue is that clock's rehearsal (`moves.rehearse`), its rows in
    # tables of their own; None: the live tables.
    test_clock_id: str | None = None

    @classmethod
    def of(cls, link: Connection, *, remember: bool = False,
           test_clock_id: str | None = None) -> Venue:
        """The brand's tables on the connection that are registered to the brand (a brand
        reaches no table it does not own): those its current manifest declares, and those
        it retired. With `test_clock_id`, the copies of the declared ones in that test
        clock's rehearsal (a rehearsal has no retired tables)."""
        version = current(link.brand)
        bundle = version.bundle if version else ""
        owned = dict(BrandTable.objects.filter(brand_id=link.brand_id, connection=link)
                     .values_list("name", "declared_in__bundle")) if bundle else {}
        declared = _tables(bundle) if bundle else {}
        mine = {name: table for name, table in declared.items() if name in owned}
        retired, retired_in = {}, {}
        for name, last in owned.items():
            if name not in mine and last and name in _tables(last):
                retired[name], retired_in[name] = _tables(last)[name], last
        if test_clock_id is not None:
            return cls(link, mine, bundle, {} if remember else None,
                       test_clock_id=test_clock_id)
        return cls(link, mine, bundle, {} if remember else None, retired, retired_in)

    def readable(self, table: str) -> Table | None:
        """The table's definition, current or retired; None if the brand has no such table."""
        return self.tables.get(table) or self.retired.get(table)

    def _once(self, key: tuple, read):
        if self.remembered is None:
            return read()
        if key not in self.remembered:
            self.remembered[key] = read()
        return self.remembered[key]

    def raw_table(self, table: str) -> dict:
        bundle = self.retired_in.get(table, self.bundle)
        return _section(bundle).get(table, {}) if bundle else {}

    def model(self, table: str):
        return model_for(self.link.brand, self.tables.get(table) or self.retired[table],
                         self.test_clock_id)

    @property
    def zone(self) -> str:
        return self.link.zone or "UTC"

    def reader(self) -> Reader:
        return Reader(zone=self.zone, setting=self._setting, hours_rows=self._hours,
                      linked=self._linked)

    def _setting(self, table: str, column: str):
        def read():
            # Two rows in a settings table say two things: no setting is read from it.
            rows = list(self.model(table).objects.using(self.link.database).values(column)[:2])
            return rows[0][column] if len(rows) == 1 else None

        return self._once(("setting", table, column), read)

    def _hours(self, spec: dict) -> list[HoursRow]:
        def read():
            rows = self.model(spec["table"]).objects.using(self.link.database).values()
            return [HoursRow(row[spec.get("weekday", "weekday")],
                             row.get(spec.get("opens", "opens")),
                             row.get(spec.get("closes", "closes")),
                             row.get(spec.get("open", "open"), True) is not False)
                    for row in rows]

        return self._once(("hours", repr(sorted(spec.items()))), read)

    def _linked(self, row, column: str):
        table = self._table_of(row)
        target = table.columns[column].references if table else None
        value = getattr(row, column, None)
        if not target or value is None:
            return None
        return self.model(target).objects.using(self.link.database).filter(pk=value).first()

    def _table_of(self, row) -> Table | None:
        return next((t for name, t in self.tables.items()
                     if self.model(name) is type(row)), None)

    def moment(self, row, spec: dict) -> datetime | None:
        return moment_of(row, spec, self.reader())


def as_dict(row) -> dict:
    return model_to_dict(row) | {"id": row.pk}


def is_sample(venue: Venue, table: str, pk: int) -> bool:
    """A sample row (A14). A rehearsal's rows never are: they send their emails, marked as a
    practice run, and are judged late like any row."""
    if venue.test_clock_id is not None:
        return False
    return SampleRow.objects.filter(brand_id=venue.link.brand_id, connection=venue.link,
                                    table=table, row=pk).exists()


def audit(venue: Venue, table: str, row, *, kind: str, who: str, at: datetime,
          before: dict | None) -> None:
    """The audit entry, and the emails the change sets off (in the same transaction)."""
    raw = venue.raw_table(table)
    if raw.get("emails") or raw.get("holds"):  # ask whether it is a sample only when it matters
        sample = is_sample(venue, table, row.pk)
        effects.emails(venue, table, row, before, sample=sample)
        effects.holds(venue, table, row, before, at=at, sample=sample)
    after = as_dict(row)
    RowAudit.objects.create(brand_id=venue.link.brand_id, connection=venue.link, table=table,
                            row=row.pk, kind=kind, who=who, at=at, before=before,
                            after=after, test_clock_id=venue.test_clock_id)
    _moved(venue, table, row.pk, kind=kind, who=who, at=at, before=before, after=after)


def _moved(venue: Venue, table: str, pk: int, *, kind: str, who: str, at: datetime,
           before: dict | None, after: dict) -> None:
    """A row whose state changed is on the brand's record (`row.moved`, an event, and what
    the brand's automations hear), in the change's transaction."""
    spec = venue.tables[table].states
    if spec is None or before is None or before.get(spec.column) == after.get(spec.column):
        return
    test_clock = (TestClock.objects.get(pk=venue.test_clock_id) if venue.test_clock_id
                  else None)
    records.write("row.moved", brand=venue.link.brand, instant=at, test_clock=test_clock,
                  data={"table": table, "row": pk, "from": before.get(spec.column),
                        "to": after.get(spec.column), "by": kind, "who": who})


def create(venue: Venue, table: str, values: dict, *, who: str, at: datetime,
           audience: str = "staff"):
    """A new row, in the initial state, of the values a writer may write (`values.clean`:
    ValuesInvalid names every refused field); a creation that waits for a time (`states.
    create.requires.time`) is judged on the new row's own values."""
    spec = venue.tables[table]
    model = venue.model(table)
    values = clean(spec, venue.raw_table(table), values)
    if spec.states:
        values[spec.states.column] = spec.states.initial
    with _as_refusals(), transaction.atomic(using=venue.link.database):
        row = model(**values)
        effects.apply(venue, table, row, None, at)
        row.full_clean()
        if spec.states and spec.states.create_requires:
            _check_time(venue, row, spec.states.create_requires, at, audience)
        row.save(using=venue.link.database)
        audit(venue, table, row, kind="create", who=who, at=at, before=None)
    return row


def update(venue: Venue, table: str, pk: int, values: dict, *, who: str, at: datetime):
    """Change the columns a writer may write. The state changes only by a move (409
    STATE_MOVE_REFUSED); any other refused field raises ValuesInvalid and changes nothing. The
    row is locked NOWAIT: a row another writer holds answers WRITE_CONFLICT."""
    spec = venue.tables[table]
    if spec.states and spec.states.column in values:
        raise MoveRefused("STATE_MOVE_REFUSED", "the state changes only by a move",
                          {"reason": "use the move endpoint"})
    values = clean(spec, venue.raw_table(table), values)
    model = venue.model(table)
    with _as_refusals(), transaction.atomic(using=venue.link.database):
        row = model.objects.using(venue.link.database).select_for_update(nowait=True).get(
            pk=pk)
        before = as_dict(row)
        for key, value in values.items():
            setattr(row, key, value)
        effects.apply(venue, table, row, before, at)
        row.full_clean()
        row.save(using=venue.link.database)
        audit(venue, table, row, kind="update", who=who, at=at, before=before)
    return row


def move(venue: Venue, table: str, pk: int, to: str, *, who: str, at: datetime,
         audience: str = "staff", seen: str | None = None):
    """A person's move (A1, A10, A11): listed, inside the time it waits for, and judged against
    its late rule, all under the row's lock, taken NOWAIT: a row another writer holds answers
    WRITE_CONFLICT at once. `seen` is the state the person saw: an undo needs it, and any move
    naming it is refused once the row has left it. `audience` "public" is a guest through the
    public API: its refusals are PUBLIC_TOO_EARLY and PUBLIC_TOO_LATE, and it never undoes."""
    spec = venue.tables[table]
    if not spec.states:
        raise MoveRefused("STATE_MOVE_REFUSED", f"{table} keeps no states")
    model = venue.model(table)
    with _as_refusals(), transaction.atomic(using=venue.link.database):
        row = model.objects.using(venue.link.database).select_for_update(nowait=True).get(
            pk=pk)
        state = getattr(row, spec.states.column)
        listed = listed_move(table, spec.states, state, to, seen=seen, audience=audience)
        judge_requires(venue, row, listed, at, audience)
        before = as_dict(row)
        _judge_late(venue, table, row, state, to, at, audience)
        setattr(row, spec.states.column, to)
        effects.apply(venue, table, row, before, at)
        row.save(using=venue.link.database)
        audit(venue, table, row, kind="move", who=who, at=at, before=before)
        linked(venue, table, row, before, who=who, at=at)
    return row


def linked(venue, table: str, row, before: dict | None, *, who: str, at: datetime) -> int:
    """Moves of linked rows (A7): `states.effects` of the moved row's table,

        "effects": [{"when": "cancelled", "table": "tickets", "link": "order_id", "to": "void"}]

    moves each row of `table` whose `link` column points at this row to `to`, by that table's
    declared move: a linked row whose state lists no move to `to`, or only an undo (A1: made
    only by a person who names the state they saw), is left as it is. Each linked row is
    locked NOWAIT, as the moved row was: a busy one refuses the whole change (WRITE_CONFLICT
    for a person, the next minute for the job). A sample row's effects make their rows sample
    rows too, so removing the samples takes them."""
    states = (venue.raw_table(table).get("states") or {})
    column = states.get("column")
    entered = getattr(row, column, None) if column else None
    if before is None or entered is None or before.get(column) == entered:
        return 0
    moved = 0
    wanted = [effect for effect in states.get("effects", []) if effect.get("when") == entered]
    sample = bool(wanted) and is_sample(venue, table, row.pk)
    for effect in wanted:
        target = venue.tables[effect["table"]]
        model = venue.model(effect["table"])
        for child in model.objects.using(venue.link.database).select_for_update(
                nowait=True).filter(**{effect["link"]: row.pk}):
            listed = target.states.moves.get(getattr(child, target.states.column), {}).get(
                effect["to"])
            if listed is None or listed.undo:
                continue
            child_before = as_dict(child)
            setattr(child, target.states.column, effect["to"])
            effects.apply(venue, effect["table"], child, child_before, at)
            child.save(using=venue.link.database)
            audit(venue, effect["table"], child, kind="effect", who=who, at=at,
                  before=child_before)
            if sample:
                SampleRow.objects.get_or_create(brand_id=venue.link.brand_id,
                                                connection=venue.link, table=effect["table"],
                                                row=child.pk)
            moved += 1
    return moved


@contextmanager
def _as_refusals() -> Iterator[None]:
    """A write's own failures as a writer hears them: a moment out of the calendar's range
    (STATE_MOVE_REFUSED, reason moment-out-of-range), a row another writer holds
    (WRITE_CONFLICT: the NOWAIT lock, or SQLite's one writer)."""
    try:
        yield
    except MomentOutOfRange as error:
        raise MoveRefused("STATE_MOVE_REFUSED", str(error),
                          {"reason": "moment-out-of-range"}) from error
    except OperationalError as error:
        if lock_busy(error):
            raise MoveRefused("WRITE_CONFLICT", "another writer holds the row; try again"
                              ) from error
        raise


def listed_move(table: str, states: States, state: str, to: str, *, seen: str | None = None,
                audience: str = "staff") -> Move:
    """The listed move from the row's state as held. An undo (A1) is made only by a person who
    names the state they saw: never by a guest, the clock or an effect (none names one)."""
    if seen is not None and seen != state:
        raise MoveRefused("STATE_MOVE_REFUSED", f"the row is {state!r} now, not {seen!r}",
                          {"reason": "state-changed", "from": state, "seen": seen, "to": to})
    listed = states.moves.get(state, {}).get(to)
    if listed is None:
        raise MoveRefused("STATE_MOVE_REFUSED", f"{table} lists no move from {state!r} to "
                          f"{to!r}", {"reason": "not-listed", "from": state, "to": to})
    if listed.undo and audience == "public":
        raise MoveRefused("STATE_MOVE_REFUSED", f"the move from {state!r} to {to!r} is an undo, "
                          "which only staff make", {"reason": "undo-by-staff-only",
                                                    "from": state, "to": to})
    if listed.undo and seen is None:
        raise MoveRefused("STATE_MOVE_REFUSED", f"the move from {state!r} to {to!r} is an undo: "
                          "name the state you saw", {"reason": "undo-needs-seen", "from": state,
                                                     "to": to})
    return listed


def judge_requires(venue: Venue, row, listed: Move, at: datetime,
                   audience: str = "staff") -> None:
    """What a listed move waits for (A10), its time and its settings, read afresh inside the
    write under the row's lock: one judgement for a person's move and the job's timed move
    (A8: the clock is not a person, but what the move waits for is judged as for anyone)."""
    fresh = replace(venue, remembered=None)  # not the job's settings of the minute's start
    _check_time(fresh, row, listed.requires_time, at, audience)
    _check_settings(fresh, listed.requires_settings)


def lock_busy(error: Exception) -> bool:
    """A row another writer holds: PostgreSQL's lock_not_available (55P03, a NOWAIT lock) or
    SQLite's "database is locked"."""
    cause = error.__cause__
    return getattr(cause, "sqlstate", "") == "55P03" or "locked" in str(error).lower()


def _check_time(venue: Venue, row, requires: dict, at: datetime, audience: str) -> None:
    for bound in ("after", "before"):
        if bound not in requires:
            continue
        moment = venue.moment(row, requires[bound])
        details = {"requires": "time", "bound": bound, "at": moment}
        if moment is None:
            raise MoveRefused("STATE_MOVE_REFUSED", "the moment it waits for has no value",
                              {**details, "reason": "no-moment"})
        early, late = bound == "after" and at < moment, bound == "before" and at >= moment
        if audience == "public" and early:
            base = _get_column(row, requires[bound])
            raise MoveRefused("PUBLIC_TOO_EARLY", f"the move opens at {moment:%Y-%m-%dT%H:%MZ}",
                              {"from": moment, "at": base})
        if audience == "public" and late:
            raise MoveRefused("PUBLIC_TOO_LATE", f"the move closed at {moment:%Y-%m-%dT%H:%MZ}",
                              {"at": moment})
        if early or late:
            raise MoveRefused("STATE_MOVE_REFUSED",
                              f"the move opens {'from' if bound == 'after' else 'until'} "
                              f"{moment:%Y-%m-%dT%H:%M:%SZ}", details)


def _check_settings(venue: Venue, conditions: tuple) -> None:
    """A move may wait for a setting (`{"table", "column", "eq"}`); a settings table holding
    two rows gives no setting, and the move is refused."""
    for condition in conditions:
        value = venue.reader().setting(condition["table"], condition["column"])
        if value != condition.get("eq"):
            raise MoveRefused("STATE_MOVE_REFUSED", f"the move waits for "
                              f"{condition['table']}.{condition['column']} to be "
                              f"{condition.get('eq')!r}",
                              {"requires": "setting", "setting": f"{condition['table']}."
                               f"{condition['column']}", "eq": condition.get("eq"),
                               "found": value})


def _get_column(row, spec: dict):
    return getattr(row, spec["column"], None)


def _judge_late(venue: Venue, table: str, row, state: str, to: str, at: datetime,
                audience: str) -> None:
    """A move is late when its moment, read from the row as stored, is less than `within`
    away or has passed. Sample rows are never late."""
    from timekeeping.moves.moments import shift_by

    spec = venue.tables[table].states
    rule = next((late for late in spec.late if late.to == to
                 and (not late.from_states or state in late.from_states)), None)
    if rule is None or is_sample(venue, table, row.pk):
        return
    moment = venue.moment(row, rule.moment)
    opens = shift_by(moment, rule.within, -1, venue.reader()) if moment else None
    if opens is None or at < opens:
        if rule.mode == "flag":
            setattr(row, rule.flag, False)  # the flag is ours: a writer's value is dropped
        return
    if rule.mode == "flag":
        setattr(row, rule.flag, True)
    elif audience == "public":
        raise MoveRefused("PUBLIC_TOO_LATE", f"too late to move to {to!r}", {"at": moment})
    elif rule.refuse == "everyone":
        raise MoveRefused("STATE_TOO_LATE", f"too late to move to {to!r}", {"at": moment})
