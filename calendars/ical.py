"""iCalendar (RFC 5545) output for a list of dated entries, with the `icalendar` package.

A civil date becomes an all-day event (DTSTART;VALUE=DATE, DTEND the next day); an instant
becomes a timed event in UTC. UIDs are the caller's, so a feed fetched twice names the same
events the same way and calendar apps update rather than duplicate them. DTSTAMP is the
`stamp` the caller passes (this module never reads a clock).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import icalendar

PRODUCT_ID = "-//Keeping Time//Calendars//EN"


@dataclass(frozen=True)
class Entry:
    when: date | datetime
    summary: str
    uid: str
    description: str = ""


def render(entries: Iterable[Entry], *, name: str, stamp: datetime) -> bytes:
    """A VCALENDAR with one VEVENT per entry, named `name` for calendar apps."""
    if stamp.tzinfo is None:
        raise ValueError("stamp: give an aware instant")
    feed = icalendar.Calendar()
    feed.add("prodid", PRODUCT_ID)
    feed.add("version", "2.0")
    feed.add("calscale", "GREGORIAN")
    feed.add("method", "PUBLISH")
    feed.add("name", name)  # RFC 7986
    feed.add("x-wr-calname", name)  # the name most calendar apps read
    for entry in entries:
        feed.add_component(_event(entry, stamp.astimezone(UTC)))
    return feed.to_ical()


def _event(entry: Entry, stamp: datetime) -> icalendar.Event:
    event = icalendar.Event()
    event.add("uid", entry.uid)
    event.add("dtstamp", stamp)
    event.add("summary", entry.summary)
    if entry.description:
        event.add("description", entry.description)
    if isinstance(entry.when, datetime):
        if entry.when.tzinfo is None:
            raise ValueError(f"when: entry {entry.uid} has a naive datetime; give an aware one")
        event.add("dtstart", entry.when.astimezone(UTC))
    else:
        event.add("dtstart", entry.when)
        event.add("dtend", entry.when + timedelta(days=1))
        event.add("transp", "TRANSPARENT")  # an all-day date does not block the day
    return event
