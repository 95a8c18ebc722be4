"""The deadline kind (place 5): a job's or a step's deadline at risk (three quarters of its
work time) and late (S6, S7); see timekeeping.jobs.deadlines."""

from __future__ import annotations

from timekeeping.firing import Firing
from timekeeping.jobs import deadlines
from timekeeping.kinds import Place, register
from timekeeping.models import Deadline, Timer


def describe(timer: Timer) -> str:
    rule = Deadline.objects.filter(pk=timer.payload.get("deadline")).values_list(
        "rule", flat=True).first() or "?"
    return deadlines.describe(timer.payload, rule)


@register("deadline", place=Place.DEADLINE, describe=describe)
def fire(timer: Timer, firing: Firing) -> str:
    return deadlines.fire(timer.payload["deadline"], timer.payload["mark"], firing.instant)
