"""The task kind (place 4): a hold's warning at three quarters and its end (S10); see
timekeeping.jobs.tasks."""

from __future__ import annotations

from timekeeping.jobs import tasks
from timekeeping.models import Timer
from timekeeping.timers.firing import Firing


def describe(timer: Timer) -> str:
    title = timer.payload.get("title", "")
    if timer.payload.get("mark") == "warn":
        return f"{title} · the hold's warning, then its end"
    return f"{title} · the hold ends"


def fire(timer: Timer, firing: Firing) -> str:
    return tasks.fire(timer.payload["task"], timer.payload["mark"], timer.payload["hold"],
                      firing.instant)
