"""Rehearsing timed moves on a test clock (issue 29): a brand's rows living in a test clock's
world, moved by the clock's walks through the same job, gate and effects as live rows.

A rehearsal keeps its rows in tables of their own: a copy of each of the brand's current
tables, named from the brand and the test clock (`tables.db_table(…, world=…)`), so the live
job, the rows API and every live list never see them, and a copied row keeps its number (order
1042 is order 1042 in the rehearsal too, and its order lines still point at it). The audit and
the rows set aside carry the test clock (`RowAudit.test_clock`, `SetAside.test_clock`).

    copy(test_clock, table, ids=[…] | start=…, end=…)   chosen live rows, copied; live rows
                                                         are only read
    add(test_clock, table, rows)                         new rows; `{"@in": "PT2H"}` is the
                                                         test clock's time plus two hours
    remove(test_clock)                                   the rehearsal's tables, audit, all
    next_due(rehearsal, now=, until=)                    the test clock's next instant a row
                                                         moves, for its walk
    run(rehearsal, now=)                                 that minute's job, at the clock's time
    moved(test_clock)                                    what moved, when and why, in words

The first copy or add brings the tables without states (settings, opening hours) whole, so
moments read the same settings and hours as live. A copy brings the rows that link to a
chosen row by an effect (an order's lines). Money is not held on a rehearsal (the ledger is
live money); its emails and reminders go to the brand's owner, their subjects saying
"Practice run:" (`outbox.tell`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.core.management.color import no_style
from django.db import connections, transaction
from django.db.models import Max

from calendars.moments import day_in_zone
from timekeeping.models import Connection, Rehearsal, RowAudit, SetAside, TestClock
from timekeeping.moves import effects, job, moments, reminders, tables
from timekeeping.moves.moments import MomentOutOfRange
from timekeeping.moves.rows import Venue, as_dict, audit
from timekeeping.moves.samples import resolve
from timekeeping.moves.values import ValuesInvalid, clean
from timekeeping.specs.tables import Table

MOST_ROWS = 1000  # rows one copy (linked rows included) or one add writes
MOST_WHOLE = 1000  # rows of a table without states, copied whole
MINUTE = timedelta(minutes=1)
MOST_REMINDED = 10_000  # rows judged for one reminder's next send time
LARGEST_ID = 2**63 - 1  # a row's number is a 64-bit integer


class RehearsalRefused(Exception):
    """A copy or an add that cannot be made: `field` names what is wrong; nothing changed."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


@dataclass
class Copied:
    table: str
    copied: list[int] = field(default_factory=list)  # chosen rows copied, by their numbers
    linked: int = 0  # rows linking to them by an effect, copied with them
    kept: list[int] = field(default_factory=list)  # already in the rehearsal: left as they are


def of(test_clock: TestClock) -> Rehearsal | None:
    """The test clock's rehearsal, or None when no row was ever put on it."""
    return Rehearsal.objects.select_related("connection__brand", "test_clock").filter(
        test_clock_id=test_clock.pk, brand_id=test_clock.brand_id).first()


def venue_of(rehearsal: Rehearsal, *, remember: bool = False) -> Venue:
    return Venue.of(rehearsal.connection, remember=remember,
                    test_clock_id=rehearsal.test_clock_id)


def _link(test_clock: TestClock) -> Connection:
    link = Connection.objects.select_related("brand").filter(
        brand_id=test_clock.brand_id).first()
    if link is None:
        raise RehearsalRefused("table", "the brand has no tables yet: load a manifest with a "
                                        "tables section first")
    return link


def _table(live: Venue, table: str) -> Table:
    spec = live.tables.get(table) if isinstance(table, str) else None
    if spec is None or not spec.states or not spec.states.timed:
        moving = ", ".join(sorted(name for name, t in live.tables.items()
                                  if t.states and t.states.timed)) or "none"
        raise RehearsalRefused("table", f"{table!r} is not a table of the brand with timed "
                                        f"moves; those are: {moving}")
    return spec


