"""What the gate asks of the clocks: its checks (the items named are the job's; no hard
date that bars the step has passed) and a committed step's effects (the dates it keeps, the
dates it moves). The package's `register` registers them with the gate.
"""

from __future__ import annotations

from datetime import datetime

from timekeeping.clocks.opening import items_of
from timekeeping.clocks.steps import date_passed, move, satisfy
from timekeeping.models import Job
from timekeeping.specs.current import services_of


def check_items_known(job: Job, step: str, items: list[str], now: datetime):
    service = services_of(job.bundle)[job.service]
    known = {item for spec in service.clocks.values() for item in items_of(job, spec)}
    unknown = [item for item in items if item not in known]
    if unknown:
        return "item_unknown", f"{', '.join(unknown)} is not an item of job {job.pk}"
    return None


def check_hard_date(job: Job, step: str, items: list[str], now: datetime):
    passed = date_passed(job, step, items, now)
    if passed is not None:
        return "date_passed", (f"the hard date {passed.clock.name}"
                               f"{' ' + passed.item if passed.item else ''} of {passed.due} "
                               f"has passed, and it bars '{step}'")
    return None


def effect_satisfied(job: Job, step: str, items: list[str], now: datetime, outcome) -> None:
    outcome.satisfied = satisfy(job, step, items, now)


def effect_moved(job: Job, step: str, items: list[str], now: datetime, outcome) -> None:
    outcome.moved = move(job, step, items)
