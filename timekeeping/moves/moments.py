"""Reading a row's moment on the venue's clock (SPEC A3-A5).

A moment is `{column, via?, time?, plus?|minus?, or?}`. Every reading is on the venue's zone;
wall times the clocks skip read as the hour after, repeated ones as the first; minutes and
hours are elapsed time, days keep the wall time. A moment with no value (an empty column, a
setting that cannot be read, two hours rows for one weekday) gives None, and its `or`
fallbacks are read in turn. The one error a row's data raises is `MomentOutOfRange`: arithmetic
that leaves Python's calendar (years 1 to 9999), such as a date in year 1 read in a zone ahead
of UTC, 9999-12-31 plus a day, or a setting's shift of a billion days.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from calendars.hours import HoursRow, WeeklyHours
from calendars.moments import day_in_zone, parse_time_of_day, shift, wall_time


class MomentOutOfRange(ValueError):
    """A moment of a row that falls outside the calendar. Unlike a moment with no value it is
    not a quiet answer: the job sets the row aside (MOMENT_OUT_OF_RANGE), a person's move is
    refused, a reminder is skipped, each naming the row (A6)."""


@contextmanager
def in_range(what: str = "a moment of the row") -> Iterator[None]:
    """Turn the OverflowError of date arithmetic (timedelta, astimezone, a date past 9999 or
    before year 1) into MomentOutOfRange."""
    try:
        yield
    except OverflowError as error:
        raise MomentOutOfRange(f"{what} falls outside the calendar (years 1 to 9999): "
                               f"{error}") from error


@dataclass
class Reader:
    """What a moment may read besides the row: settings, opening hours, linked rows."""

    zone: str
    setting: Callable[[str, str], object]  # (table, column) -> value, or None
    hours_rows: Callable[[dict], list[HoursRow]]  # the hours spec -> its rows
    linked: Callable[[object, str], object] | None = None  # (row, fk column) -> linked row


def moment_of(row, spec: dict, reader: Reader) -> datetime | None:
    """The row's moment, or None when it has no value; MomentOutOfRange past the calendar."""
    with in_range():
        for candidate in [spec, *spec.get("or", [])]:
            found = _one(row, candidate, reader)
            if found is not None:
                return found
    return None


def _one(row, spec: dict, reader: Reader) -> datetime | None:
    source = row
    if "via" in spec:
        source = reader.linked(row, spec["via"]) if reader.linked else None
        if source is None:
            return None
    value = _get(source, spec["column"])
    if value is None:
        return None
    if "time" in spec:
        day = value if not isinstance(value, datetime) else day_in_zone(value, reader.zone)
        found = _at_time(source, day, spec["time"], reader)
    elif isinstance(value, datetime):
        found = value
    else:
        return None  # a date has no clock without a time
    if found is None:
        return None
    for sign, key in ((1, "plus"), (-1, "minus")):
        if key in spec:
            found = _shift(found, spec[key], sign, reader)
            if found is None:
                return None
    return found


def _get(row, column: str):
    return row.get(column) if isinstance(row, dict) else getattr(row, column, None)


def _at_time(row, day: date, time, reader: Reader) -> datetime | None:
    if isinstance(time, str):
        parsed = parse_time_of_day(time)
    elif "hours" in time:
        hours = WeeklyHours(reader.hours_rows(time["hours"]))
        return hours.edge(day, time["edge"], reader.zone)
    elif "table" in time:
        text = reader.setting(time["table"], time["column"])
        parsed = parse_time_of_day(text) if isinstance(text, str) and len(text) >= 5 else None
    else:
        parsed = parse_time_of_day(_get(row, time["column"]))
    return None if parsed is None else wall_time(day, parsed, reader.zone)


def shift_by(instant: datetime, spec: dict, sign: int, reader: Reader) -> datetime | None:
    """Move an instant by a shift spec (a number or a setting); None when it cannot be read,
    MomentOutOfRange when it leaves the calendar."""
    with in_range("a shifted moment"):
        return _shift(instant, spec, sign, reader)


def _shift(instant: datetime, spec: dict, sign: int, reader: Reader) -> datetime | None:
    unit, amount = next(iter(spec.items()))
    if isinstance(amount, dict):
        amount = reader.setting(amount["table"], amount["column"])
        try:
            amount = int(amount)
        except (TypeError, ValueError):
            return None
    if not isinstance(amount, int) or amount < 0:
        return None  # an empty, negative or non-number setting is no shift
    return shift(instant, reader.zone, **{unit: sign * amount})


def reach(spec: dict) -> timedelta | None:
    """How far after its column's value a moment can fall (for an SQL prefilter), or None when
    a setting, a fallback or a link decides it (no bound: judge every row)."""
    if spec.get("or") or "via" in spec:
        return None
    extra = timedelta(days=2) if "time" in spec else timedelta(0)  # a day's wall time, or an
    # hours edge past midnight, falls at most two days after the column's instant
    return _plus_fixed(extra, spec.get("plus"))


def earliest(spec: dict) -> timedelta | None:
    """How far before its column's value a moment can fall (for an SQL prefilter), or None
    when a setting, a fallback or a link decides it."""
    if spec.get("or") or "via" in spec:
        return None
    extra = timedelta(days=2) if "time" in spec else timedelta(0)  # the venue's day of an
    # instant begins at most a (long) day before it; two days, as `reach` allows
    return _plus_fixed(extra, spec.get("minus"))


def _plus_fixed(extra: timedelta, shift_spec: dict | None) -> timedelta | None:
    """`extra` plus a fixed shift (a day may last 25 hours: two hours more for days); None for
    a shift a setting decides, or one past what a timedelta holds (no bound)."""
    if not shift_spec:
        return extra
    unit, amount = next(iter(shift_spec.items()))
    if not isinstance(amount, int):
        return None
    try:
        return extra + timedelta(**{unit: amount}) + (
            timedelta(hours=2) if unit == "days" else timedelta(0))
    except OverflowError:
        return None


def column_window(kind: str, spec: dict, zone: str, *, after: datetime | None,
                  until: datetime | None) -> dict:
    """Lookups on a moment's column that keep every row whose moment may fall in (after,
    until]: the prefilter its index serves. A side is left open where the moment's distance
    from its column is not fixed, or where the bound would leave the calendar."""
    column = spec["column"]
    lookups: dict = {}
    late, early = reach(spec), earliest(spec)
    with suppress(OverflowError):
        if after is not None and late is not None:
            lower = after - late
            lookups[f"{column}__gte" if kind == "date" else f"{column}__gt"] = (
                day_in_zone(lower, zone) if kind == "date" else lower)
    with suppress(OverflowError):
        if until is not None and early is not None:
            upper = until + early
            lookups[f"{column}__lte"] = day_in_zone(upper, zone) if kind == "date" else upper
    return lookups
