"""Periods and cycle dates: pure arithmetic on civil dates (DESIGN "Public Python API of
`calendars.periods`"). No database, no clock, no zone: a period is a span of days.

    period("tax_year", "2027")                       2027-01-01 .. 2028-01-01
    period("fiscal_year", "2027", starts="07-01")    2026-07-01 .. 2027-07-01 (named by its end)
    period("quarter", "2027-Q2")                     2027-04-01 .. 2027-07-01
    period("quarter", "2027-Q1", starts="07-01")     2026-07-01 .. 2026-10-01 (fiscal)
    period("month", "2027-02"), period("week", "2027-W05")   (ISO weeks start on Monday)
    period_of(day, kind, starts=None)                the period holding a day
    at(p, "1mo after end")                           a day relative to a period's edge
    offset(day, "+1mo")                              months and years clamp to the month's end
    cycle_date(anchor, "1mo", n)                     the n-th renewal, counted from the anchor

Periods are half-open: `start` is their first day, `end` the first day after. A year's
`starts` ("MM-DD") makes it a fiscal year, named by the year its last day falls in, and its
quarters the three-month spans from that day. Bad arguments raise ValueError naming the
argument and the rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from dateutil.relativedelta import relativedelta

KINDS = ("tax_year", "year", "fiscal_year", "quarter", "month", "week")
YEARS = ("tax_year", "year", "fiscal_year")
FIRST_YEAR, LAST_YEAR = 2, 9998  # a period and its neighbours stay inside the calendar

_YEAR = re.compile(r"(?P<year>\d{4})")
_QUARTER = re.compile(r"(?P<year>\d{4})-Q(?P<quarter>[1-4])")
_MONTH = re.compile(r"(?P<year>\d{4})-(?P<month>\d{2})")
_WEEK = re.compile(r"(?P<year>\d{4})-W(?P<week>\d{2})")
_STARTS = re.compile(r"(?P<month>\d{2})-(?P<day>\d{2})")
_SPAN = re.compile(r"(?P<n>\d{1,5})(?P<unit>d|w|mo|y)")
_OFFSET = re.compile(r"(?P<sign>[+-])(?P<span>\d{1,5}(?:d|w|mo|y))")
_AT = re.compile(r"(?:(?P<span>\d{1,5}(?:d|w|mo|y)) (?P<way>after|before) )?(?P<edge>start|end)")
UNITS = "d (days), w (weeks), mo (months) or y (years)"


@dataclass(frozen=True)
class Period:
    kind: str
    label: str
    start: date
    end: date  # the first day after
    starts: str | None = None  # a fiscal year's first day, "MM-DD"

    def __contains__(self, day: date) -> bool:
        return self.start <= day < self.end

    @property
    def last(self) -> date:
        """Its last day."""
        return self.end - timedelta(days=1)

    def next(self) -> Period:
        return period_of(self.end, self.kind, starts=self.starts)

    def previous(self) -> Period:
        return period_of(self.start - timedelta(days=1), self.kind, starts=self.starts)

    def __str__(self) -> str:
        return f"{self.kind} {self.label} ({self.start} .. {self.end})"


def _starts(kind: str, starts: str | None) -> tuple[int, int] | None:
    """A fiscal year's first month and day, or None for a calendar year."""
    if starts is None:
        if kind == "fiscal_year":
            raise ValueError("starts: a fiscal year needs its first day, written MM-DD "
                             "(\"07-01\")")
        return None
    if kind in ("year", "month", "week"):
        raise ValueError(f"starts: a {kind} has no first day of its own; give starts only "
                         "for a tax_year, fiscal_year or quarter")
    match = _STARTS.fullmatch(starts) if isinstance(starts, str) else None
    try:
        if match is None:
            raise ValueError
        month, day = int(match["month"]), int(match["day"])
        date(2023, month, day)  # 02-29 is no day every year has
    except ValueError:
        raise ValueError(f"starts: {starts!r} is not a first day; write MM-DD, a day every "
                         "year has (\"07-01\", \"04-06\")") from None
    return None if (month, day) == (1, 1) else (month, day)


def _year(text: str, match: re.Match | None, rule: str) -> int:
    if match is None:
        raise ValueError(f"label: {text!r} is not {rule}")
    year = int(match["year"])
    if not FIRST_YEAR <= year <= LAST_YEAR:
        raise ValueError(f"label: {text!r} is outside the years kept ({FIRST_YEAR:04d} to "
                         f"{LAST_YEAR})")
    return year


def _fiscal_start(year: int, first: tuple[int, int] | None) -> date:
    """The first day of the (fiscal) year named `year`: the year its last day falls in."""
    if first is None:
        return date(year, 1, 1)
    return date(year - 1, *first)


