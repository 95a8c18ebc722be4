"""The ask kind (place 3): a party's link, its reminder the day before and its expiry (S8);
see timekeeping.jobs.asks."""

from __future__ import annotations

from timekeeping.jobs import asks
from timekeeping.models import Timer
from timekeeping.timers.firing import Firing


def describe(timer: Timer) -> str:
    title = timer.payload.get("title", "")
    if timer.payload.get("mark") == "remind":
        return f"{title} · a reminder the day before, then its expiry"
    return f"{title} · its link expires"


def fire(timer: Timer, firing: Firing) -> str:
    return asks.fire(timer.payload["ask"], timer.payload["mark"], firing.instant)
