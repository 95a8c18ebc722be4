"""The schedule kind (place 2): a plan's schedule mints a job for a period (S18); see
timekeeping.recurring.plans."""

from __future__ import annotations

from timekeeping.models import Timer
from timekeeping.recurring import plans
from timekeeping.timers.firing import Firing


def describe(timer: Timer) -> str:
    return (f"{timer.payload.get('schedule')} · period {timer.payload.get('period')}, the "
            "next")


def fire(timer: Timer, firing: Firing) -> str:
    return plans.mint(timer.payload["subscription"], timer.payload["schedule"],
                      timer.payload["period"], timer, firing.instant)
