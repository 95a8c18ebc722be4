"""The cycle kind (place 1): a subscription renews (S19); see timekeeping.recurring.plans."""

from __future__ import annotations

from timekeeping.models import Timer
from timekeeping.recurring import plans
from timekeeping.timers.firing import Firing


def describe(timer: Timer) -> str:
    return f"renews · cycle {timer.payload.get('cycle')}"


def fire(timer: Timer, firing: Firing) -> str:
    return plans.renew(timer.payload["subscription"], timer.payload["cycle"], firing.instant,
                       owed=timer.owed)
