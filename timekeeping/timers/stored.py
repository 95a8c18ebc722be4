"""Timers written in one statement that answers which were written, and timers new
owners armed, written in one stream.

    store(timers) -> the ids written
    write_new(timers)
    mark_fired(ids, instant)
    end_open(ids, state, by) -> how many were armed or held
    copying(connection, statement)   a COPY, its errors Django's and its statement logged

A timer is written unless a live one holds its key already (the live key's unique index, `ON
CONFLICT DO NOTHING`: of two processes arming one key, one row results). The statement says
which rows it wrote (`RETURNING`), so no second one reads them back (issue 32: arming a date's
rungs, and the timers armed with a firing batch, each took a read after its insert).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from datetime import datetime, timedelta
from functools import lru_cache

from django.db import connections, router
from django.db.models import F, JSONField, Value
from django.db.models.constants import OnConflict
from django.db.models.fields import DateTimeField
from psycopg import sql as pgsql

from timekeeping.models import Timer


def store(timers: list[Timer]) -> set[str]:
    """Write the timers, each skipped whose live key another timer holds; the ids written.
    One statement on PostgreSQL; on SQLite, as many as its limit on parameters asks."""
    if not timers:
        return set()
    using = router.db_for_write(Timer)
    connection = connections[using]
    if connection.vendor == "postgresql":
        return _stored(connection, timers)
    fields = [field for field in Timer._meta.concrete_fields]
    size = connection.ops.bulk_batch_size(fields, timers) or len(timers)
    written: set[str] = set()
    for start in range(0, len(timers), size):
        # What `bulk_create(ignore_conflicts=True)` sends, asked to return the rows it wrote
        # (it does not: it cannot pair them with its objects, a conflict leaving a gap).
        rows = Timer.objects._insert(  # noqa: SLF001 - bulk_create's own path, with RETURNING
            timers[start:start + size], fields=fields, using=using,
            returning_fields=[Timer._meta.pk], on_conflict=OnConflict.IGNORE)
        written.update(row[0] for row in rows if row)
    return written


def _stored(connection, timers: list[Timer]) -> set[str]:
    """`store` on PostgreSQL: the rows sent as one JSON array, which the database reads into
    the table's columns (`jsonb_populate_recordset`), so the statement is one text whatever
    the number of rows, with one parameter (issue 32: Django compiling its INSERT, writing each
    column as an array, and psycopg splitting a statement of more than 50 parameters anew on
    every call, were two thirds of a store of a date's rungs)."""
    with connection.cursor() as cursor:
        cursor.execute(_insert_of(connection.ops.quote_name), [json.dumps(
            [_row(timer) for timer in timers], cls=_PAYLOAD.encoder, separators=(",", ":"))])
        return {row[0] for row in cursor.fetchall()}


_PAYLOAD = Timer._meta.get_field("payload")


@lru_cache(maxsize=1)
def _insert_of(quote) -> str:
    """The INSERT of timers given as a JSON array of rows: each skipped whose live key is held
    (`ON CONFLICT DO NOTHING`, as `bulk_create(ignore_conflicts=True)`), the ids written
    answered. Its text is the model's table and columns only; the rows are its parameter."""
    table = quote(Timer._meta.db_table)
    columns = ", ".join(quote(field.column) for field in Timer._meta.concrete_fields)
    return (f"INSERT INTO {table} ({columns}) SELECT {columns} FROM "
            f"jsonb_populate_recordset(NULL::{table}, %s::jsonb) "
            f"ON CONFLICT DO NOTHING RETURNING {table}.\"id\"")


def _row(timer: Timer) -> dict:
    """A timer as its row: instants in ISO 8601 to the microsecond, a span in microseconds,
    the payload as its field encodes it."""
    return {field.column: _value(getattr(timer, field.attname))
            for field in Timer._meta.concrete_fields}


def _value(value):
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"a timer's instant must be aware: {value!r}")
        return value.isoformat()
    if isinstance(value, timedelta):
        return f"{value // timedelta(microseconds=1)} microseconds"
    return value


