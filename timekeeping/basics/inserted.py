"""New rows written in one statement whose text is made once (issue 32): on PostgreSQL the rows
go as one JSON array that the database reads into the table's columns
(`jsonb_populate_recordset`), so the statement has one parameter however many rows it carries.

    insert(clocks)                          as bulk_create: each automatic id set on its row
    insert(timers, skip_taken=True, returning=True) -> the ids of the rows written
    insert(timers, skip_taken=True, returning=True,
           unless=Unless(("brand", "test_clock", "key"), ("state", ("superseded",))))
                                            each row skipped that a row of the table matches
                                            (PostgreSQL: the lookup in the same statement)

Django's `bulk_create` compiles its INSERT on every call and, on PostgreSQL, sends each column
as an array that psycopg writes out value by value in Python; past 50 parameters psycopg also
splits the statement's text anew on every call. For the few rows an order or a moved date
writes, that was two thirds of the write (a store of a date's rungs: 1.1 ms of three timers,
0.4 after). Elsewhere (SQLite) each is `bulk_create`'s own path.

A row's values are its fields' as `bulk_create` takes them (`pre_save`, so an `auto_now` is
set; a related row saved since it was assigned gives its id), written as JSON: an instant in
ISO 8601 to the microsecond (a naive one is refused), a span in microseconds, a date as its
day, a decimal as its digits; a JSON field's value nested, as Django's encoder writes it (an
instant inside it to the millisecond), or, for a field with no encoder, as plain JSON, which
refuses anything else as the field does. Every value is in the one parameter: the text names
only the model's table and columns.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from django.core.serializers.json import DjangoJSONEncoder
from django.db import DatabaseError, connections, router, transaction
from django.db.models import AutoField, JSONField, Model
from django.db.models.constants import OnConflict

from timekeeping.basics import compiled, riding

# Rows a statement carries at most: a batch's thousand deliveries, their emails in one JSON
# text, held it three times over (the text, its quoting, the statement) at a tick's peak, 3 to
# 5 MB more than Django's statement (`bench/practice.py`).
ROWS = 200


@dataclass(frozen=True)
class Unless:
    """A row not written where the table holds one with its values in the columns `same` (a
    column that may be null matching null), but for those whose column `but[0]` holds one of
    the values `but[1]`: the read and the write in one statement (PostgreSQL only)."""

    same: tuple[str, ...]
    but: tuple[str, tuple]


def insert(rows: Sequence[Model], *, skip_taken: bool = False, returning: bool = False,
           unless: Unless | None = None) -> set | None:
    """Write `rows`, all of one model, in one statement (one for each `ROWS` of them).
    `skip_taken`: a row a unique index refuses is skipped (`ON CONFLICT DO NOTHING`).
    `returning`: the primary keys of the rows written. An automatic primary key is set on
    each row, as `bulk_create` sets it (not when rows may be skipped: which were is not
    known). `unless`: a row the table matches is skipped (`Unless`; see `matches_in_one`)."""
    if not rows:
        return set() if returning else None
    model = type(rows[0])
    using = router.db_for_write(model)
    connection = connections[using]
    fields = tuple(_fields(model, rows))
    if unless is not None and connection.vendor != "postgresql":
        raise ValueError("unless: only PostgreSQL skips a matched row in the same statement")
    if connection.vendor != "postgresql":
        return _django(model, rows, list(fields), using, skip_taken, returning)
    for row in rows:  # as bulk_create: a related row saved since it was assigned, its id
        row._prepare_related_fields_for_save(operation_name="insert")  # noqa: SLF001
    auto = model._meta.pk not in fields
    plain = _plain(fields)
    statement = _statement(model, connection.ops.quote_name, fields, skip_taken,
                           auto or returning, unless and _unless(model, unless))
    but = [list(unless.but[1])] if unless is not None else []
    answered: list = []
    with connection.cursor() as cursor:
        for start in range(0, len(rows), ROWS):
            cursor.execute(statement, [_rows_json(rows[start:start + ROWS], fields, plain),
                                       *but])
            if auto or returning:
                answered.extend(found[0] for found in cursor.fetchall())
    if auto and not skip_taken:  # every row written, in the order sent
        for row, pk in zip(rows, answered, strict=True):
            row.pk = pk
    for row in rows:
        row._state.adding, row._state.db = False, using
    return set(answered) if returning else None


def insert_after(first: str, params: list, rows: Sequence[Model], *, unless: Unless,
                 also: Sequence[Model] = (), also_unless: Unless | None = None
                 ) -> tuple[list, set]:
    """`first`, a statement that answers ids (`… RETURNING id`), then `rows` written as
    `insert(rows, skip_taken=True, returning=True, unless=unless)` writes them, in one
    statement (PostgreSQL, at most `ROWS` rows): the ids `first` answered, and the ids
    written. `first` runs to its end before the first row is written (a row a unique index
    refuses is refused by what `first` left); the lookup of `unless` reads the table as it
    stood before `first` (one statement, one snapshot), so `first` must change nothing the
    lookup could find (issue 32: a date's rungs superseded and armed again in one round trip,
    not two). `also`: more rows of the model, each looked up as `also_unless` says, written
    in the same statement after `first` as well (their ids among those written). The updates
    held on the database of other tables (`basics.riding`: the date's own move, the job's
    steps) ride in it, each a part of its own, refused as a save that finds no row."""
    model = type(rows[0])
    connection = connections[router.db_for_write(model)]
    if connection.vendor != "postgresql" or len(rows) + len(also) > ROWS:
        raise ValueError("insert_after: PostgreSQL, at most ROWS rows")
    quote = connection.ops.quote_name
    parts = [(quote("written"), rows, unless)]
    if also:
        parts.append((quote("also"), also, also_unless))
    values, writes = [], []
    for name, part, looked_up in parts:
        fields = tuple(_fields(model, part))
        if model._meta.pk not in fields:
            raise ValueError("insert_after: the rows' ids are given")
        for row in part:
            row._prepare_related_fields_for_save(operation_name="insert")  # noqa: SLF001
        written = _statement(model, quote, fields, True, True, _unless(model, looked_up),
                             "first")
        writes.append(f"{name} AS ({written})")
        values += [_rows_json(part, fields, _plain(fields)), list(looked_up.but[1])]
    riders = riding.take(connection.alias, model._meta.db_table)
    ridden = [quote(f"riding{n or ''}") for n in range(len(riders))]  # each tagged -n
    pk = quote(model._meta.pk.column)
    statement = "".join([
        "WITH ", *(f"{name} AS ({rider.sql} RETURNING 1), "
                   for name, rider in zip(ridden, riders, strict=True)),
        f"{quote('first')} AS ({first}), {', '.join(writes)} ",
        f"SELECT 1, {quote('id')} FROM {quote('first')}",
        *(f" UNION ALL SELECT 2, {pk} FROM {name}" for name, _, _ in parts),
        *(f" UNION ALL SELECT {-n}, NULL FROM {name}" for n, name in enumerate(ridden))])
    # Prepared (`compiled.preparing`): its text is one for every call of one shape, and it
    # was parsed anew each time (a `run` rung's re-arm: 2.2 ms a call, against 2.4 to 2.9).
    # The database still plans it for each call's values (its generic plan costs more), and
    # the timers a firing batch holds back, written just before it (`Firing._written_first`),
    # are prepared with it: one plan for any values, a probe of the key's index a row.
    with transaction.mark_for_rollback_on_error(using=connection.alias), \
            compiled.preparing(connection), connection.cursor() as cursor:
        cursor.execute(statement, [*(param for rider in riders for param in rider.params),
                                   *params, *values])
        answered = cursor.fetchall()
        if {part for part, _ in answered if part <= 0} != {-n for n in range(len(riders))}:
            raise DatabaseError(riding.NO_ROW)
    for row in (*rows, *also):
        row._state.adding, row._state.db = False, connection.alias
    return ([pk for part, pk in answered if part == 1],
            {pk for part, pk in answered if part == 2})


def next_ids(model: type[Model], count: int) -> list[int]:
    """`count` ids taken from the sequence of the model's automatic primary key (PostgreSQL),
    largest first: each as an insert would have given it, none given twice (a sequence's
    numbers are not given back, even when the transaction that took them is rolled back)."""
    with connections[router.db_for_write(model)].cursor() as cursor:
        # The table is a value, not the statement's text: a statement that names it is one
        # a batch holding its new rows writes them before (`timekeeping.timers.made`).
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM "
                       "generate_series(1, %s)", [model._meta.db_table, model._meta.pk.column,
                                                  count])
        return sorted((found for (found,) in cursor.fetchall()), reverse=True)


def _fields(model: type[Model], rows: Sequence[Model]) -> list:
    """The columns written: all, but an automatic primary key none of the rows holds."""
    pk = model._meta.pk
    leave_out = isinstance(pk, AutoField) and all(row.pk is None for row in rows)
    return [field for field in model._meta.concrete_fields if not (leave_out and field is pk)]


def _django(model, rows, fields, using, skip_taken: bool, returning: bool) -> set | None:
    if not returning:
        model.objects.using(using).bulk_create(rows, ignore_conflicts=skip_taken)
        return None
    size = connections[using].ops.bulk_batch_size(fields, rows) or len(rows)
    written: set = set()
    for start in range(0, len(rows), size):
        # What `bulk_create` sends, asked to return the rows it wrote (it does not when it
        # skips conflicts: it cannot pair them with its objects, a conflict leaving a gap).
        answered = model.objects._insert(  # noqa: SLF001 - bulk_create's own path
            rows[start:start + size], fields=fields, using=using,
            returning_fields=[model._meta.pk],
            on_conflict=OnConflict.IGNORE if skip_taken else None)
        written.update(found[0] for found in answered if found)
    for row in rows:  # as bulk_create leaves them, and the statement above on PostgreSQL
        row._state.adding, row._state.db = False, using
    return written


def matches_in_one(model: type[Model]) -> bool:
    """Whether `insert(…, unless=…)` can write the model's rows (its database PostgreSQL)."""
    return connections[router.db_for_write(model)].vendor == "postgresql"


