"""The grant kind (place 3, with the asks): a grant's term ends (S9); see
timekeeping.jobs.grants."""

from __future__ import annotations

from timekeeping.jobs import grants
from timekeeping.models import Timer
from timekeeping.timers.firing import Firing


def describe(timer: Timer) -> str:
    return "the grant's term ends"


def fire(timer: Timer, firing: Firing) -> str:
    return grants.fire(timer.payload["grant"], firing.instant)
