"""The deadline kind (place 5): a job's or a step's deadline at risk (three quarters of its
work time) and late (S6, S7); see timekeeping.jobs.deadlines."""

from __future__ import annotations

from functools import lru_cache

from timekeeping.jobs import common, deadlines
from timekeeping.models import Deadline, Timer
from timekeeping.timers.firing import Firing


def describe(timer: Timer) -> str:
    return deadlines.describe(timer.payload, _rule_of(timer.payload.get("deadline")) or "?")


@lru_cache(maxsize=4096)
def _rule_of(deadline: str | None) -> str | None:
    """A deadline's rule as written, read once a process: it never changes after the deadline
    starts (a walk's trace describes every deadline timer it arms: one read each, issue 32)."""
    return Deadline.objects.filter(pk=deadline).values_list("rule", flat=True).first()


def prepare(timers: list[Timer], firing: Firing) -> None:
    """The batch's deadlines, read at once (`common.keep_fired`)."""
    common.keep_fired(firing, Deadline, "deadline", timers)


def fire(timer: Timer, firing: Firing) -> str:
    deadline = timer.payload["deadline"]
    return deadlines.fire(deadline, timer.payload["mark"], firing.instant,
                          read=firing.take_read("deadline", deadline))