def write_new(timers: list[Timer]) -> None:
    """Write timers whose keys no timer can hold yet: each names an owner made in this
    transaction (a job being ordered, its dates, asks and deadlines), which no other process
    can have armed, so there is no conflict to answer. On PostgreSQL they are streamed with
    COPY, each row's values as the model holds them (an INSERT's parameters, adapted one by one
    through Django's fields, were a third of ordering a return: its twenty timers); elsewhere
    one INSERT. A key taken after all fails the write, and its transaction, loudly."""
    if not timers:
        return
    using = router.db_for_write(Timer)
    connection = connections[using]
    if connection.vendor != "postgresql":
        Timer.objects.using(using).bulk_create(timers)
        return
    fields = Timer._meta.concrete_fields
    statement = pgsql.SQL("COPY {} ({}) FROM STDIN").format(
        pgsql.Identifier(Timer._meta.db_table),
        pgsql.SQL(", ").join(pgsql.Identifier(field.column) for field in fields))
    encoded = {field.attname: field.encoder for field in fields if isinstance(field, JSONField)}
    with copying(connection, statement) as copy:
        for timer in timers:
            copy.write_row([
                json.dumps(getattr(timer, field.attname), cls=encoded[field.attname])
                if field.attname in encoded else getattr(timer, field.attname)
                for field in fields])


def mark_fired(ids: list[str], instant: datetime) -> None:
    """Mark the timers fired at `instant`, each late by the time since it was owed: one
    statement. On PostgreSQL the ids go as one array (`= ANY`): Django's `IN` of a thousand
    placeholders cost the client 7 to 13 ms a batch to compile and send, the array 3 to 4
    (the database's part, about 30 ms, is the same)."""
    using = router.db_for_write(Timer)
    connection = connections[using]
    if connection.vendor != "postgresql":
        Timer.objects.using(using).filter(id__in=ids).update(
            state=Timer.State.FIRED, fired=instant,
            late_by=Value(instant, output_field=DateTimeField()) - F("owed"), last_error="")
        return
    # Text, as Django's own statements are (what hears them, an execute wrapper, reads text).
    table = connection.ops.quote_name(Timer._meta.db_table)
    statement = (f"UPDATE {table} SET state = %s, fired = %s, late_by = %s - owed, "
                 f"last_error = '' WHERE {table}.\"id\" = ANY(%s)")
    with connection.cursor() as cursor:
        cursor.execute(statement, (Timer.State.FIRED.value, instant, instant, ids))


def end_open(ids: list[str], state: str, by: str) -> int:
    """End the timers among `ids` still armed or held (`state`: superseded, cancelled; `by`
    says why): one statement, how many it ended. On PostgreSQL its text is made once and the
    ids go as one array (a date moved supersedes its rungs this way: Django compiling the
    UPDATE each time was half of it, issue 32)."""
    using = router.db_for_write(Timer)
    connection = connections[using]
    live = [Timer.State.ARMED.value, Timer.State.HELD.value]
    if connection.vendor != "postgresql":
        return Timer.objects.using(using).filter(id__in=ids, state__in=live).update(
            state=state, ended_by=by)
    with connection.cursor() as cursor:
        cursor.execute(_end_of(connection.ops.quote_name),
                       (Timer.State(state).value, by, list(ids), live))
        return cursor.rowcount


@lru_cache(maxsize=1)
def _end_of(quote) -> str:
    table = quote(Timer._meta.db_table)
    return (f"UPDATE {table} SET state = %s, ended_by = %s WHERE {table}.\"id\" = ANY(%s) "
            f"AND {table}.state = ANY(%s)")


@contextmanager
def copying(connection, statement: pgsql.Composed) -> Iterator:
    """A `COPY … FROM STDIN` on the connection (PostgreSQL): its failure raised as Django's
    errors are (an IntegrityError), and the statement logged where Django logs its own, so a
    test's count of statements counts it as one."""
    with connection.cursor() as cursor:
        logged = (cursor.debug_sql(statement.as_string(cursor.cursor))
                  if connection.queries_logged else nullcontext())
        with logged, connection.wrap_database_errors, cursor.cursor.copy(statement) as copy:
            yield copy
