"""A business calendar as a frozen value: which days are open, how a date rolls, when a due
date closes and when a rung rings (SPEC S1, DESIGN decision 2).

Pure Python: built from plain values (the model's `.rules()` builds one), no database, no
settings, no clock.

    cal = Calendar(zone="America/New_York", holidays=("US", "DC"))
    cal.roll(date(2028, 4, 15))   # Rolled(date=2028-04-18, rolled_from=2028-04-15, reasons=[...])
    cal.late_from(date(2028, 4, 18))   # 2028-04-19 04:00Z: the first late instant
    cal.rings(date(2028, 1, 19))       # 2028-01-19 14:00Z: 09:00 in New York
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from typing import Literal

import holidays as holiday_sets

from calendars.moments import time_of_day, wall_time, zone_of

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
ROLLS = ("next open day", "none")
# No calendar keeps a date closed for longer than this; past it the calendar is broken.
MAX_ROLL_DAYS = 366

Roll = Literal["next open day", "none"]
ClosedRule = Iterable[date | str] | Callable[[int], Iterable[date | str]]


@dataclass(frozen=True)
class ClosedDay:
    """A day passed by a roll, and why it was closed."""

    date: date
    why: str

    def __str__(self) -> str:
        return f"{self.date.isoformat()} {self.why}"


@dataclass(frozen=True)
class Rolled:
    """The result of a roll: the date kept, the date it came from (None when it stayed),
    and the reasons: one line per day passed, naming the day and why it was closed."""

    date: date
    rolled_from: date | None
    reasons: list[str]
    passed: tuple[ClosedDay, ...] = ()


def weekday_index(value: str | int, *, field: str = "weekends") -> int:
    """0 for Monday to 6 for Sunday, from 'sat', 'Saturday' or an index."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 6:
        return value
    if isinstance(value, str):
        key = value.strip().lower()[:3]
        if key in WEEKDAYS and WEEKDAY_NAMES[WEEKDAYS.index(key)].lower().startswith(
            value.strip().lower()
        ):
            return WEEKDAYS.index(key)
    raise ValueError(f"{field}: {value!r} is not a weekday (mon, tue, wed, thu, fri, sat, sun)")


def _as_date(value: date | str, *, field: str) -> date:
    if isinstance(value, datetime):
        raise ValueError(f"{field}: {value!r} is an instant; give a civil date (YYYY-MM-DD)")
    if isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value))
    except ValueError:
        raise ValueError(f"{field}: {value!r} is not a date (YYYY-MM-DD)") from None