def _begin(test_clock: TestClock, link: Connection, live: Venue) -> tuple[Rehearsal, Venue]:
    """The rehearsal and its tables (made, or given the columns a newer manifest added); a new
    one gets the tables without states whole."""
    rehearsal, new = Rehearsal.objects.get_or_create(
        test_clock=test_clock, defaults={"brand_id": test_clock.brand_id, "connection": link})
    world = venue_of(rehearsal)
    tables.ensure(link, world.tables, world=test_clock.pk)
    names = {world.model(name)._meta.db_table for name in world.tables}
    if not names <= set(rehearsal.tables):
        rehearsal.tables = sorted(names | set(rehearsal.tables))
        rehearsal.save(update_fields=["tables"])
    if new:
        for name, spec in live.tables.items():
            if not spec.states:
                _copy_whole(live, world, name, test_clock)
    return rehearsal, world


def _copy_whole(live: Venue, world: Venue, name: str, test_clock: TestClock) -> None:
    rows = list(live.model(name).objects.using(live.link.database).order_by("pk")
                [:MOST_WHOLE + 1])
    if len(rows) > MOST_WHOLE:
        raise RehearsalRefused("table", f"{name} holds more than {MOST_WHOLE:,} rows; a "
                                        "rehearsal copies a table without states whole")
    _write_copies(world, name, rows, test_clock, who="rehearsal")


def copy(test_clock: TestClock, table: str, *, ids: list[int] | None = None,
         start: datetime | None = None, end: datetime | None = None,
         column: str | None = None, who: str) -> Copied:
    """Copy chosen live rows of `table` onto the test clock: by their numbers (`ids`), or
    those whose `column` (by default the moment column of the table's first timed move)
    falls from `start` to before `end`. At most MOST_ROWS rows, with the rows linking to them
    by an effect; a row already in the rehearsal is left as it is. The live rows are only
    read. RehearsalRefused names the field and the rule, and nothing is changed."""
    link = _link(test_clock)
    live = Venue.of(link)
    spec = _table(live, table)
    chosen = _chosen(live, spec, ids=ids, start=start, end=end, column=column)
    children = _children(live, table, [row.pk for row in chosen])
    if len(chosen) + sum(len(rows) for _, rows in children) > MOST_ROWS:
        raise RehearsalRefused("ids" if ids is not None else "end",
                               f"{len(chosen)} rows of {table} and the rows linked to them "
                               f"make more than {MOST_ROWS:,}; one copy takes at most "
                               f"{MOST_ROWS:,}: choose fewer")
    rehearsal, world = _begin(test_clock, link, live)
    with transaction.atomic(), transaction.atomic(using=link.database):
        done = Copied(table)
        done.copied, done.kept = _write_copies(world, table, chosen, test_clock, who=who)
        for name, rows in children:
            done.linked += len(_write_copies(world, name, rows, test_clock, who=who)[0])
    return done


def _chosen(live: Venue, spec: Table, *, ids, start, end, column) -> list:
    model = live.model(spec.name).objects.using(live.link.database)
    if (ids is None) == (start is None and end is None):
        raise RehearsalRefused("ids", "give the rows' numbers (ids), or a window (start and "
                                      "end), not both")
    if ids is not None:
        if (not isinstance(ids, list) or not ids or len(ids) > MOST_ROWS
                or any(type(pk) is not int or not 1 <= pk <= LARGEST_ID for pk in ids)):
            raise RehearsalRefused("ids", f"a list of 1 to {MOST_ROWS:,} row numbers")
        rows = list(model.filter(pk__in=set(ids)).order_by("pk"))
        missing = sorted(set(ids) - {row.pk for row in rows})
        if missing:
            raise RehearsalRefused("ids", f"{spec.name} has no row {missing[0]}"
                                          + (f" (nor {len(missing) - 1} more)"
                                             if len(missing) > 1 else ""))
        return rows
    return _in_window(live, spec, model, start, end, column)


