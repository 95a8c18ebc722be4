"""Weekly opening hours: the instant a venue opens or closes on a date (SPEC A4).

A value built from rows of (weekday, opens, closes, open). The rules:
- a closed day, or a weekday with no row, ends at midnight: both edges read as the end of
  that day (an order for a closed Monday is cancelled at the end of Monday);
- a closing at or before the opening is past midnight, on the next day's clock;
- two rows for one weekday say two things, so neither is read: that day has no value;
- a time that cannot be read (not HH:MM, H:MM or HH:MM:SS) gives that edge no value.
Wall times are moments (A5): a skipped one reads as the hour after, a repeated one the first.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from calendars.moments import parse_time_of_day, wall_time
from calendars.rules import weekday_index

Edge = Literal["opens", "closes"]
EDGES = ("opens", "closes")


@dataclass(frozen=True)
class HoursRow:
    weekday: str | int
    opens: str | None
    closes: str | None
    open: bool = True


class WeeklyHours:
    """Opening hours per weekday; `edge(day, "closes", zone)` gives the instant or None."""

    __slots__ = ("_rows",)

    def __init__(self, rows: Iterable[HoursRow | tuple]):
        built = [row if isinstance(row, HoursRow) else HoursRow(*row) for row in rows]
        by_day = Counter(weekday_index(row.weekday, field="weekday") for row in built)
        self._rows = {
            weekday_index(row.weekday, field="weekday"): row
            for row in built
            if by_day[weekday_index(row.weekday, field="weekday")] == 1
        }
        # Weekdays written twice are remembered as having no value.
        for day, count in by_day.items():
            if count > 1:
                self._rows[day] = None

    def edge(self, day: date, edge: Edge, zone: str | ZoneInfo) -> datetime | None:
        """The opening or closing instant (aware UTC) for `day` in `zone`, or None."""
        if edge not in EDGES:
            raise ValueError(f"edge: {edge!r} is not one of: {', '.join(EDGES)}")
        weekday = day.weekday()
        if weekday in self._rows and self._rows[weekday] is None:
            return None  # two rows for one weekday: neither is read
        row = self._rows.get(weekday)
        if row is None or not row.open:
            return end_of_day(day, zone)
        opens, closes = parse_time_of_day(row.opens), parse_time_of_day(row.closes)
        if edge == "opens":
            return None if opens is None else wall_time(day, opens, zone)
        if closes is None:
            return None
        if opens is not None and closes <= opens:
            return wall_time(day + timedelta(days=1), closes, zone)  # past midnight
        return wall_time(day, closes, zone)

    def opens_at(self, day: date, zone: str | ZoneInfo) -> datetime | None:
        return self.edge(day, "opens", zone)

    def closes_at(self, day: date, zone: str | ZoneInfo) -> datetime | None:
        return self.edge(day, "closes", zone)


def end_of_day(day: date, zone: str | ZoneInfo) -> datetime:
    """Midnight at the end of `day` in `zone` (the start of the next day)."""
    return wall_time(day + timedelta(days=1), "00:00", zone)
