"""Records by month on PostgreSQL (issue 14, "Years of history"; docs/scale.md).

`timekeeping_record` is partitioned by range of `written`, the database's time when the row was
written, one partition a month (`timekeeping_record_y2026m12`). A firing writes its records
into the current month's partition, whose indexes hold a month of records, not the years
kept: the firing costs the same after ten million records as on the first day. Records from
before partitioning are in `timekeeping_record_before` (their `written` is 1970-01-01), and a
`timekeeping_record_default` partition takes a row no month covers, so a write never fails
for want of a month.

Housekeeping calls `ensure()` each hour: it makes this month and the next two (by the
database's clock, as `written` is), and moves into a new month any rows the default
partition took for it. With `RECORDS_KEEP_MONTHS` set, `drop_past()` detaches and drops the
months wholly older than that many months before this one: a month is dropped whole, never
deleted row by row. None is dropped by default: records are the product's memory.

Every name here is made from a year and a month, never from input, checked against the
identifier pattern of the brands' tables and quoted by the database's own quoting; the bounds
are timestamps the code computes, passed as parameters.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from dateutil.relativedelta import relativedelta
from django.db import connections, transaction

from timekeeping.moves.tables import safe

PARENT = "timekeeping_record"
BEFORE = "timekeeping_record_before"
DEFAULT = "timekeeping_record_default"
AHEAD = 2  # months made ahead of the current one
MONTH_NAME = re.compile(r"timekeeping_record_y(\d{4})m(\d{2})")


@dataclass(frozen=True)
class Month:
    name: str
    starts: datetime

    @property
    def ends(self) -> datetime:
        return add_months(self.starts, 1)


def add_months(starts: datetime, months: int) -> datetime:
    return starts + relativedelta(months=months)


def month_of(instant: datetime) -> Month:
    starts = datetime(instant.year, instant.month, 1, tzinfo=UTC)
    return Month(f"timekeeping_record_y{starts.year:04d}m{starts.month:02d}", starts)


def partitioned(using: str = "default") -> bool:
    connection = connections[using]
    if connection.vendor != "postgresql":
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT relkind FROM pg_class WHERE oid = to_regclass(%s)", [PARENT])
        found = cursor.fetchone()
    return found is not None and found[0] == "p"


def months(using: str = "default") -> list[Month]:
    """The monthly partitions there are, oldest first."""
    connection = connections[using]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT child.relname FROM pg_inherits JOIN pg_class child ON child.oid = inhrelid "
            "WHERE inhparent = to_regclass(%s)", [PARENT])
        names = [name for (name,) in cursor.fetchall()]
    found = []
    for name in names:
        matched = MONTH_NAME.fullmatch(name)
        if matched:
            found.append(Month(name, datetime(int(matched[1]), int(matched[2]), 1, tzinfo=UTC)))
    return sorted(found, key=lambda month: month.starts)


def database_now(using: str = "default") -> datetime:
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT now()")
        return cursor.fetchone()[0].astimezone(UTC)


def _this_month(using: str) -> Month | None:
    """This month by the database's clock (as `written` is); None where records are not
    partitioned."""
    return month_of(database_now(using)) if partitioned(using) else None


def keep(keep_months: int, using: str = "default") -> tuple[list[str], list[str]]:
    """Housekeeping's pass: the months made ahead (`ensure`) and those dropped past
    `keep_months` (`drop_past`), reading the database's month once."""
    this = _this_month(using)
    if this is None:
        return [], []
    return _ensure(this, using), _drop_past(this, keep_months, using)


def ensure(using: str = "default") -> list[str]:
    """Make this month and the next `AHEAD` (by the database's clock); the names made."""
    this = _this_month(using)
    return _ensure(this, using) if this is not None else []


def _ensure(this: Month, using: str) -> list[str]:
    have = {month.name for month in months(using)}
    made = []
    for ahead in range(AHEAD + 1):
        month = month_of(add_months(this.starts, ahead))
        if month.name not in have:
            make(month, using)
            made.append(month.name)
    return made


def make(month: Month, using: str = "default") -> None:
    """One month's partition. Rows the default partition took for that month move into it
    in the same transaction (PostgreSQL refuses a month while the default holds its rows)."""
    connection = connections[using]
    quote = _quoting(connection)
    bounds = [month.starts, month.ends]
    with transaction.atomic(using=using), connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE {quote(month.name)} (LIKE {quote(PARENT)} "
                       "INCLUDING DEFAULTS)")
        cursor.execute(f"WITH moved AS (DELETE FROM {quote(DEFAULT)} WHERE written >= %s AND "
                       f"written < %s RETURNING *) INSERT INTO {quote(month.name)} "
                       "SELECT * FROM moved", bounds)
        cursor.execute(f"ALTER TABLE {quote(PARENT)} ATTACH PARTITION {quote(month.name)} "
                       "FOR VALUES FROM (%s) TO (%s)", bounds)


def drop_past(keep_months: int, using: str = "default") -> list[str]:
    """Detach and drop the months that end before the first of the `keep_months` kept
    (this month counts as one); the names dropped. 0 keeps every month."""
    this = _this_month(using) if keep_months > 0 else None
    return _drop_past(this, keep_months, using) if this is not None else []


def _drop_past(this: Month, keep_months: int, using: str) -> list[str]:
    if keep_months <= 0:
        return []
    cutoff = add_months(this.starts, 1 - keep_months)
    connection = connections[using]
    quote = _quoting(connection)
    dropped = []
    for month in months(using):
        if month.ends > cutoff:
            break
        with transaction.atomic(using=using), connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE {quote(PARENT)} DETACH PARTITION {quote(month.name)}")
            cursor.execute(f"DROP TABLE {quote(month.name)}")
        dropped.append(month.name)
    return dropped


def _quoting(connection):
    """The database's quoting, of names that match the identifier pattern (else UnsafeName)."""
    return lambda name: connection.ops.quote_name(safe(name))
