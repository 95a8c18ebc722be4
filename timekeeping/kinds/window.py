"""The window kind (place 7): an acceptance window closes and the job's charge is released
(S21); see timekeeping.recurring.charges."""

from __future__ import annotations

from timekeeping.firing import Firing
from timekeeping.kinds import Place, register
from timekeeping.models import Timer
from timekeeping.recurring import charges


def describe(timer: Timer) -> str:
    return "the acceptance window closes"


@register("window", place=Place.WINDOW, describe=describe)
def fire(timer: Timer, firing: Firing) -> str:
    return charges.fire(timer.payload["job"], firing.instant)
