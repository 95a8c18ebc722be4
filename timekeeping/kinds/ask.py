"""The ask kind (place 3): a party's link, its reminder the day before and its expiry (S8);
see timekeeping.jobs.asks."""

from __future__ import annotations

from timekeeping.firing import Firing
from timekeeping.jobs import asks, lifecycle  # noqa: F401 - lifecycle registers its hooks
from timekeeping.kinds import Place, register
from timekeeping.models import Timer


def describe(timer: Timer) -> str:
    title = timer.payload.get("title", "")
    if timer.payload.get("mark") == "remind":
        return f"{title} · a reminder the day before, then its expiry"
    return f"{title} · its link expires"


@register("ask", place=Place.ASK, describe=describe)
def fire(timer: Timer, firing: Firing) -> str:
    return asks.fire(timer.payload["ask"], timer.payload["mark"], firing.instant)
