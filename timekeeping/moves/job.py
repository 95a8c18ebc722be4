"""The once-a-minute job that makes timed moves (SPEC A6-A8), and sends reminders (A12).

For each connection whose tables list timed moves (one at a time per connection: its lease;
a paused connection is skipped, and so is one backing off after a failed minute until its next
attempt, or parked after too many: `moves.parking`):

1. candidates per timed move: rows still in `from`, prefiltered in SQL on the (state, moment
   column) index, and rows set aside within the hour left out; each moment judged exactly in
   Python on the venue's clock (a moment past the calendar counts as the longest due);
2. the longest due first across every rule, at most 500 rows a minute;
3. each move its own transaction: the row re-read FOR UPDATE (NOWAIT), moved only if still in
   `from` with its moment still passed and what the listed move waits for (its time, its
   settings) holding as for anyone; `set` applied, the audit written ("timed move");
4. a refused move (the move's own requires, a refused value, a moment past the calendar:
   MOMENT_OUT_OF_RANGE) sets the row aside for an hour and logs it (connection, table, key,
   rule, code), never holding newer rows up; a row another writer holds is tried next minute;
   a lost database ends the minute.

A minute that raises (its database unreachable, a table missing) is the connection's failure:
the tick's guard writes it (`moves.parking.failed`, issue 31); a minute that ends resets its
count.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import DatabaseError, IntegrityError, OperationalError, connections, transaction
from django.db.models import F

from timekeeping.models import Connection, SetAside, TestClock
from timekeeping.moves import effects, moments, parking, reminders
from timekeeping.moves.moments import MomentOutOfRange
from timekeeping.moves.rows import (
    MoveRefused,
    Venue,
    as_dict,
    audit,
    judge_requires,
    linked,
    listed_move,
    lock_busy,
)
from timekeeping.specs.tables import Table, Timed
from timekeeping.timers import leases, records
from timekeeping.timers.parking import come

log = logging.getLogger("timekeeping.moves")
CAP = 500
SET_ASIDE_FOR = timedelta(hours=1)
LEASE = timedelta(minutes=5)
JUDGE_CHUNK = 1000
OUT_OF_RANGE = datetime.min.replace(tzinfo=UTC)  # a moment past the calendar sorts first


@dataclass
class Due:
    moment: datetime
    table: str
    rule: Timed
    pk: int


@dataclass
class Minute:
    connection: str
    ran: bool = False
    due: int = 0
    moved: list[tuple[str, int]] = field(default_factory=list)
    left: int = 0
    set_aside: int = 0
    busy: int = 0
    reminders: int = 0
    holds_given_back: int = 0
    stopped: str = ""


def due_connections(*, now: datetime) -> list[Connection]:
    """Connections not paused nor parked, whose next attempt after a failure (if any) has come
    and whose job has not run this minute (once a minute each), the one whose job ran least
    recently first: a tick whose budget runs out before the last of them leaves those to the
    next tick, which starts with them."""
    minute = now.replace(second=0, microsecond=0)
    return [link for link in Connection.objects.select_related("brand", "brand__owner")
            .filter(paused=False, parked__isnull=True).filter(come(now))
            .order_by(F("last_run").asc(nulls_first=True), "pk")
            if not link.last_run or link.last_run.replace(second=0, microsecond=0) != minute]


def run_connection(link: Connection, *, now: datetime, holder: str, cap: int = CAP) -> Minute:
    """One connection's minute under its lease; it raises when the minute fails as a whole,
    and resets the connection's failures when it ends (`moves.parking`)."""
    minute = Minute(link.pk)
    if link.paused or not leases.take(Connection, link.pk, holder=holder, now=now,
                                      until=now + LEASE):
        return minute
    done = {"last_run": now}
    try:
        minute.ran = True
        venue = Venue.of(link, remember=True)
        minute.reminders = reminders.run(venue, now)
        minute.holds_given_back = give_back_holds(venue, now)
        move_due(venue, now, cap, minute)
        done |= parking.succeeded(link)
    finally:
        leases.give_back(Connection, link.pk, holder=holder, extra=done)
    return minute


