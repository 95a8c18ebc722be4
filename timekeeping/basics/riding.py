"""Rows' updates held back to ride in a statement after them, in the same round trip (issue
32: a moved date's UPDATE went alone, just before the statement that arms its rungs again; so
did a deadline's that follows it, before its late mark's, and a job's for each step it took).

    with riding.held(update):       # update: Update(using, table, sql, params, row), or None
        ...                         # a statement that can carry it takes it (`take`);
                                    # any other that names its table, or whose text cannot
                                    # be read, is sent after it
                                    # at the end, if none took it, it is sent alone
    with riding.parked(using):      # a firing batch: what is parked (`park`) is held so
        riding.park(update)         # until the end of the block (True), or, with no block
                                    # open, not held (False: the caller sends it)

What reads a row's table reads it changed, as if the update had been sent when it was held:
the updates go first, in the order they were held; so they do before a savepoint's opening
(rolled back, it would take them with it), and nothing is parked inside one. A statement that
takes them runs each in a part of its own that touches no other table
(`inserted.insert_after`), and one is refused there as Django refuses a save that finds no
row. A row held again sends the update held before for it first (one statement never updates
a row twice). What a block raises leaves what is held unsent only when it is the database's
error (its transaction is lost); anything else sends it first, as the save before it would
have been.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import DatabaseError, connections, transaction

NO_ROW = "Save with update_fields did not affect any rows."  # Django's words


@dataclass(frozen=True, eq=False)
class Update:
    """An UPDATE of one row: on the database `using`, of `table` (as statements name it), the
    row's primary key `row`."""

    using: str
    table: str
    sql: str
    params: list
    row: object = None


@contextmanager
def held(update: Update | None) -> Iterator[None]:
    """Hold `update` while the block runs (the module's docstring). None: nothing held."""
    if update is None:
        yield
        return
    with _holding(update.using) as holding:
        _hold(holding, update)
        try:
            yield
        except DatabaseError:
            if update in holding:
                holding.remove(update)
            raise
        except BaseException:
            _send_held(holding, update)
            raise
        _send_held(holding, update)


@contextmanager
def parked(using: str) -> Iterator[None]:
    """Hold what is parked on the database `using` (`park`) until the block ends, each update
    as `held` holds one; at the end, each still held is sent alone."""
    connection = connections[using]
    with _holding(using) as holding:
        connection.riding_parks = savepoints(connection)
        try:
            yield
        except DatabaseError:
            raise
        except BaseException:
            _send_all(holding)
            raise
        else:
            _send_all(holding)
        finally:
            connection.riding_parks = None


def park(update: Update) -> bool:
    """Hold `update` until the open `parked` block of its database ends: True; or False when
    none is open, or a savepoint was opened since it began (rolled back, it would not take
    the update with it), the update not held (its caller sends it)."""
    connection = connections[update.using]
    depth = getattr(connection, "riding_parks", None)
    if depth is None or savepoints(connection) != depth:
        return False
    _hold(connection.riding, update)
    return True


def take(using: str, table: str) -> list[Update]:
    """The updates held on the database `using`, in the order held, now the caller's to send
    in its statement, but those of `table`, which the caller's statement names (they stay
    held: they are sent before it)."""
    holding = getattr(connections[using], "riding", None)
    if not holding:
        return []
    taken = [update for update in holding if update.table != table]
    holding[:] = [update for update in holding if update.table == table]
    return taken


def send(update: Update) -> None:
    """The update alone, refused as Django refuses a save that finds no row."""
    with transaction.mark_for_rollback_on_error(using=update.using), \
            connections[update.using].cursor() as cursor:
        cursor.execute(update.sql, update.params)
        if cursor.rowcount < 1:
            raise DatabaseError(NO_ROW)


@contextmanager
def _holding(using: str) -> Iterator[list[Update]]:
    """The updates held on the database `using`: the open block's, or a new list, with what
    sends them before a statement that names their table, for the outermost block. The
    database's error drops them all: its transaction is lost."""
    connection = connections[using]
    holding = getattr(connection, "riding", None)
    if holding is not None:
        yield holding
        return
    holding = connection.riding = []

    def before(execute, sql, params, many, context):
        if holding:
            # A savepoint opened is sent after all (rolled back, it would take them with it).
            opening = not isinstance(sql, str) or sql.startswith("SAVEPOINT")
            named = [update for update in holding if opening or update.table in sql]
            for update in named:
                holding.remove(update)
                send(update)
        return execute(sql, params, many, context)

    try:
        with connection.execute_wrapper(before):
            yield holding
    except DatabaseError:
        holding.clear()
        raise
    finally:
        connection.riding = None


def savepoints(connection) -> int:
    """How many savepoints are open on the connection (an atomic block that opened none
    counts none)."""
    return sum(1 for sid in connection.savepoint_ids if sid)


def _hold(holding: list[Update], update: Update) -> None:
    """Hold `update` after those held, the one held before for its row sent first."""
    if update.row is not None:
        for earlier in [one for one in holding
                        if one.table == update.table and one.row == update.row]:
            holding.remove(earlier)
            send(earlier)
    holding.append(update)


def _send_held(holding: list[Update], update: Update) -> None:
    if update in holding:
        holding.remove(update)
        send(update)


def _send_all(holding: list[Update]) -> None:
    while holding:
        send(holding.pop(0))
