"""Timers written in one statement that answers which were written, and timers new
owners armed, written in one stream.

    store(timers) -> the ids written
    store_unheld(timers) -> the ids written, as `arm` writes them (PostgreSQL)
    supersede_unwanted(…) -> the ids superseded, as `rearm_many` and `rearm_keys` end them
    store_rearmed(timers) -> the ids written, as `rearm_many` and `rearm_keys` write them
    supersede_and_store(…, timers) -> (superseded, written): the two in one statement
    end_under_keys(…) -> the ids ended, as `end_keys` ends them (these four: PostgreSQL)
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
from datetime import datetime
from functools import lru_cache

from django.db import connections, router
from django.db.models import F, JSONField, Value
from django.db.models.fields import DateTimeField
from psycopg import sql as pgsql

from timekeeping.basics import inserted
from timekeeping.models import Timer


def store(timers: list[Timer]) -> set[str]:
    """Write the timers, each skipped whose live key another timer holds; the ids written.
    One statement on PostgreSQL, its text made once (`inserted`); on SQLite, as many as its
    limit on parameters asks."""
    return inserted.insert(timers, skip_taken=True, returning=True)


# What `arm` writes no timer under: a key a timer of the brand clock holds, but one superseded
# (live, fired or ended).
HELD = inserted.Unless(same=("brand", "test_clock", "key"),
                       but=("state", (Timer.State.SUPERSEDED.value,)))


def store_unheld(timers: list[Timer]) -> set[str]:
    """Write the timers as `arm` does, each skipped whose key a timer not superseded holds on
    its brand clock: the read and the write in one statement (a batch's `arm_later` timers,
    written before each handler that could read them, took two: issue 32). Only where
    `looked_up_in_one()`; the ids written."""
    return inserted.insert(timers, skip_taken=True, returning=True, unless=HELD)


def looked_up_in_one() -> bool:
    """Whether `store_unheld`, `supersede_unwanted`, `end_under_keys` and `store_rearmed` can
    write (PostgreSQL)."""
    return inserted.matches_in_one(Timer)


# What `rearm_many` writes no timer under: a key a live timer holds for that very instant, or
# one that rang for it.
LIVE_OR_RUNG_THEN = inserted.Unless(
    same=("brand", "test_clock", "key", "owed"),
    but=("state", tuple(state.value for state in (
        Timer.State.SUPERSEDED, Timer.State.CANCELLED, Timer.State.DROPPED))))


def store_rearmed(timers: list[Timer]) -> set[str]:
    """Write the timers as `rearm_many` and `rearm_keys` do once they have superseded what
    they no longer want (`supersede_unwanted`): each skipped whose key holds a live timer
    owed at that very instant, or one that rang for it; the lookup in the same statement.
    The ids written."""
    return inserted.insert(timers, skip_taken=True, returning=True, unless=LIVE_OR_RUNG_THEN)


def supersede_unwanted(brand: str, test_clock: str | None, owner: str | None,
                       wanted: dict[str, datetime], by: str) -> list[str]:
    """End as superseded the owner's live timers (armed or held), and the live timers under
    the keys it wants, each but one owed at its key's wanted instant (`wanted`: key to
    instant): one statement, which answers the ids it ended (`rearm_many`'s read and update
    of them, in one; PostgreSQL). With `owner` None, only those under the keys
    (`rearm_keys`)."""
    keys = list(wanted)
    return _ending(brand, test_clock, Timer.State.SUPERSEDED, by, owner, keys,
                   [keys, [wanted[key] for key in keys]])


def supersede_and_store(brand: str, test_clock: str | None, owner: str | None,
                        wanted: dict[str, datetime], by: str, timers: list[Timer],
                        held: list[Timer] = ()) -> tuple[list[str], set[str]]:
    """`supersede_unwanted`, then `store_rearmed(timers)`, in one statement (PostgreSQL; two
    for more timers than one statement carries, or none to write): the ids superseded, and
    those written. The insert's lookup reads the timers as they stood before the update (one
    statement sees one snapshot), and nothing it looks for has changed: the update spares a
    live timer owed at its key's wanted instant and ends no fired one, and a new timer is
    written only for a wanted key and instant (issue 32: a moved date's rungs, each `run`
    rung of the April wave, and an ask's reminder and expiry extended, in one round trip).
    `held`: timers of the brand clock a firing batch held back (`Firing.due_to_ride`), none
    under a wanted key, written as `store_unheld` writes them, as if just before: in the
    same statement, each of `owner`'s written already superseded as the update would have
    superseded it (and among the ids superseded), their ids written among those answered."""
    if not timers or len(timers) + len(held) > inserted.ROWS:
        written = store_unheld(held) if held else set()
        ended = supersede_unwanted(brand, test_clock, owner, wanted, by)
        return ended, store_rearmed(timers) | written
    superseded = [timer for timer in held if timer.owner_id == owner]
    for timer in superseded:
        timer.state, timer.ended_by = Timer.State.SUPERSEDED, by
    connection = connections[router.db_for_write(Timer)]
    keys = list(wanted)
    ended, written = inserted.insert_after(
        _ending_of(connection.ops.quote_name, test_clock is None, owner is not None, True),
        _ending_values(brand, test_clock, Timer.State.SUPERSEDED, by, owner, keys,
                       [keys, [wanted[key] for key in keys]]),
        timers, unless=LIVE_OR_RUNG_THEN, also=held, also_unless=HELD)
    return ended + [timer.pk for timer in superseded if timer.pk in written], written


def end_under_keys(brand: str, test_clock: str | None, keys: list[str], state: Timer.State,
                   by: str) -> list[str]:
    """End the live timers (armed or held) under `keys` as `state`: one statement, which
    answers the ids it ended (`arming.end_keys`' read and update of them, in one: a job's end
    cancels its deadlines' and asks' timers so; PostgreSQL)."""
    return _ending(brand, test_clock, state, by, None, keys, None)


def _ending(brand: str, test_clock: str | None, state: Timer.State, by: str,
            owner: str | None, keys: list[str], sparing: list | None) -> list[str]:
    connection = connections[router.db_for_write(Timer)]
    values = _ending_values(brand, test_clock, state, by, owner, keys, sparing)
    with connection.cursor() as cursor:
        cursor.execute(_ending_of(connection.ops.quote_name, test_clock is None,
                                  owner is not None, sparing is not None), values)
        return [pk for (pk,) in cursor.fetchall()]


def _ending_values(brand: str, test_clock: str | None, state: Timer.State, by: str,
                   owner: str | None, keys: list[str], sparing: list | None) -> list:
    live = [Timer.State.ARMED.value, Timer.State.HELD.value]
    return [Timer.State(state).value, by, brand, *([test_clock] if test_clock else []), live,
            *([owner] if owner is not None else []), keys, *(sparing or [])]


@lru_cache(maxsize=16)
def _ending_of(quote, real: bool, of_owner: bool, sparing: bool) -> str:
    """The text of `supersede_unwanted` (the wanted keys and instants as two arrays, each
    key's timer owed then spared) and of `end_under_keys` (none spared)."""
    table = quote(Timer._meta.db_table)
    brand, test_clock, state, owner, key, owed, pk = (
        f"{table}.{quote(Timer._meta.get_field(name).column)}"
        for name in ("brand", "test_clock", "state", "owner_id", "key", "owed", "id"))
    clock = f"{test_clock} IS NULL" if real else f"{test_clock} = %s"
    mine = f"{owner} = %s OR " if of_owner else ""
    spared = (f" AND NOT EXISTS (SELECT 1 FROM unnest(%s::text[], %s::timestamptz[]) AS "
              f"{quote('wanted')} ({quote('key')}, {quote('owed')}) WHERE "
              f"{quote('wanted')}.{quote('key')} = {key} AND {quote('wanted')}.{quote('owed')} "
              f"= {owed})") if sparing else ""
    return (f"UPDATE {table} SET {quote('state')} = %s, {quote('ended_by')} = %s WHERE "
            f"{brand} = %s AND {clock} AND {state} = ANY(%s) AND ({mine}"
            f"{key} = ANY(%s)){spared} RETURNING {pk}")


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
