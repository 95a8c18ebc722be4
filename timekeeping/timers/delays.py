"""A delay per object (SPEC T4): one call to be made later, stored so it survives restarts.

    from timekeeping.timers.delays import delay, cancel, operation

    @operation("shop.expire_order")         # in an `operations` module of an installed app
    def expire_order(*, input, now, brand): ...   # re-checks the state it finds

    timer_id = delay("shop.expire_order", {"order": 7}, brand=brand, at=instant, overdue=None)
    cancel(timer_id)                         # True if it was still armed

A delay that the tick reaches after `owed + overdue` is dropped and recorded, never run;
`overdue=None` never drops.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta

from timekeeping.models import Brand, TestClock, Timer
from timekeeping.timers import arming

Operation = Callable[..., object]
_operations: dict[str, Operation] = {}
_NAME = re.compile(r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$")


def operation(name: str) -> Callable[[Operation], Operation]:
    """Register a target for delays under a dotted name, `<domain>.<action>`."""
    if not _NAME.match(name):
        raise ValueError(f"operation: {name!r} is not a dotted name such as 'shop.expire_order'")

    def decorator(function: Operation) -> Operation:
        _operations[name] = function
        return function

    return decorator


def get_operation(name: str) -> Operation:
    try:
        return _operations[name]
    except KeyError:
        raise LookupError(
            f"operation: no operation named {name!r}; register one with @operation in an "
            "`operations` module of an installed app"
        ) from None


def delay(
    name: str, input: dict, *, brand: Brand, at: datetime,
    overdue: timedelta | int | float | None = None,
    test_clock: TestClock | None = arming.SAME_CLOCK,
    key: str | None = None, owner: str = "",
) -> str:
    """Arm a delay: call operation `name` with `input` at `at`. Returns the timer's id.

    `key` makes arming idempotent (the same key on the same clock returns the same timer);
    without one each call arms a new delay. `owner` names the object it is for. Without
    `test_clock`, a delay armed by an operation that a firing runs goes on that firing's
    clock; anywhere else, on the brand's real clock.
    """
    get_operation(name)
    if at.tzinfo is None:
        raise ValueError("at: give an aware instant")
    if isinstance(overdue, timedelta):
        overdue = overdue.total_seconds()
    if overdue is not None and overdue < 0:
        raise ValueError("overdue: a bound is zero or more (seconds or a timedelta), or None")
    timer = arming.arm(
        brand=brand, test_clock=test_clock, kind="delay", owed=at,
        key=key or f"delay:{uuid.uuid4().hex}", owner_type="delay", owner_id=owner or name,
        payload={"operation": name, "input": input, "overdue_s": overdue},
    )
    return timer.id


def cancel(timer_id: str) -> bool:
    """Cancel a delay by its id. True if it was still armed (or held)."""
    return arming.end(timer_id, state=Timer.State.CANCELLED, by="cancel()")
