"""Due rules: how a clock's civil date is found (DESIGN decision 7).

A rule is data, exactly one of:

    {"date": "2028-04-15"}                         a fixed date
    {"after_period": {"months": 4, "day": 15}}     the 15th day of the 4th month after the
                                                   period ends
    {"input": "reply_by"}                          a field of the job's input (YYYY-MM-DD)
    {"clock": "file", "days": -3}                  another clock of the job (same item), moved
                                                   by whole calendar days (0 by default)
    {"function": "tax.earliest_expiry"}            a registered Python function
    {"after_kept": {"clock": "file", "item": "US",  measured from when another clock of the
                    "years": 3}}                   job was kept: that day, or its first due
                                                   date if later, plus whole years; until it
                                                   is kept, from its first due date (a
                                                   refund window runs from the filing)

and may carry `"items": {"US-NJ": {<rule>}}` for items whose rule differs, and
`"quarters": {"Q1": {<rule>}}` for a job whose period is that quarter ("2027-Q1"): estimated
tax is due on the 15th of the month after the first quarter, and inside the other three.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from dateutil.relativedelta import relativedelta

FORMS = ("date", "after_period", "input", "clock", "function", "after_kept")
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
    period: str = ""  # the job's period label ("2027-Q1"), for a rule with `quarters`
    # (the day another clock's item was kept or None, its first due date), or None when the
    # job has no such date
    other_kept: Callable[[str, str], tuple[date | None, date] | None] | None = None


QUARTER = re.compile(r"\d{4}-(?P<quarter>Q[1-4])")


def rule_for_item(rule: dict, item: str, period: str = "") -> dict:
    """The rule an item of a period keeps: the item's own, else the quarter's own, else the
    rule itself."""
    per_item = rule.get("items") or {}
    if item and item in per_item:
        return per_item[item]
    quarter = QUARTER.fullmatch(period or "")
    per_quarter = rule.get("quarters") or {}
    if quarter is not None and quarter["quarter"] in per_quarter:
        return per_quarter[quarter["quarter"]]
    return rule


def evaluate(rule: dict, context: DueContext) -> date | None:
    """The civil date a rule gives, or None when it cannot answer (a missing input)."""
    rule = rule_for_item(rule, context.item, context.period)
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
    if "after_kept" in rule:
        measured = rule["after_kept"]
        found = context.other_kept(measured["clock"], measured.get("item", context.item)) \
            if context.other_kept else None
        if found is None:
            return None
        kept, first_due = found
        return max(kept or first_due, first_due) + relativedelta(years=measured["years"])
    if "function" in rule:
        return _functions[rule["function"]](job=context.job, item=context.item,
                                            period_end=context.period_end)
    return None
