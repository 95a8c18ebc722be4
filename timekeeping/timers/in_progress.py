"""The firing in progress in this context, if any, and the time of an operation on a brand
clock (the firing's instant inside one). Its own module so that what a firing buffers
(records, deliveries, timers) can ask for the batch without importing `firing`, which
imports them."""

from __future__ import annotations

from contextvars import ContextVar, Token
from datetime import datetime
from typing import TYPE_CHECKING

from timekeeping.basics import wallclock
from timekeeping.models import Brand, TestClock

if TYPE_CHECKING:
    from timekeeping.timers.firing import Firing

_current: ContextVar[Firing | None] = ContextVar("keeping_time_current_firing", default=None)


def current() -> Firing | None:
    """The batch being fired in this context, if any."""
    return _current.get()


def enter(batch: Firing) -> Token:
    """Make the batch the one being fired in this context; `leave` with the token."""
    return _current.set(batch)


def leave(token: Token) -> None:
    _current.reset(token)


def now_for(brand: Brand, test_clock: TestClock | None) -> datetime:
    """The time of an operation on a brand clock: inside a firing of that brand, the firing's
    instant; outside one, the clock's now (its test clock's, if it has one)."""
    batch = current()
    if batch is not None and batch.brand.pk == brand.pk:
        return batch.instant
    return wallclock.now(brand=brand, test_clock=test_clock)
