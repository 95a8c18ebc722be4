"""The new rows an order makes (its job, clocks, dates, asks and deadlines), written for a
whole firing batch of orders at once, one statement a table (issue 32: a batch of mints).

Inside a firing batch that takes them (`Firing.take_rows`: the engine's batches and a group of
small clocks', on PostgreSQL; not one redone a timer at a time, and not from inside a savepoint
a handler opened), an order gathers the rows it makes (`arming.gathering`: `Gathered.rows`)
and opens no savepoint of its own; when it ends whole it hands them to the batch, and an order
refused part way leaves none of them. The batch writes them before the first statement that
names one of their tables, and when it is written; a row with an automatic id takes one the
batch reserved from the table's sequence, so what is armed for it can name it at once.

Where writing them later could change what a statement finds, the batch is redone a timer at
a time instead, as when a handler fails (`Firing.read_back`): a statement naming one of their
tables sent while the order that made them is still open (it reads back what it made), or
sent from inside a savepoint a handler opened (which could be rolled back with them in it).
Everywhere else rows are written as they are made: one by `models.base`'s INSERT, more by
`inserted.insert`.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Model

from timekeeping.basics import inserted
from timekeeping.timers import firing, gathered


def taken() -> bool:
    """Whether rows made now are gathered for the firing batch (the module's docstring): an
    order asks before it chooses to open no savepoint of its own."""
    collected = gathered.current()
    if collected is not None:
        return collected.rows is not None
    batch = firing.current()
    return batch is not None and batch.takes_rows_now()


def insert(rows: Sequence[Model]) -> None:
    """Write new rows, all of one model, or gather them for the firing batch; either way an
    automatic id is set on each row, and each row is as if written (`_state`)."""
    if not rows:
        return
    collected = gathered.current()
    if collected is None or collected.rows is None:
        if len(rows) == 1:  # one INSERT made once for its model (`models.base`)
            rows[0].save(force_insert=True)
        else:
            inserted.insert(rows)
        return
    batch = firing.current()
    batch.reserve_ids(rows)
    for row in rows:
        row._state.adding, row._state.db = False, batch.using  # noqa: SLF001 - as insert sets it
    collected.rows.extend(rows)
