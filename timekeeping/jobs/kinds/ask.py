"""The ask kind (place 3): a party's link, its reminder the day before and its expiry (S8);
see timekeeping.jobs.asks."""

from __future__ import annotations

from timekeeping.jobs import asks, common
from timekeeping.models import Ask, Timer
from timekeeping.timers.firing import Firing


def describe(timer: Timer) -> str:
    title = timer.payload.get("title", "")
    if timer.payload.get("mark") == "remind":
        return f"{title} · a reminder the day before, then its expiry"
    return f"{title} · its link expires"


def prepare(timers: list[Timer], firing: Firing) -> None:
    """The batch's asks, read at once (`common.keep_fired`)."""
    common.keep_fired(firing, Ask, "ask", timers)


def fire(timer: Timer, firing: Firing) -> str:
    ask = timer.payload["ask"]
    return asks.fire(ask, timer.payload["mark"], firing.instant,
                     read=firing.take_read("ask", ask))
