"""Writing to the record. Inside a firing the record joins the batch's bulk write; outside,
it is written at once.

`write_many` is the bulk path: on PostgreSQL it streams the rows with COPY (Django's
bulk_create builds one UNNEST array per column, which costs more than the firing itself on
the tick's hot path); elsewhere it uses bulk_create.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection

from timekeeping import firing
from timekeeping.models import Brand, Record, TestClock
from timekeeping.public_ids import new_id

COLUMNS = ("id", "kind", "instant", "brand_id", "test_clock_id", "subject", "job", "timer",
           "data")


@dataclass
class Entry:
    """A record not yet written: what happened, to what."""

    kind: str
    timer: str = ""
    subject: str = ""
    job: str = ""
    data: dict = field(default_factory=dict)


def write(
    kind: str, *, brand: Brand, instant: datetime, test_clock: TestClock | None = None,
    subject: str = "", job: str = "", timer: str = "", data: dict | None = None,
) -> None:
    batch = firing.current()
    if batch is not None and batch.brand.pk == brand.pk:
        batch.record(kind, timer=timer, subject=subject, job=job, data=data)
        return
    Record.objects.create(kind=kind, instant=instant, brand=brand, test_clock=test_clock,
                          subject=subject, job=job, timer=timer, data=data or {})


def write_many(entries: list[Entry], *, brand: Brand, test_clock: TestClock | None,
               instant: datetime) -> None:
    """Write entries that happened at one instant on one brand clock, in one statement."""
    if not entries:
        return
    if connection.vendor != "postgresql":
        Record.objects.bulk_create([
            Record(kind=e.kind, instant=instant, brand=brand, test_clock=test_clock,
                   timer=e.timer, subject=e.subject, job=e.job, data=e.data)
            for e in entries
        ])
        return
    encoder = DjangoJSONEncoder()
    test_clock_id = test_clock.pk if test_clock is not None else None
    with connection.cursor() as cursor:
        with cursor.cursor.copy(
            f"COPY {Record._meta.db_table} ({', '.join(COLUMNS)}) FROM STDIN"
        ) as copy:
            for e in entries:
                copy.write_row((new_id("rec"), e.kind, instant, brand.pk, test_clock_id,
                                e.subject, e.job, e.timer,
                                json.dumps(e.data, default=encoder.default)))
