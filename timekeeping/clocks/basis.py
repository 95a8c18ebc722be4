"""What the rest of the clocks stand on: the refusals an order or a person's action meets,
and the calendar and clock a subject's dates are read on.
"""

from __future__ import annotations

from calendars import rules
from timekeeping.models import Subject
from timekeeping.timers import firing


class PeriodTaken(Exception):
    """A subject already holds a job of this Service for this period (SPEC S17)."""


class OrderRefused(Exception):
    """An order refused, naming the field and the rule. `code` names the rule for the record
    (`plan_lacks_key`; else `order_refused`), `said` says it in an owner's words when the
    message is the engine's (a mint refused on its schedule tells the owner, S23)."""

    def __init__(self, field: str, message: str, *, code: str = "order_refused",
                 said: str = ""):
        super().__init__(f"{field}: {message}")
        self.field, self.message, self.code, self.said = field, message, code, said


def calendar_for(subject: Subject) -> rules.Calendar:
    """The brand's calendar, read in the subject's zone: a due closes in the subject's zone."""
    base = subject.brand.calendar_rules()
    if not subject.zone or subject.zone == base.zone:
        return base
    return rules.Calendar(zone=subject.zone, weekends=base.weekends, holidays=base.holidays,
                          closed=base.closed, closes=base.closes, rings_at=base.rings_at,
                          roll=base.roll_rule)


now_for = firing.now_for
