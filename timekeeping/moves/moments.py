"""Reading a row's moment on the venue's clock (SPEC A3-A5).

A moment is `{column, via?, time?, plus?|minus?, or?}`. Every reading is on the venue's zone;
wall times the clocks skip read as the hour after, repeated ones as the first; minutes and
hours are elapsed time, days keep the wall time. A moment with no value (an empty column, a
setting that cannot be read, two hours rows for one weekday) gives None, and its `or`
fallbacks are read in turn. Nothing here raises on a row's data.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from calendars.hours import HoursRow, WeeklyHours
from calendars.moments import day_in_zone, parse_time_of_day, shift, wall_time


@dataclass
class Reader:
    """What a moment may read besides the row: settings, opening hours, linked rows."""

    zone: str
    setting: Callable[[str, str], object]  # (table, column) -> value, or None
    hours_rows: Callable[[dict], list[HoursRow]]  # the hours spec -> its rows
    linked: Callable[[object, str], object] | None = None  # (row, fk column) -> linked row


def moment_of(row, spec: dict, reader: Reader) -> datetime | None:
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
    """Move an instant by a shift spec (a number or a setting); None when it cannot be read."""
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
    """How far after its column's value a moment can fall (for the SQL prefilter), or None
    when a setting decides it (no bound: judge every row in the state)."""
    if spec.get("or"):
        return None
    extra = timedelta(days=2) if "time" in spec else timedelta(0)  # a day's wall time, or an
    # hours edge past midnight, falls at most two days after the column's instant
    plus = spec.get("plus")
    if plus:
        unit, amount = next(iter(plus.items()))
        if isinstance(amount, dict):
            return None
        extra += timedelta(**{unit: amount}) + (timedelta(hours=2) if unit == "days" else
                                                timedelta(0))
    return extra