@lru_cache(maxsize=16)
def _unless(model: type[Model], unless: Unless) -> tuple:
    """`unless` as `_statement` takes it: each column of `same`, and whether it may be null
    (compared with `IS NOT DISTINCT FROM`, which no index serves; the others with `=`), and
    the column of `but`."""
    return (tuple((model._meta.get_field(name).column, model._meta.get_field(name).null)
                  for name in unless.same), model._meta.get_field(unless.but[0]).column)


@lru_cache(maxsize=64)
def _statement(model: type[Model], quote, fields: tuple, skip_taken: bool,
               returning: bool, unless: tuple | None = None, after: str = "") -> str:
    """The statement, made once for its model, columns and options (`unless`, as `_unless`
    gives it: each row looked up in the table first, in the same statement). A model whose
    JSON field encodes with an encoder of its own is refused: its values are written as
    Django's encoder writes them, as the product's JSON fields do; so is one with a value the
    database makes (a `db_default`, a generated field), which `bulk_create` leaves out.
    `after`: the name of a statement of the same `WITH` that runs to its end before any row
    is written (`insert_after`)."""
    for field in fields:
        if isinstance(field, JSONField) and field.encoder not in (None, DjangoJSONEncoder):
            raise TypeError(f"{model.__name__}.{field.name}: its encoder is not Django's")
        if field.has_db_default() or field.generated:
            raise TypeError(f"{model.__name__}.{field.name}: the database makes its value")
    table = quote(model._meta.db_table)
    columns = ", ".join(quote(field.column) for field in fields)
    matched = ""
    if unless:
        same, but = unless
        # `OFFSET 0` keeps the lookup a subplan run for each new row, by the index. Without it
        # the planner joins the table to the rows, which it guesses a hundred, and reads every
        # row of it (a hash anti join: 8 ms a timer among a practice's 20,000).
        matched = (" WHERE NOT EXISTS (SELECT 1 FROM {0} AS {1} WHERE {2} AND {1}.{3} <> "
                   "ALL(%s) OFFSET 0)").format(
            table, quote("held"), " AND ".join(
                f"{quote('held')}.{quote(column)} "
                f"{'IS NOT DISTINCT FROM' if null else '='} {quote('new')}.{quote(column)}"
                for column, null in same), quote(but))
    if after:  # a one-time filter: the statement named is run through before the first row
        matched += f" AND (SELECT count(*) FROM {quote(after)}) >= 0"
    return "".join([
        f"INSERT INTO {table} ({columns}) SELECT {columns} FROM ",
        f"jsonb_populate_recordset(NULL::{table}, %s::jsonb) AS {quote('new')}", matched,
        " ON CONFLICT DO NOTHING" if skip_taken else "",
        f" RETURNING {table}.{quote(model._meta.pk.column)}" if returning else ""])


def _rows_json(rows: Sequence[Model], fields: tuple, plain: tuple[bool, ...]) -> str:
    """The rows as the one JSON array a statement carries: each its columns' values."""
    return json.dumps([{field.column: _value(field.pre_save(row, True), bare)
                        for field, bare in zip(fields, plain, strict=True)} for row in rows],
                      cls=DjangoJSONEncoder, separators=(",", ":"))


@lru_cache(maxsize=64)
def _plain(fields: tuple) -> tuple[bool, ...]:
    """Which of the columns are JSON fields with no encoder of their own."""
    return tuple(isinstance(field, JSONField) and field.encoder is None for field in fields)


def _value(value, plain: bool = False):
    """A column's value as JSON carries it exactly (a JSON field's, as is: nested). A JSON
    field with no encoder refuses what plain JSON cannot write, as it does."""
    if plain:
        json.dumps(value)  # a TypeError, as the field's own writing raises
        return value
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"a row's instant must be aware: {value!r}")
        return value.isoformat()
    if isinstance(value, timedelta):
        return f"{value // timedelta(microseconds=1)} microseconds"
    return value
