"""The delay kind (SPEC T4): call a registered operation at an instant.

A delay fires in place 5, with the deadlines: it is most often an object's own deadline
(an order to expire, a link to close).
"""

from __future__ import annotations

from datetime import timedelta

from timekeeping.basics import json_text
from timekeeping.models import Timer
from timekeeping.timers.delays import get_operation
from timekeeping.timers.firing import Drop, Firing

# `json.dumps(…, separators=(",", ":"), default=str)`, its encoder made once, not per timer.
_input_text = json_text.encoder(str, separators=(",", ":"))


def describe(timer: Timer) -> str:
    payload = timer.payload
    text = _input_text(payload.get("input"))
    return f"{payload.get('operation')} {text[:60]}"


def fire(timer: Timer, firing: Firing) -> str:
    overdue = timer.payload.get("overdue_s")
    late = firing.instant - timer.owed
    if overdue is not None and late > timedelta(seconds=overdue):
        raise Drop(f"reached {late} after it was owed, past its overdue bound of {overdue:g}s")
    name = timer.payload["operation"]
    result = get_operation(name)(input=timer.payload.get("input"), now=firing.instant,
                                 brand=firing.brand)
    return describe(timer) + (f" → {result}" if isinstance(result, str) and result else "")