def move_due(venue: Venue, now: datetime, cap: int, minute: Minute) -> Minute:
    """The minute's timed moves: the longest due first, at most `cap`, each in its own
    transaction. A rehearsal's job (`moves.rehearse`) is this, at the test clock's time."""
    due = candidates(venue, now, cap)
    minute.due = len(due)
    for item in due[:cap]:
        outcome = move_one(venue, item, now)
        if outcome == "lost":
            minute.stopped = "the database went away"
            break
        if outcome == "moved":
            minute.moved.append((item.table, item.pk))
        else:
            setattr(minute, outcome, getattr(minute, outcome) + 1)
    return minute


def candidates(venue: Venue, now: datetime, cap: int) -> list[Due]:
    found: list[Due] = []
    for name, table in venue.tables.items():
        for rule in table.states.timed if table.states else ():
            found += _due_by_rule(venue, name, table, rule, now, cap)
    return sorted(found, key=lambda due: (due.moment, due.table, due.pk))


def _due_by_rule(venue: Venue, name: str, table: Table, rule: Timed, now: datetime,
                 cap: int) -> list[Due]:
    model = venue.model(name)
    db = venue.link.database
    aside = SetAside.objects.filter(brand_id=venue.link.brand_id, connection=venue.link,
                                    test_clock_id=venue.test_clock_id, table=name,
                                    rule=rule.number, until__gt=now).values_list("row",
                                                                                 flat=True)
    rows = model.objects.using(db).filter(**{table.states.column: rule.from_state}).exclude(
        pk__in=list(aside))
    column = rule.at["column"]
    # Only rows whose moment may have passed: the index on (state, column) serves this.
    rows = rows.filter(**moments.column_window(table.columns[column].type, rule.at, venue.zone,
                                               after=None, until=now))
    due: list[Due] = []
    start = 0
    while len(due) < cap:
        chunk = list(rows.order_by(column, "pk")[start:start + JUDGE_CHUNK])
        for row in chunk:
            moment = _judged(venue, row, rule)
            if moment is not None and moment <= now:  # no value: never fires (A3)
                due.append(Due(moment, name, rule, row.pk))
        if len(chunk) < JUDGE_CHUNK:
            break
        start += JUDGE_CHUNK
    return due


def _judged(venue: Venue, row, rule: Timed) -> datetime | None:
    """The row's moment. A moment past the calendar counts as the longest due, so `move_one`
    reads it again under the lock and sets the row aside: one bad row never stops the minute."""
    try:
        return venue.moment(row, rule.at)
    except MomentOutOfRange:
        return OUT_OF_RANGE


def move_one(venue: Venue, item: Due, now: datetime) -> str:
    """One timed move in its own transaction (A7, A8); a refusal sets the row aside."""
    db = venue.link.database
    try:
        with transaction.atomic(using=db):
            _relaxed_commit(db)
            return _move_held(venue, item, now)
    except MoveRefused as refused:  # what the move waits for does not hold (A8)
        return _set_aside(venue, item, now, f"{refused.code}: {refused.message}")
    except MomentOutOfRange as error:  # A6: a moment past the calendar
        return _set_aside(venue, item, now, f"MOMENT_OUT_OF_RANGE: {error}")
    except OperationalError as error:
        if lock_busy(error):
            return "busy"  # another writer holds it: the next minute tries again
        if _connection_lost(error):
            return "lost"
        return _set_aside(venue, item, now, f"{type(error).__name__}: {error}")
    except (ValidationError, IntegrityError, DatabaseError) as error:
        return _set_aside(venue, item, now, f"{type(error).__name__}: {error}")


