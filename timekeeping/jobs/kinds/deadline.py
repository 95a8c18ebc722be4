"""The deadline kind (place 5): a job's or a step's deadline at risk (three quarters of its
work time) and late (S6, S7); see timekeeping.jobs.deadlines."""

from __future__ import annotations

from timekeeping.jobs import deadlines
from timekeeping.models import Deadline, Timer
from timekeeping.timers.firing import Firing


def describe(timer: Timer) -> str:
    rule = Deadline.objects.filter(pk=timer.payload.get("deadline")).values_list(
        "rule", flat=True).first() or "?"
    return deadlines.describe(timer.payload, rule)


def fire(timer: Timer, firing: Firing) -> str:
    return deadlines.fire(timer.payload["deadline"], timer.payload["mark"], firing.instant)
