"""Wall times and shifts: turning a civil date and a time of day into an exact instant.

Pure functions, no models, no settings, no clock (DESIGN decision 1, SPEC A3-A5, S1).

- A wall time is read in a named IANA zone and returned as an aware UTC instant.
- A repeated wall time (the autumn hour that happens twice) is its first occurrence.
- A skipped wall time (the spring hour that never happens) has two readings, both used:
  `gap="shift"` moves it forward by the length of the gap (02:30 on a US spring-forward
  morning is 03:30; RFC 5545 and Temporal's 'compatible' read it so); `gap="next"` takes the
  next minute that exists (02:30 rings at 03:00).
- Minutes and hours are elapsed time; days are calendar days at the same wall time.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

Gap = Literal["shift", "next"]
GAP_READINGS = ("shift", "next")

_TIME_OF_DAY = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")


def parse_time_of_day(text: object) -> time | None:
    """Read `HH:MM`, `H:MM` or `HH:MM:SS`; anything else (or an impossible time) is None.

    Never raises: a sweep that meets a bad value on a row treats it as no value (A3).
    """
    if isinstance(text, time):
        return text.replace(tzinfo=None)
    if not isinstance(text, str):
        return None
    match = _TIME_OF_DAY.match(text.strip())
    if match is None:
        return None
    hours, minutes, seconds = (int(part) if part else 0 for part in match.groups())
    if hours > 23 or minutes > 59 or seconds > 59:
        return None
    return time(hours, minutes, seconds)


def time_of_day(value: str | time, *, field: str = "time") -> time:
    """Like parse_time_of_day, but a bad value is an error that names the field."""
    parsed = parse_time_of_day(value)
    if parsed is None:
        raise ValueError(
            f"{field}: {value!r} is not a time of day; write HH:MM (00:00 to 23:59) or HH:MM:SS"
        )
    return parsed


@lru_cache(maxsize=512)
def _zone_by_name(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def is_zone(name: object) -> bool:
    """An IANA zone name the zone database knows; never raises (a directory such as
    "Europe", a name too long for a file, NUL)."""
    if not isinstance(name, str) or not name:
        return False
    try:
        zone_of(name)
    except ValueError:
        return False
    return True


def zone_of(zone: str | ZoneInfo, *, field: str = "zone") -> ZoneInfo:
    """The ZoneInfo for an IANA name; an unknown name is an error that names the field."""
    if isinstance(zone, ZoneInfo):
        return zone
    try:
        return _zone_by_name(zone)
    except (ZoneInfoNotFoundError, ValueError, TypeError, OSError):
        # OSError: a name the zone database reads as a path ("Europe", a very long name).
        raise ValueError(
            f"{field}: {zone!r} is not an IANA time zone (for example America/New_York)"
        ) from None


def wall_time(
    day: date, at: str | time, zone: str | ZoneInfo, gap: Gap = "shift"
) -> datetime:
    """The instant (aware UTC) when clocks in `zone` show `at` on `day`.

    A repeated time is its first occurrence; a skipped time is read by `gap` (see the module).
    """
    if gap not in GAP_READINGS:
        raise ValueError(f"gap: {gap!r} is not one of {', '.join(GAP_READINGS)}")
    tz = zone_of(zone)
    local = datetime.combine(day, time_of_day(at, field="at"), tzinfo=tz)  # fold=0: the first
    # With fold=0, zoneinfo reads a skipped time with the offset in force before the gap,
    # which lands exactly one gap later on the far side: the shift reading.
    shifted = local.astimezone(UTC)
    if gap == "shift" or _exists(local):
        return shifted
    return _next_existing_minute(local, shifted)


def _exists(local: datetime) -> bool:
    back = local.astimezone(UTC).astimezone(local.tzinfo)
    return back.replace(tzinfo=None) == local.replace(tzinfo=None)


def _next_existing_minute(local: datetime, shifted: datetime) -> datetime:
    """The first whole minute that exists after a skipped wall time: the gap's far edge.

    The transition lies between the two readings of the skipped time (fold=1 reads it with
    the offset after the gap, so it lands before the transition; fold=0 lands after it).
    Bisect on whole seconds to find it; gaps are at most a day long, so this is ~17 steps.
    """
    tz = local.tzinfo
    before = local.replace(fold=1).astimezone(UTC)
    offset_after = shifted.astimezone(tz).utcoffset()
    low, high = before, shifted  # low is before the transition, high after it
    while high - low > timedelta(seconds=1):
        middle = low + (high - low) / 2
        middle = middle.replace(microsecond=0)
        if middle <= low:
            break
        if middle.astimezone(tz).utcoffset() == offset_after:
            high = middle
        else:
            low = middle
    edge = high.astimezone(tz)
    if edge.second or edge.microsecond:  # an old offset with seconds: round up to a minute
        edge = (edge + timedelta(minutes=1)).replace(second=0, microsecond=0)
    return edge.astimezone(UTC)


def shift(
    instant: datetime,
    zone: str | ZoneInfo,
    *,
    days: int = 0,
    hours: int | float = 0,
    minutes: int | float = 0,
) -> datetime:
    """Move an instant: `days` as calendar days at the same wall time in `zone`, then
    `hours` and `minutes` as elapsed time. Negative values move back.

    One day after 10:00 on the Saturday the clocks go back is 10:00 on Sunday (25 hours
    later); 48 hours before 15:00 is 48 real hours earlier, whatever the clocks did.
    """
    if instant.tzinfo is None:
        raise ValueError("instant: a naive datetime has no place in time; give an aware one")
    moved = instant.astimezone(UTC)
    if days:
        tz = zone_of(zone)
        local = moved.astimezone(tz)
        # Calendar days are counted on the local date; the wall time is then resolved again
        # (a skipped one by the shift reading), never by adding 24-hour timedeltas.
        wall = local.replace(tzinfo=None) + timedelta(days=days)
        moved = wall_time(wall.date(), wall.time(), tz, gap="shift")
    return moved + timedelta(hours=hours, minutes=minutes)


def day_in_zone(instant: datetime, zone: str | ZoneInfo) -> date:
    """The civil date in `zone` of an instant (a 12:30 pickup on Friday reads Friday)."""
    return instant.astimezone(zone_of(zone)).date()
