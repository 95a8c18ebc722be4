from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import icalendar
import pytest

from calendars.ical import Entry, render

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
