from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import icalendar
import pytest

from calendars.ical import Alarm, Entry, render

STAMP = datetime(2028, 2, 2, 12, tzinfo=UTC)


def entries():
    return [
        Entry(date(2028, 4, 18), "file the 2027 return, US", "clk_1:US@keeping-time",
              "rolled from 04-15"),
        Entry(datetime(2028, 4, 15, 9, tzinfo=ZoneInfo("America/New_York")), "run tentative",
              "tmr_9@keeping-time"),
    ]


def test_it_renders_a_valid_calendar_with_all_day_dates_and_utc_instants():
    feed = icalendar.Calendar.from_ical(render(entries(), name="Acme Robotics", stamp=STAMP))
    assert feed["version"] == "2.0"
    assert str(feed["x-wr-calname"]) == "Acme Robotics"
    events = feed.walk("VEVENT")
    assert [str(event["uid"]) for event in events] == [
        "clk_1:US@keeping-time", "tmr_9@keeping-time",
    ]
    all_day, timed = events
    assert all_day.decoded("dtstart") == date(2028, 4, 18)
    assert all_day.decoded("dtend") == date(2028, 4, 19)
    assert str(all_day["description"]) == "rolled from 04-15"
    assert timed.decoded("dtstart") == datetime(2028, 4, 15, 13, tzinfo=UTC)
    raw = render(entries(), name="Acme Robotics", stamp=STAMP).decode()
    assert "DTSTART;VALUE=DATE:20280418" in raw
    assert "DTSTART:20280415T130000Z" in raw
    assert raw.startswith("BEGIN:VCALENDAR\r\n") and raw.endswith("END:VCALENDAR\r\n")


def test_it_renders_the_same_bytes_for_the_same_entries():
    assert render(entries(), name="A", stamp=STAMP) == render(entries(), name="A", stamp=STAMP)


def test_it_refuses_naive_instants():
    with pytest.raises(ValueError, match="naive"):
        render([Entry(datetime(2028, 1, 1), "x", "u")], name="A", stamp=STAMP)  # noqa: DTZ001


def test_it_renders_each_alarm_as_a_display_valarm_at_its_instant_in_utc():
    from calendars.ical import Alarm

    rings = datetime(2028, 4, 4, 9, tzinfo=ZoneInfo("America/Los_Angeles"))
    entry = Entry(date(2028, 4, 18), "pay the 2027 tax", "clk_2@keeping-time",
                  alarms=(Alarm(rings, "pay the 2027 tax: due 2028-04-18 (notice 14d)",
                                uid="clk_2:notice 14d@keeping-time"),))
    raw = render([entry], name="A", stamp=STAMP)
    event = icalendar.Calendar.from_ical(raw).walk("VEVENT")[0]
    (alarm,) = event.walk("VALARM")
    assert str(alarm["action"]) == "DISPLAY"
    assert str(alarm["description"]) == "pay the 2027 tax: due 2028-04-18 (notice 14d)"
    assert alarm.decoded("trigger") == datetime(2028, 4, 4, 16, tzinfo=UTC)
    assert str(alarm["uid"]) == "clk_2:notice 14d@keeping-time"
    assert "TRIGGER;VALUE=DATE-TIME:20280404T160000Z" in raw.decode()


def test_it_renders_no_alarm_for_an_entry_without_one():
    assert b"VALARM" not in render(entries(), name="A", stamp=STAMP)


def test_it_refuses_an_alarm_at_a_naive_instant():
    from calendars.ical import Alarm

    naive = Alarm(datetime(2028, 4, 4, 9), "x")  # noqa: DTZ001
    with pytest.raises(ValueError, match="naive"):
        render([Entry(date(2028, 4, 18), "x", "u", alarms=(naive,))], name="A", stamp=STAMP)


NAMES = ["Line one\nline two", "Windows\r\nline", "bare\rreturn", "semi; comma, back\\slash",
         "tab\tand \x0bvertical \x1funit \x7fdel", "é🕰" * 60, "a" * 500, "\n\r\n\r"]


def _said(text: str) -> str:
    """What a calendar app reads back: a line break said once, as LF; other control
    characters (which TEXT may not hold, RFC 5545 3.3.11) as a space."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "".join(c if c in "\n\t" or (c >= " " and c != "\x7f") else " " for c in text)


@pytest.mark.parametrize("name", NAMES)
def test_every_text_value_is_escaped_and_folded_whatever_it_holds(name, monkeypatch):
    alarm = Alarm(datetime(2028, 4, 1, 9, tzinfo=UTC), name, uid="a1")
    body = render([Entry(date(2028, 4, 18), name, "u1@keeping-time", name, alarms=(alarm,))],
                  name=name, stamp=STAMP)
    lines = body.split(b"\r\n")
    assert lines[-1] == b""
    for line in lines[:-1]:  # CRLF ends each line; no bare CR or LF; at most 75 octets
        assert b"\r" not in line and b"\n" not in line
        assert len(line) <= 75
    # Read NAME (RFC 7986) and X-WR-CALNAME back as the TEXT they are (after rendering, which
    # must not lean on it): icalendar reads properties it does not know raw.
    for each in ("NAME", "X-WR-CALNAME"):
        monkeypatch.setitem(icalendar.Calendar.types_factory.types_map, each, "text")
    feed = icalendar.Calendar.from_ical(body)
    assert str(feed["x-wr-calname"]) == _said(name)
    assert str(feed["name"]) == _said(name)
    event = feed.walk("VEVENT")[0]
    assert str(event["summary"]) == _said(name)
    assert str(event["description"]) == _said(name)
    assert str(feed.walk("VALARM")[0]["description"]) == _said(name)
