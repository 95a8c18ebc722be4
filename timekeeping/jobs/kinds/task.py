"""The task kind (place 4): a hold's warning at three quarters and its end (S10); see
timekeeping.jobs.tasks."""

from __future__ import annotations

from timekeeping.jobs import common, tasks
from timekeeping.models import Task, Timer
from timekeeping.timers.firing import Firing


def describe(timer: Timer) -> str:
    title = timer.payload.get("title", "")
    if timer.payload.get("mark") == "warn":
        return f"{title} · the hold's warning, then its end"
    return f"{title} · the hold ends"


def prepare(timers: list[Timer], firing: Firing) -> None:
    """The batch's held tasks, read at once with their holders (`common.keep_fired`)."""
    common.keep_fired(firing, Task, "task", timers, *tasks.FIRED_ALSO)


def fire(timer: Timer, firing: Firing) -> str:
    task = timer.payload["task"]
    return tasks.fire(task, timer.payload["mark"], timer.payload["hold"], firing.instant,
                      read=firing.take_read("task", task))