class Calendar:
    """A business calendar. See the module docstring; every argument is optional.

    - zone: an IANA zone name; None reads as UTC (and then rings_at defaults to 00:00).
    - weekends: weekdays nothing is due on; Saturday and Sunday unless given.
    - holidays: (country, subdivision or None) for the `holidays` package, e.g. ("US", "DC").
    - closed: explicit ISO dates, or a callable year -> dates.
    - closes: the local minute a due date closes ("23:59").
    - rings_at: the local minute a rung rings ("09:00" with a zone, "00:00" without).
    - roll: "next open day" or "none"; the rule is kept as `roll_rule`, and `roll(day)` applies it.

    Every bad argument raises ValueError naming the argument. The value is immutable; each
    year's closed days are computed once, when first asked for.
    """

    __slots__ = (
        "zone", "weekends", "holidays", "closed", "closes", "rings_at", "roll_rule",
        "_tz", "_weekend_days", "_explicit", "_years", "_lock",
    )

    def __init__(
        self,
        zone: str | None = None,
        weekends: Iterable[str | int] = ("sat", "sun"),
        holidays: tuple[str, str | None] | None = None,
        closed: ClosedRule = (),
        closes: str = "23:59",
        rings_at: str | None = None,
        roll: Roll = "next open day",
    ) -> None:
        weekend_days = frozenset(weekday_index(day) for day in weekends)
        if len(weekend_days) == 7:
            raise ValueError("weekends: a calendar needs at least one open weekday")
        time_of_day(closes, field="closes")
        if rings_at is not None:
            time_of_day(rings_at, field="rings_at")
        if roll not in ROLLS:
            raise ValueError(f"roll: {roll!r} is not one of: {', '.join(ROLLS)}")
        pair = _holiday_pair(holidays) if holidays is not None else None
        values = {
            "zone": zone,
            "weekends": tuple(WEEKDAYS[day] for day in sorted(weekend_days)),
            "holidays": pair,
            "closed": closed,
            "closes": closes,
            "rings_at": rings_at,
            "roll_rule": roll,
            "_tz": zone_of(zone or "UTC"),
            "_weekend_days": weekend_days,
            "_explicit": {} if callable(closed) else _closed_map(closed),
            "_years": {},
            "_lock": threading.Lock(),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a Calendar is immutable; build a new one")

    def __repr__(self) -> str:
        return (
            f"Calendar(zone={self.zone!r}, weekends={self.weekends!r}, "
            f"holidays={self.holidays!r}, closes={self.closes!r}, "
            f"rings_at={self.ring_time!r}, roll={self.roll_rule!r})"
        )

    @property
    def zone_name(self) -> str:
        return self.zone or "UTC"

    @property
    def ring_time(self) -> str:
        if self.rings_at:
            return self.rings_at
        return "09:00" if self.zone else "00:00"

    # -- closed days -------------------------------------------------------------------

    def is_open(self, day: date) -> bool:
        return self.closed_because(day) is None

    def closed_because(self, day: date) -> str | None:
        """Why a day is closed ('Saturday', 'Emancipation Day (observed)'), or None."""
        reasons = []
        if day.weekday() in self._weekend_days:
            reasons.append(WEEKDAY_NAMES[day.weekday()])
        named = self._closed_in(day.year).get(day)
        if named:
            reasons.append(named)
        return ", ".join(reasons) or None

    def closed_days(self, year: int) -> dict[date, str]:
        """The year's closed days other than weekends, with their names."""
        return dict(self._closed_in(year))

    def _closed_in(self, year: int) -> dict[date, str]:
        # Computed once per calendar and year (building a year of holidays is slow); the
        # lock keeps two threads from building the same year twice.
        found = self._years.get(year)
        if found is not None:
            return found
        with self._lock:
            if year not in self._years:
                self._years[year] = self._build_year(year)
            return self._years[year]

    def _build_year(self, year: int) -> dict[date, str]:
        days: dict[date, str] = {}
        if self.holidays is not None:
            country, subdivision = self.holidays
            found = holiday_sets.country_holidays(country, subdiv=subdivision, years=year)
            for day, name in found.items():
                days[day] = name.replace("; ", ", ")
        extra = _closed_map(self.closed(year)) if callable(self.closed) else self._explicit
        for day, why in extra.items():
            if day.year == year:
                days.setdefault(day, why)
        return days

    # -- rolling -------------------------------------------------------------------------

    def roll(self, day: date) -> Rolled:
        """Roll `day` by the calendar's rule: "next open day" moves a weekend or closed day
        forward to the first open day, naming each day passed and why; "none" keeps it."""
        if self.roll_rule == "none":
            return Rolled(date=day, rolled_from=None, reasons=[])
        passed: list[ClosedDay] = []
        current = day
        while (why := self.closed_because(current)) is not None:
            passed.append(ClosedDay(current, why))
            if len(passed) > MAX_ROLL_DAYS:
                raise ValueError(f"roll: no open day within {MAX_ROLL_DAYS} days of {day}")
            current += timedelta(days=1)
        if not passed:
            return Rolled(date=day, rolled_from=None, reasons=[])
        reasons = [str(closed) for closed in passed]
        return Rolled(date=current, rolled_from=day, reasons=reasons, passed=tuple(passed))

    # -- instants ------------------------------------------------------------------------

    def late_from(self, day: date) -> datetime:
        """The first late instant for a date due on `day`: the start of the `closes` minute
        in the zone plus 60 elapsed seconds. A submission is on time when it is earlier.

        A `closes` minute that the clocks skip is read by the shift reading (it closes a gap
        later), so a filer never loses time to daylight saving.
        """
        closing = time_of_day(self.closes, field="closes").replace(second=0, microsecond=0)
        return wall_time(day, closing, self._tz, gap="shift") + timedelta(seconds=60)

    def rings(self, day: date, at: str | time | None = None) -> datetime:
        """When a rung rings on `day`: `rings_at` (or `at`) in the zone. A skipped time rings
        at the next minute that exists; a repeated one the first time."""
        return wall_time(day, at if at is not None else self.ring_time, self._tz, gap="next")


@lru_cache(maxsize=1)
def _supported() -> dict[str, list[str]]:
    return holiday_sets.list_supported_countries()


def _holiday_pair(pair: object) -> tuple[str, str | None]:
    if isinstance(pair, str):
        pair = (pair,)
    if not isinstance(pair, tuple | list) or not 1 <= len(pair) <= 2:
        raise ValueError(
            f"holidays: {pair!r} is not a (country, subdivision or None) pair, "
            "for example ('US', 'DC')"
        )
    country = str(pair[0]).upper()
    subdivision = pair[1] if len(pair) == 2 else None
    if country not in _supported():
        raise ValueError(f"holidays: {pair[0]!r} is not a country the holidays package knows")
    if subdivision is not None:
        subdivision = str(subdivision).upper()
        if subdivision not in _supported()[country]:
            raise ValueError(
                f"holidays: {pair[1]!r} is not a subdivision of {country} "
                "the holidays package knows"
            )
    return country, subdivision


def _closed_map(values: Iterable[date | str]) -> dict[date, str]:
    if isinstance(values, str | date):
        values = [values]
    return {_as_date(value, field="closed"): "closed" for value in values}
