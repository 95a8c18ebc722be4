"""Which calendar a postponement (a notice) is added to, and whether the person may add it:
the brand's own calendar, when it has one and every brand on it is one the person keeps, since
a notice moves the dates of every brand on its calendar. The API (`POST
/api/owner/calendar/postponements`) and the console's Postponements page both ask here, and
each says the refusal in its own words.

    notice_calendar(brand, kept)     the calendar, or CalendarRefused (NO_CALENDAR, SHARED)
"""

from __future__ import annotations

from django.db.models import QuerySet

from calendars.models import Calendar
from timekeeping.models import Brand

NO_CALENDAR = "no_calendar"  # the brand has no calendar (no manifest with a calendar section)
SHARED = "calendar_shared"  # the calendar is shared with brands the person does not keep


class CalendarRefused(Exception):
    def __init__(self, code: str):
        super().__init__(code)
        self.code = code


def notice_calendar(brand: Brand, kept: QuerySet) -> Calendar:
    """The calendar a notice of `brand` goes on, for a person who keeps the brands `kept`."""
    if brand.calendar_id is None:
        raise CalendarRefused(NO_CALENDAR)
    if brand.calendar.brands.exclude(pk__in=kept).exists():
        raise CalendarRefused(SHARED)
    return brand.calendar