def period(kind: str, label: str, *, starts: str | None = None) -> Period:
    """The period of `kind` named `label`."""
    if kind not in KINDS:
        raise ValueError(f"kind: {kind!r} is not a kind of period; the kinds are: "
                         f"{', '.join(KINDS)}")
    if not isinstance(label, str):
        raise ValueError(f"label: {label!r} is not text")
    first = _starts(kind, starts)
    if kind in YEARS:
        year = _year(label, _YEAR.fullmatch(label), "a year, written YYYY (\"2027\")")
        start = _fiscal_start(year, first)
        return Period(kind, label, start, start + relativedelta(years=1), starts)
    if kind == "quarter":
        found = _QUARTER.fullmatch(label)
        year = _year(label, found, "a quarter, written YYYY-Qn with n from 1 to 4 (\"2027-Q2\")")
        quarter = int(found["quarter"])
        year_start = _fiscal_start(year, first)
        start = year_start + relativedelta(months=3 * (quarter - 1))
        return Period(kind, label, start, year_start + relativedelta(months=3 * quarter),
                      starts)
    if kind == "month":
        found = _MONTH.fullmatch(label)
        year = _year(label, found, "a month, written YYYY-MM (\"2027-02\")")
        if not 1 <= int(found["month"]) <= 12:
            raise ValueError(f"label: {label!r} is not a month, written YYYY-MM with MM from "
                             "01 to 12")
        start = date(year, int(found["month"]), 1)
        return Period(kind, label, start, start + relativedelta(months=1))
    found = _WEEK.fullmatch(label)
    year = _year(label, found, "an ISO week, written YYYY-Www (\"2027-W05\")")
    try:
        start = date.fromisocalendar(year, int(found["week"]), 1)
    except ValueError:
        raise ValueError(f"label: {label!r} is not a week of {year}: an ISO year has 52 weeks, "
                         "or 53") from None
    return Period(kind, label, start, start + timedelta(days=7))


def period_of(day: date, kind: str, *, starts: str | None = None) -> Period:
    """The period of `kind` that holds `day`."""
    if not isinstance(day, date):
        raise ValueError(f"day: {day!r} is not a date")
    if kind not in KINDS:
        raise ValueError(f"kind: {kind!r} is not a kind of period; the kinds are: "
                         f"{', '.join(KINDS)}")
    first = _starts(kind, starts)
    if kind == "week":
        year, week, _ = day.isocalendar()
        return period(kind, f"{year:04d}-W{week:02d}")
    if kind == "month":
        return period(kind, f"{day.year:04d}-{day.month:02d}")
    year = day.year if first is None or day < date(day.year, *first) else day.year + 1
    if kind in YEARS:
        return period(kind, f"{year:04d}", starts=starts)
    year_start = _fiscal_start(year, first) if FIRST_YEAR <= year <= LAST_YEAR else None
    if year_start is None:
        raise ValueError(f"day: {day} is outside the years kept")
    months = (day.year - year_start.year) * 12 + day.month - year_start.month
    quarter = months // 3 + 1
    if day < year_start + relativedelta(months=3 * (quarter - 1)):
        quarter -= 1  # a fiscal year starting mid-month: the day is before this quarter's day
    return period(kind, f"{year:04d}-Q{quarter}", starts=starts)


def _span(text: str, argument: str) -> relativedelta:
    match = _SPAN.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"{argument}: {text!r} is not a span; write a whole number and a unit, "
                         f"{UNITS}: \"10d\", \"1mo\"")
    n, unit = int(match["n"]), match["unit"]
    return {"d": relativedelta(days=n), "w": relativedelta(weeks=n),
            "mo": relativedelta(months=n), "y": relativedelta(years=n)}[unit]


def _moved(day: date, delta: relativedelta, argument: str, text: str) -> date:
    try:
        return day + delta
    except (OverflowError, ValueError):
        raise ValueError(f"{argument}: {text!r} from {day} leaves the calendar") from None


def offset(day: date, text: str) -> date:
    """`day` moved by "+N<unit>" or "-N<unit>". Months and years clamp to the month's last day:
    2027-01-31 +1mo is 2027-02-28; 2028-02-29 +1y is 2029-02-28."""
    match = _OFFSET.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"offset: {text!r} is not an offset; write a sign, a whole number and "
                         f"a unit, {UNITS}: \"+1mo\", \"-10d\"")
    delta = _span(match["span"], "offset")
    return _moved(day, delta if match["sign"] == "+" else -delta, "offset", text)


def at(p: Period, text: str) -> date:
    """A day relative to a period's edge: "start", "end" (the first day after), or
    "N<unit> after|before start|end": the tax year 2026's "1mo after end" is 2027-02-01."""
    match = _AT.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"at: {text!r} is not a day of a period; write \"start\", \"end\", or "
                         "\"N<unit> after|before start|end\" (\"1mo after end\"), the unit "
                         f"{UNITS}")
    edge = p.start if match["edge"] == "start" else p.end
    if match["span"] is None:
        return edge
    delta = _span(match["span"], "at")
    return _moved(edge, delta if match["way"] == "after" else -delta, "at", text)


def cycle_date(anchor: date, every: str, n: int) -> date:
    """The n-th date of a cycle (n=0 is the anchor), counted from the anchor, never from the
    previous renewal, so it never drifts: anchored on 01-31 monthly, 02-28 (02-29 in a leap
    year), 03-31, 04-30."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n: {n!r} is not a renewal's number; n is a whole number, 0 for the "
                         "anchor")
    step = _span(every, "every")
    if step == relativedelta():
        raise ValueError(f"every: {every!r} is no span; a cycle moves by at least a day")
    return _moved(anchor, step * n, "every", every)