def _in_window(live: Venue, spec: Table, model, start, end, column) -> list:
    if start is None or end is None or start.tzinfo is None or end.tzinfo is None:
        raise RehearsalRefused("start", "give both start and end, aware instants")
    if end <= start:
        raise RehearsalRefused("end", "the window's end comes after its start")
    column = column or spec.states.timed[0].at["column"]
    kind = spec.columns[column].type if column in spec.columns else None
    if kind not in ("date", "timestamptz"):
        raise RehearsalRefused("column", f"{column!r} is not a date or timestamptz column of "
                                         f"{spec.name}")
    if kind == "date":  # the venue's days the window touches
        first, last = day_in_zone(start, live.zone), day_in_zone(end - MINUTE, live.zone)
        window = {f"{column}__gte": first, f"{column}__lte": last}
    else:
        window = {f"{column}__gte": start, f"{column}__lt": end}
    rows = list(model.filter(**window).order_by(column, "pk")[:MOST_ROWS + 1])
    if len(rows) > MOST_ROWS:
        raise RehearsalRefused("end", f"more than {MOST_ROWS:,} rows of {spec.name} fall in "
                                      f"this window; one copy takes at most {MOST_ROWS:,}: "
                                      "narrow it")
    return rows


def _children(live: Venue, table: str, pks: list[int]) -> list[tuple[str, list]]:
    """The rows linking to the chosen rows by one of the table's effects (an order's lines),
    at most MOST_ROWS + 1 of each table: enough to refuse too many."""
    found = []
    for effect in (live.raw_table(table).get("states") or {}).get("effects", []):
        name = effect.get("table")
        if name in live.tables and pks:
            rows = list(live.model(name).objects.using(live.link.database).filter(
                **{f"{effect['link']}__in": pks}).order_by("pk")[:MOST_ROWS + 1])
            found.append((name, rows))
    return found


def _write_copies(world: Venue, name: str, rows: list, test_clock: TestClock, *,
                  who: str) -> tuple[list[int], list[int]]:
    """Write copies of live rows, keeping their numbers; those the rehearsal has already are
    kept as they are. Audited as "copy" at the test clock's time; nothing is sent."""
    model = world.model(name)
    db = world.link.database
    have = set(model.objects.using(db).filter(pk__in=[row.pk for row in rows])
               .values_list("pk", flat=True))
    fresh = [row for row in rows if row.pk not in have]
    copies = []
    for row in fresh:
        values = as_dict(row)
        copies.append(model(**{f.attname: values.get(f.name) if f.name != "id" else row.pk
                               for f in model._meta.concrete_fields}))
    model.objects.using(db).bulk_create(copies)
    _reset_sequence(model, db)
    RowAudit.objects.bulk_create([
        RowAudit(brand_id=world.link.brand_id, connection=world.link, table=name, row=row.pk,
                 kind="copy", who=who[:200], at=test_clock.frozen_time, before=None,
                 after=as_dict(row), test_clock_id=test_clock.pk) for row in copies])
    return [row.pk for row in fresh], sorted(have)


def _reset_sequence(model, db: str) -> None:
    """Rows written with their numbers: the next new row's number comes after them."""
    connection = connections[db]
    statements = connection.ops.sequence_reset_sql(no_style(), [model])
    if statements:
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)


def add(test_clock: TestClock, table: str, rows: list[dict], *, who: str) -> list[int]:
    """New rows on the test clock, as sample rows are written (A14) but relative to the test
    clock's time: `{"@in": "PT2H"}` is two hours after it, `{"@in": "PT20M", "@slot":
    "opening_hours"}` the next open slot. A row may give its state; the rest is checked as any
    writer's values. RehearsalRefused names the row and its field; nothing is written."""
    if not isinstance(rows, list) or not 1 <= len(rows) <= MOST_ROWS:
        raise RehearsalRefused("rows", f"a list of 1 to {MOST_ROWS:,} rows")
    link = _link(test_clock)
    live = Venue.of(link)
    spec = _table(live, table)
    existed = of(test_clock) is not None
    _, world = _begin(test_clock, link, live)
    try:
        with transaction.atomic(), transaction.atomic(using=link.database):
            return _write_new(live, world, spec, rows, test_clock.frozen_time, who=who)
    except RehearsalRefused:
        if not existed:  # a refused first add leaves no rehearsal behind
            remove(test_clock)
        raise


