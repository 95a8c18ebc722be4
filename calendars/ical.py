"""iCalendar (RFC 5545) output for a list of dated entries, with the `icalendar` package.

Every text value (the calendar's name, a summary, a description) is escaped and folded
whatever it holds (`_text`), so a name with a line break cannot end a line or start a
property of its own.

A civil date becomes an all-day event (DTSTART;VALUE=DATE, DTEND the next day); an instant
becomes a timed event in UTC. UIDs are the caller's, so a feed fetched twice names the same
events the same way and calendar apps update rather than duplicate them. DTSTAMP is the
`stamp` the caller passes (this module never reads a clock).

An entry may carry alarms: each a DISPLAY VALARM with an absolute trigger in UTC
(`TRIGGER;VALUE=DATE-TIME`), so it rings at the instant the caller computed (a rung's
`rings_at` in the subject's zone, daylight saving and all) whatever zone the reader's calendar
app is in. A relative trigger on an all-day event would ring at the reader's local time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

import icalendar

PRODUCT_ID = "-//Keeping Time//Calendars//EN"


@dataclass(frozen=True)
class Alarm:
    at: datetime  # aware: the instant it rings
    description: str
    uid: str = ""  # RFC 9074: lets a calendar app tell one alarm from another across fetches


@dataclass(frozen=True)
class Entry:
    when: date | datetime
    summary: str
    uid: str
    description: str = ""
    alarms: tuple[Alarm, ...] = ()


def render(entries: Iterable[Entry], *, name: str, stamp: datetime) -> bytes:
    """A VCALENDAR with one VEVENT per entry, named `name` for calendar apps."""
    if stamp.tzinfo is None:
        raise ValueError("stamp: give an aware instant")
    feed = icalendar.Calendar()
    feed.add("prodid", PRODUCT_ID)
    feed.add("version", "2.0")
    feed.add("calscale", "GREGORIAN")
    feed.add("method", "PUBLISH")
    feed.add("name", _text(name))  # RFC 7986
    feed.add("x-wr-calname", _text(name))  # the name most calendar apps read
    for entry in entries:
        feed.add_component(_event(entry, stamp.astimezone(UTC)))
    return feed.to_ical()


# The control characters a TEXT value may not hold (RFC 5545 3.3.11: CONTROL, all but HTAB;
# a line break is written escaped, as "\n").
_CONTROLS = {code: " " for code in (*range(0x20), 0x7F) if chr(code) not in "\t\n"}


def _text(value: str) -> icalendar.vText:
    """`value` as a TEXT value whatever it holds (a person's name may hold anything): each line
    break (CRLF, LF or a bare CR) one escaped "\n", other control characters a space. Given
    as `vText`, icalendar escapes `\\ ; ,` and folds the line at 75 octets even for the
    properties it does not know (NAME, X-WR-CALNAME), which it would write raw."""
    return icalendar.vText(value.replace("\r\n", "\n").replace("\r", "\n").translate(_CONTROLS))


def _event(entry: Entry, stamp: datetime) -> icalendar.Event:
    event = icalendar.Event()
    event.add("uid", entry.uid)
    event.add("dtstamp", stamp)
    event.add("summary", _text(entry.summary))
    if entry.description:
        event.add("description", _text(entry.description))
    if isinstance(entry.when, datetime):
        if entry.when.tzinfo is None:
            raise ValueError(f"when: entry {entry.uid} has a naive datetime; give an aware one")
        event.add("dtstart", entry.when.astimezone(UTC))
    else:
        event.add("dtstart", entry.when)
        event.add("dtend", entry.when + timedelta(days=1))
        event.add("transp", "TRANSPARENT")  # an all-day date does not block the day
    for alarm in entry.alarms:
        event.add_component(_alarm(alarm, entry.uid))
    return event


def _alarm(alarm: Alarm, uid: str) -> icalendar.Alarm:
    if alarm.at.tzinfo is None:
        raise ValueError(f"alarms: entry {uid} has an alarm at a naive datetime; give an aware one")
    found = icalendar.Alarm()
    if alarm.uid:
        found.add("uid", alarm.uid)
    found.add("action", "DISPLAY")
    found.add("description", _text(alarm.description))
    # VALUE=DATE-TIME: without it a reader takes the trigger for a duration (RFC 5545 3.8.6.3).
    found.add("trigger", alarm.at.astimezone(UTC), parameters={"VALUE": "DATE-TIME"})
    return found
