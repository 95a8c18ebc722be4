"""Timers written in one statement that answers which were written.

    store(timers) -> the ids written

A timer is written unless a live one holds its key already (the live key's unique index, `ON
CONFLICT DO NOTHING`: of two processes arming one key, one row results). The statement says
which rows it wrote (`RETURNING`), so no second one reads them back (issue 32: arming a date's
rungs, and the timers armed with a firing batch, each took a read after its insert).
"""

from __future__ import annotations

from django.db import connections, router
from django.db.models.constants import OnConflict

from timekeeping.models import Timer


def store(timers: list[Timer]) -> set[str]:
    """Write the timers, each skipped whose live key another timer holds; the ids written.
    One statement on PostgreSQL; on SQLite, as many as its limit on parameters asks."""
    if not timers:
        return set()
    using = router.db_for_write(Timer)
    fields = [field for field in Timer._meta.concrete_fields]
    size = connections[using].ops.bulk_batch_size(fields, timers) or len(timers)
    written: set[str] = set()
    for start in range(0, len(timers), size):
        # What `bulk_create(ignore_conflicts=True)` sends, asked to return the rows it wrote
        # (it does not: it cannot pair them with its objects, a conflict leaving a gap).
        rows = Timer.objects._insert(  # noqa: SLF001 - bulk_create's own path, with RETURNING
            timers[start:start + size], fields=fields, using=using,
            returning_fields=[Timer._meta.pk], on_conflict=OnConflict.IGNORE)
        written.update(row[0] for row in rows if row)
    return written
