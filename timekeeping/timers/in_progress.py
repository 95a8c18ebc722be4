"""The firing in progress in this context, if any, and the time of an operation on a brand
clock (the firing's instant inside one). Its own module so that what a firing buffers
(records, deliveries, timers) can ask for the batch without importing `firing`, which
imports them."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from timekeeping.basics import wallclock
from timekeeping.models import Brand, TestClock
from timekeeping.timers import gathered

if TYPE_CHECKING:
    from timekeeping.timers.firing import Firing

T = TypeVar("T")

_current: ContextVar[Firing | None] = ContextVar("keeping_time_current_firing", default=None)


def current() -> Firing | None:
    """The batch being fired in this context, if any."""
    return _current.get()


def enter(batch: Firing) -> Token:
    """Make the batch the one being fired in this context; `leave` with the token."""
    return _current.set(batch)


def leave(token: Token) -> None:
    _current.reset(token)


def read_once(brand_id: str, name: object, read: Callable[[], T]) -> T:
    """What `read()` answers: inside a firing of the brand, read once for the batch (its
    `memo`, under `name`); else inside an operation that gathers its writes (an order,
    `timekeeping.timers.gathered`), once for it; else read now. A batch is one transaction, so
    what it reads first is what its timers fire on, unless `forget` says the brand changed."""
    kept = _memo(brand_id, name)
    if kept is None:
        return read()
    memo, key = kept
    if key not in memo:
        memo[key] = read()
    return memo[key]


def known(brand_id: str, name: object) -> object | None:
    """What `read_once` has read under `name` for the firing of the brand (or the operation
    that gathers its writes), or None if it has not: for a module that keeps what it read
    current as it changes it (a job's steps started, `timekeeping.jobs.common.note_made`)."""
    kept = _memo(brand_id, name)
    if kept is None:
        return None
    memo, key = kept
    return memo.get(key)


def _memo(brand_id: str, name: object) -> tuple[dict, object] | None:
    batch = current()
    if batch is not None and batch.brand.pk == brand_id:
        return batch.memo, name
    if (gathering := gathered.current()) is not None:
        return gathering.memo, (brand_id, name)
    return None


def forget(brand: Brand) -> None:
    """The brand changed inside a firing of it (a manifest loaded, a postponement made, a
    subject erased, by a delay's operation): what the batch read once, and what its kinds
    read for its timers (`Firing.keep_read`), is read again when next asked for."""
    batch = current()
    if batch is not None and batch.brand.pk == brand.pk:
        batch.memo.clear()
        batch.read.clear()
        batch.read_of_job.clear()


def now_for(brand: Brand, test_clock: TestClock | None) -> datetime:
    """The time of an operation on a brand clock: inside a firing of that brand, the firing's
    instant; outside one, the clock's now (its test clock's, if it has one)."""
    batch = current()
    if batch is not None and batch.brand.pk == brand.pk:
        return batch.instant
    return wallclock.now(brand=brand, test_clock=test_clock)
