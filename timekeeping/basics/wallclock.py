"""The one place that reads the wall clock (DESIGN decision 1).

Domain code asks this module for `now` and passes it down; nothing else calls
`datetime.now()`. A brand's real clock is the wall clock; a test clock's time is its frozen
time, which only its advance moves. Inside `fixed(instant)` every reading returns that instant:
a tick and a schedule run see one time from start to end (J4).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from timekeeping.models import Brand, TestClock

_fixed: ContextVar[datetime | None] = ContextVar("keeping_time_fixed_now", default=None)


def wall_now() -> datetime:
    """The real time, aware, in UTC. Honours `fixed()`."""
    return _fixed.get() or datetime.now(UTC)


def now(*, brand: Brand | None = None, test_clock: TestClock | None = None) -> datetime:
    """Now on a brand's clock: its test clock's frozen time, else the real time."""
    if test_clock is not None:
        if brand is not None and test_clock.brand_id != brand.pk:
            raise ValueError(f"test clock {test_clock.pk} does not belong to brand {brand.pk}")
        return test_clock.frozen_time
    return wall_now()


@contextmanager
def fixed(instant: datetime) -> Iterator[datetime]:
    """Fix the real clock at `instant` for the code inside (a tick, a run, a test)."""
    if instant.tzinfo is None:
        raise ValueError("clock.fixed needs an aware datetime")
    token = _fixed.set(instant.astimezone(UTC))
    try:
        yield instant
    finally:
        _fixed.reset(token)