def _write_new(live: Venue, world: Venue, spec: Table, rows: list[dict], now: datetime, *,
               who: str) -> list[int]:
    table, made = spec.name, []
    first = _next_number(live, world, table)
    for number, given in enumerate(rows):
        values = _values(world, spec, given, now, number)
        row = world.model(table)(pk=first + number, **values)
        effects.apply(world, table, row, None, now)
        try:
            row.full_clean()
        except ValidationError as error:
            raise RehearsalRefused(f"rows[{number}]", "; ".join(
                f"{key}: {' '.join(said)}" for key, said in error.message_dict.items())
                ) from None
        row.save(using=world.link.database, force_insert=True)
        audit(world, table, row, kind="create", who=who[:200], at=now, before=None)
        made.append(row.pk)
    _reset_sequence(world.model(table), world.link.database)
    return made


def _next_number(live: Venue, world: Venue, table: str) -> int:
    """A new rehearsal row is numbered after every live and rehearsal row of its table, so a
    later copy of a live row never meets it."""
    db = live.link.database
    highest = [model.objects.using(db).aggregate(top=Max("pk"))["top"] or 0
               for model in (live.model(table), world.model(table))]
    return max(highest) + 1


def _values(world: Venue, spec: Table, given, now: datetime, number: int) -> dict:
    where = f"rows[{number}]"
    if not isinstance(given, dict):
        raise RehearsalRefused(where, "each row is an object of column values")
    given = dict(given)
    state = given.pop(spec.states.column, spec.states.initial)
    states = set(spec.states.moves) | {to for moves in spec.states.moves.values()
                                       for to in moves} | {spec.states.initial}
    if not isinstance(state, str) or state not in states:
        raise RehearsalRefused(f"{where}.{spec.states.column}",
                               f"one of the table's states: {', '.join(sorted(states))}")
    try:
        resolved = {key: _written(resolve(value, now, world)) for key, value in given.items()}
        values = clean(spec, world.raw_table(spec.name), resolved)
    except ValuesInvalid as refused:
        key, said = next(iter(refused.errors.items()))
        raise RehearsalRefused(f"{where}.{key}", " ".join(said)) from None
    except (ValueError, OverflowError, KeyError, TypeError) as error:
        # A duration past the calendar, an `@slot` naming no table of the brand.
        raise RehearsalRefused(where, f"a value cannot be read: {error}") from None
    return values | {spec.states.column: state}


def _written(value):
    """A resolved moment, as a writer writes it (the values' check reads ISO 8601)."""
    return value.isoformat() if isinstance(value, datetime) else value


def remove(test_clock: TestClock) -> int:
    """The rehearsal ends: its tables dropped, its audit and rows set aside deleted. How many
    rows it held."""
    rehearsal = of(test_clock)
    if rehearsal is None:
        return 0
    world = venue_of(rehearsal)
    held = sum(world.model(name).objects.using(world.link.database).count()
               for name in world.tables)
    tables.drop(rehearsal.connection, list(rehearsal.tables))
    RowAudit.objects.filter(brand_id=test_clock.brand_id, test_clock=test_clock).delete()
    SetAside.objects.filter(brand_id=test_clock.brand_id, test_clock=test_clock).delete()
    rehearsal.delete()
    return held


def _minute_up(at: datetime) -> datetime:
    """The job's minute that sees a moment: the live job runs on whole minutes."""
    whole = at.replace(second=0, microsecond=0)
    return whole if whole == at else whole + MINUTE


