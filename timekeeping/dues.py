"""Due rules: how a clock's civil date is found (DESIGN decision 7).

A rule is data, exactly one of:

    {"date": "2028-04-15"}                         a fixed date
    {"after_period": {"months": 4, "day": 15}}     the 15th day of the 4th month after the
                                                   period ends
    {"input": "reply_by"}                          a field of the job's input (YYYY-MM-DD)
    {"clock": "file", "days": -3}                  another clock of the job (same item), moved
                                                   by whole calendar days (0 by default)
    {"function": "tax.earliest_expiry"}            a registered Python function

and may carry `"items": {"US-NJ": {<rule>}}` for items whose rule differs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from dateutil.relativedelta import relativedelta

FORMS = ("date", "after_period", "input", "clock", "function")
DueFunction = Callable[..., date | None]
_functions: dict[str, DueFunction] = {}


def due_function(name: str) -> Callable[[DueFunction], DueFunction]:
    """Register a due rule written in Python: `fn(*, job, item, period_end) -> date | None`."""

    def decorator(function: DueFunction) -> DueFunction:
        _functions[name] = function
        return function

    return decorator


def is_registered(name: str) -> bool:
    return name in _functions


@dataclass(frozen=True)
class DueContext:
    period_end: date | None
    job_input: dict
    item: str
    job: object = None
    other_clock: Callable[[str, str], date | None] | None = None


def rule_for_item(rule: dict, item: str) -> dict:
    per_item = rule.get("items") or {}
    return per_item.get(item, rule) if item else rule


def evaluate(rule: dict, context: DueContext) -> date | None:
    """The civil date a rule gives, or None when it cannot answer (a missing input)."""
    rule = rule_for_item(rule, context.item)
    if "date" in rule:
        return date.fromisoformat(rule["date"])
    if "after_period" in rule:
        if context.period_end is None:
            return None
        months, day = rule["after_period"]["months"], rule["after_period"]["day"]
        month = context.period_end + relativedelta(months=months)
        return month + relativedelta(day=day)  # clamps to the month's last day
    if "input" in rule:
        value = context.job_input.get(rule["input"])
        try:
            return date.fromisoformat(str(value)) if value else None
        except ValueError:
            return None
    if "clock" in rule:
        found = context.other_clock(rule["clock"], context.item) if context.other_clock else None
        return found + timedelta(days=rule.get("days", 0)) if found else None
    if "function" in rule:
        return _functions[rule["function"]](job=context.job, item=context.item,
                                            period_end=context.period_end)
    return None
