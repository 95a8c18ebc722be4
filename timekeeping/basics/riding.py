"""One row's update held back to ride in a statement after it, in the same round trip (issue
32: a moved date's UPDATE went alone, just before the statement that arms its rungs again; so
did a deadline's that follows it, before its late mark's).

    with riding.held(update):       # update: Update(using, table, sql, params), or None
        ...                         # a statement that can carry it takes it (`take`);
                                    # any other that names its table, or whose text cannot
                                    # be read, is sent after it
                                    # at the end, if none took it, it is sent alone

What reads the row's table reads it changed, as if the update had been sent when it was held:
the update goes first. A statement that takes it runs it in a part of its own that touches no
other table (`inserted.insert_after`), and it is refused there as Django refuses a save that
finds no row. What the block raises leaves it unsent only when it is the database's error (its
transaction is lost); anything else sends it first, as the save before it would have been.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import DatabaseError, connections, transaction

NO_ROW = "Save with update_fields did not affect any rows."  # Django's words


@dataclass(frozen=True)
class Update:
    """An UPDATE of one row: on the database `using`, of `table` (as statements name it)."""

    using: str
    table: str
    sql: str
    params: list


@contextmanager
def held(update: Update | None) -> Iterator[None]:
    """Hold `update` while the block runs (the module's docstring). None: nothing held."""
    if update is None:
        yield
        return
    connection = connections[update.using]
    holding, outer = [update], getattr(connection, "riding", None)
    if outer:
        send(outer.pop())  # one held at a time: the one before goes first

    def before(execute, sql, params, many, context):
        if holding and (not isinstance(sql, str) or update.table in sql):
            send(holding.pop())
        return execute(sql, params, many, context)

    connection.riding = holding
    try:
        with connection.execute_wrapper(before):
            yield
    except DatabaseError:
        holding.clear()
        raise
    except BaseException:
        if holding:
            send(holding.pop())
        raise
    else:
        if holding:
            send(holding.pop())
    finally:
        connection.riding = outer


def take(using: str, table: str) -> Update | None:
    """The update held on the database `using`, now the caller's to send in its statement,
    or None: none is held, or it is of `table`, which the caller's statement names."""
    holding = getattr(connections[using], "riding", None)
    if not holding or holding[0].table == table:
        return None
    return holding.pop()


def send(update: Update) -> None:
    """The update alone, refused as Django refuses a save that finds no row."""
    with transaction.mark_for_rollback_on_error(using=update.using), \
            connections[update.using].cursor() as cursor:
        cursor.execute(update.sql, update.params)
        if cursor.rowcount < 1:
            raise DatabaseError(NO_ROW)