def _move_held(venue: Venue, item: Due, now: datetime) -> str:
    """The move under the row's lock (FOR UPDATE NOWAIT): made only while the row is still in
    `from` with its moment, read again, passed. A move kept for some roles is still made (the
    clock is not a person); what the listed move waits for is judged as for anyone (A8)."""
    db = venue.link.database
    table = venue.tables[item.table]
    row = venue.model(item.table).objects.using(db).select_for_update(
        nowait=True).filter(pk=item.pk).first()
    if row is None or getattr(row, table.states.column) != item.rule.from_state:
        return "left"  # moved by a person meanwhile
    moment = venue.moment(row, item.rule.at)
    if moment is None or moment > now:
        return "left"  # re-dated meanwhile: due again when its new moment passes
    listed = listed_move(item.table, table.states, item.rule.from_state, item.rule.to)
    judge_requires(venue, row, listed, now)
    before = as_dict(row)
    setattr(row, table.states.column, item.rule.to)
    for column, value in item.rule.set.items():
        setattr(row, column, value)
    effects.apply(venue, item.table, row, before, now)  # stamps, code renewals
    changed = [f.name for f in row._meta.fields if f.name != "id"
               and before.get(f.name) != getattr(row, f.name)]
    # The values `set` writes are checked as any write's (a length, a null); the database
    # refuses the rest. Either refusal sets the row aside.
    row.clean_fields(exclude=[f.name for f in row._meta.fields if f.name not in changed])
    row.save(using=db, update_fields=changed)
    audit(venue, item.table, row, kind="timed move", who="timed move", at=now, before=before)
    linked(venue, item.table, row, before, who="timed move", at=now)
    return "moved"


def give_back_holds(venue: Venue, now: datetime) -> int:
    """Holds nobody finished (A13): given back at their moment, whatever the row's state and
    with no move of the row. A refused give-back (the ledger's floor) is tried in an hour."""
    from money import ledger

    given = 0
    brand = venue.link.brand_id
    for found in ledger.due_holds(brand=brand, prefix=f"{venue.link.pk}:", now=now):
        try:
            given += ledger.give_back(found.reference, brand=brand, at=now)
        except ledger.LedgerRefused as refused:
            ledger.refused_until(found, code=refused.code, retry_after=now + SET_ASIDE_FOR)
            log.warning("hold give-back refused; left alone for an hour: connection=%s "
                        "hold=%s code=%s", venue.link.pk, found.reference, refused.code)
    return given


def _relaxed_commit(db: str) -> None:
    """Each move is its own transaction; waiting for each commit's flush to disk would cap the
    job at the disk's flush rate. A timed move is re-derived from the row, so a move lost in a
    crash (the row still in `from`, its moment still passed) is simply made again next minute:
    on PostgreSQL these transactions do not wait for the flush. The row, its audit and its
    outbox rows still commit together or not at all."""
    connection = connections[db]
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


def _connection_lost(error: Exception) -> bool:
    cause = error.__cause__
    return getattr(cause, "sqlstate", "") in ("08000", "08003", "08006", "57P01") or (
        "closed" in str(error).lower())


def _set_aside(venue: Venue, item: Due, now: datetime, refusal: str) -> str:
    code = refusal[:200]
    SetAside.objects.create(brand_id=venue.link.brand_id, connection=venue.link,
                            table=item.table, row=item.pk, rule=item.rule.number, code=code,
                            until=now + SET_ASIDE_FOR, test_clock_id=venue.test_clock_id)
    log.warning("timed move refused; left alone for an hour: connection=%s table=%s key=%s "
                "rule=%s code=%s", venue.link.pk, item.table, item.pk, item.rule.number, code)
    test_clock = (TestClock.objects.get(pk=venue.test_clock_id) if venue.test_clock_id
                  else None)
    records.write("row.set_aside", brand=venue.link.brand, instant=now, test_clock=test_clock,
                  data={"table": item.table, "row": item.pk, "rule": item.rule.number,
                        "code": code, "until": now + SET_ASIDE_FOR})
    return "set_aside"
