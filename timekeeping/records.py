"""Writing to the record. Inside a firing the record joins the batch's bulk write; outside,
it is written at once."""

from __future__ import annotations

from datetime import datetime

from timekeeping import firing
from timekeeping.models import Brand, Record, TestClock


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