def next_due(rehearsal: Rehearsal, *, now: datetime, until: datetime) -> datetime | None:
    """The first instant, from `now` to `until`, at which the rehearsal's job moves a row (the
    whole minute at or after a row's moment, after the minute it last ran, and not before a
    row set aside is tried again) or sends a reminder. None when nothing happens by `until`."""
    venue = venue_of(rehearsal, remember=True)
    due = job.candidates(venue, until, job.CAP)
    aside = {(table, row): again for table, row, again in SetAside.objects.filter(
        brand_id=rehearsal.brand_id, test_clock_id=rehearsal.test_clock_id, until__gt=now)
        .values_list("table", "row", "until")} if due else {}
    after = rehearsal.last_run + MINUTE if rehearsal.last_run else now
    found = None
    for item in due:
        at = max(_minute_up(max(item.moment, now)), after)
        if (item.table, item.pk) in aside:  # tried again when its hour is up (A8)
            at = max(at, aside[(item.table, item.pk)])
        found = at if found is None else min(found, at)
    reminded = _next_reminder(venue, now=now, until=until, last_run=rehearsal.last_run)
    if reminded is not None:
        found = reminded if found is None else min(found, reminded)
    return found if found is not None and found <= until else None


def _next_reminder(venue: Venue, *, now: datetime, until: datetime,
                   last_run: datetime | None) -> datetime | None:
    """The first minute, by `until`, the live job would send a reminder the rehearsal has not
    sent yet (A12): its send time passed while its moment is still ahead. Sent at the minute
    the job last ran: every send time at or before it."""
    found = None
    for name in venue.tables:
        for spec in venue.raw_table(name).get("reminders", []):
            for when, moment in _send_times(venue, name, spec, now=now, until=until):
                at = max(_minute_up(when), now)
                if last_run is not None and _minute_up(when) <= last_run:
                    continue  # sent when the job ran then (or its moment had passed)
                if at < moment and (found is None or at < found):
                    found = at
    return found


def _send_times(venue: Venue, name: str, spec: dict, *, now: datetime, until: datetime):
    """Each row's reminder send time and moment, for rows whose moment may fall after `now`
    and within the largest lead of `until`."""
    largest = reminders.largest_lead(venue, name, spec.get("lead", {}))
    if largest is None:
        return
    rows = venue.model(name).objects.using(venue.link.database)
    column = None if "via" in spec["at"] else venue.tables[name].columns.get(
        spec["at"]["column"])
    if column is not None:
        try:
            reach = until + timedelta(hours=largest) + reminders.AT_A_WALL_TIME
        except OverflowError:
            reach = None
        rows = rows.filter(**moments.column_window(column.type, spec["at"], venue.zone,
                                                   after=now, until=reach))
    for row in rows.order_by("pk")[:MOST_REMINDED]:
        try:
            moment = venue.moment(row, spec["at"])
            when = reminders.send_at(venue, row, spec, moment) if moment else None
        except MomentOutOfRange:
            continue  # the job skips and logs it (A12)
        if when is not None and moment > now:
            yield when, moment


def run(rehearsal: Rehearsal, *, now: datetime) -> job.Minute:
    """The rehearsal's minute at the test clock's time `now`: the live job's moves, by the
    same candidates, lock, listed move, `set`, effects and audit (`job.move_due`)."""
    venue = venue_of(rehearsal, remember=True)
    minute = job.Minute(rehearsal.connection_id)
    minute.reminders = reminders.run(venue, now)  # keyed: each sent once per row and moment
    job.move_due(venue, now, job.CAP, minute)
    Rehearsal.objects.filter(pk=rehearsal.pk).update(last_run=now)
    rehearsal.last_run = now
    return minute


def rows_held(test_clock: TestClock) -> dict[str, int]:
    """How many rows each table of the rehearsal holds (nothing before the first copy)."""
    rehearsal = of(test_clock)
    if rehearsal is None:
        return {}
    world = venue_of(rehearsal)
    return {name: world.model(name).objects.using(world.link.database).count()
            for name in world.tables}
