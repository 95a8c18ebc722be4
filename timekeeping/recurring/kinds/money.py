"""The money kind (place 8): a plan's charge is collected, or dunned (S19; see
timekeeping.recurring.dunning); a week of a standby season accrues its retainer (S20; see
timekeeping.jobs.standby)."""

from __future__ import annotations

from datetime import datetime

from timekeeping.jobs import standby
from timekeeping.models import Timer
from timekeeping.recurring import dunning
from timekeeping.timers.firing import Firing


def describe(timer: Timer) -> str:
    if "standby" in timer.payload:
        return f"standby retainer · week {timer.payload.get('week')}"
    attempt = timer.payload.get("attempt", 0)
    return (f"collect · cycle {timer.payload.get('cycle')}"
            + (f" · retry {attempt}" if attempt else ""))


def fire(timer: Timer, firing: Firing) -> str:
    if "standby" in timer.payload:
        return standby.accrue(timer.payload["standby"], timer.payload["week"], firing.instant)
    return dunning.collect(timer.payload["subscription"], timer.payload["cycle"],
                           timer.payload["attempt"], firing.instant,
                           since=datetime.fromisoformat(timer.payload["since"]))
