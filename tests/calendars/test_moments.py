"""Wall times and shifts in three zones, across both daylight-saving changes of 2026.

America/New_York: forward 8 March 02:00->03:00; back 1 November 02:00->01:00.
Europe/London: forward 29 March 01:00->02:00; back 25 October 02:00->01:00.
Australia/Lord_Howe (a 30-minute change): back 5 April 02:00->01:30; forward 4 October
02:00->02:30.
"""

from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

import pytest

from calendars.moments import day_in_zone, parse_time_of_day, shift, wall_time

NY, LONDON, LORD_HOWE = "America/New_York", "Europe/London", "Australia/Lord_Howe"


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("09:00", time(9, 0)),
        ("9:05", time(9, 5)),
        ("23:59:30", time(23, 59, 30)),
        ("00:00", time(0, 0)),
    ],
)
def test_it_reads_the_time_formats_people_and_databases_write(text, expected):
    assert parse_time_of_day(text) == expected


@pytest.mark.parametrize(
    "text", ["25:00", "12:60", "9:5", "", "noon", "09:00 am", "9", None, 930, "12:00:61"]
)
def test_it_reads_anything_else_as_no_value_without_raising(text):
    assert parse_time_of_day(text) is None


@pytest.mark.parametrize(
    ("zone", "day", "at", "expected"),
    [
        (NY, date(2026, 1, 15), "09:00", utc(2026, 1, 15, 14)),
        (NY, date(2026, 7, 15), "09:00", utc(2026, 7, 15, 13)),
        (LONDON, date(2026, 1, 15), "21:00", utc(2026, 1, 15, 21)),
        (LONDON, date(2026, 7, 15), "21:00", utc(2026, 7, 15, 20)),
        (LORD_HOWE, date(2026, 1, 15), "09:00", utc(2026, 1, 14, 22)),
        (LORD_HOWE, date(2026, 7, 15), "09:00", utc(2026, 7, 14, 22, 30)),
    ],
)
def test_it_reads_a_wall_time_in_its_zone_in_winter_and_summer(zone, day, at, expected):
    assert wall_time(day, at, zone) == expected


@pytest.mark.parametrize(
    ("zone", "day", "at", "shifted", "next_minute"),
    [
        # 02:30 on the US spring-forward morning: 03:30 for a moment, 03:00 for a rung.
        (NY, date(2026, 3, 8), "02:30", utc(2026, 3, 8, 7, 30), utc(2026, 3, 8, 7)),
        (NY, date(2026, 3, 8), "02:00", utc(2026, 3, 8, 7), utc(2026, 3, 8, 7)),
        (LONDON, date(2026, 3, 29), "01:30", utc(2026, 3, 29, 1, 30), utc(2026, 3, 29, 1)),
        # A 30-minute gap: 02:10 is 02:40 shifted, 02:30 as the next existing minute.
        (LORD_HOWE, date(2026, 10, 4), "02:10", utc(2026, 10, 3, 15, 40), utc(2026, 10, 3, 15, 30)),
    ],
)
def test_it_reads_a_skipped_wall_time_both_ways(zone, day, at, shifted, next_minute):
    assert wall_time(day, at, zone) == shifted
    assert wall_time(day, at, zone, gap="shift") == shifted
    assert wall_time(day, at, zone, gap="next") == next_minute


def test_it_reads_the_seed_spring_forward_example_as_0330_and_0300_local():
    local = ZoneInfo(NY)
    assert wall_time(date(2026, 3, 8), "02:30", NY).astimezone(local).time() == time(3, 30)
    assert wall_time(date(2026, 3, 8), "02:30", NY, gap="next").astimezone(local).time() == time(
        3, 0
    )


@pytest.mark.parametrize(
    ("zone", "day", "at", "first"),
    [
        (NY, date(2026, 11, 1), "01:30", utc(2026, 11, 1, 5, 30)),
        (LONDON, date(2026, 10, 25), "01:30", utc(2026, 10, 25, 0, 30)),
        (LORD_HOWE, date(2026, 4, 5), "01:45", utc(2026, 4, 4, 14, 45)),
    ],
)
def test_it_reads_a_repeated_wall_time_as_its_first_occurrence(zone, day, at, first):
    assert wall_time(day, at, zone) == first
    assert wall_time(day, at, zone, gap="next") == first


def test_it_names_the_argument_that_is_wrong():
    with pytest.raises(ValueError, match="zone: 'Mars/Olympus'"):
        wall_time(date(2026, 1, 1), "09:00", "Mars/Olympus")
    with pytest.raises(ValueError, match="at: '25:00'"):
        wall_time(date(2026, 1, 1), "25:00", NY)
    with pytest.raises(ValueError, match="gap: 'later'"):
        wall_time(date(2026, 1, 1), "09:00", NY, gap="later")


def test_it_keeps_the_wall_time_a_calendar_day_later_although_the_clocks_went_back():
    # The seed: a no-show at 10:00 one calendar day after Saturday 24 October 2026 in London
    # is 10:00 on Sunday, 25 elapsed hours later.
    arrive = wall_time(date(2026, 10, 24), "10:00", LONDON)
    no_show = shift(arrive, LONDON, days=1)
    assert no_show == utc(2026, 10, 25, 10)
    assert no_show.astimezone(ZoneInfo(LONDON)).time() == time(10, 0)
    assert (no_show - arrive).total_seconds() == 25 * 3600


def test_it_shifts_days_onto_a_skipped_time_by_the_hour_after():
    before = wall_time(date(2026, 3, 7), "02:30", NY)
    assert shift(before, NY, days=1) == utc(2026, 3, 8, 7, 30)  # 03:30 EDT
    lord_howe = wall_time(date(2026, 10, 3), "02:10", LORD_HOWE)
    assert shift(lord_howe, LORD_HOWE, days=1) == utc(2026, 10, 3, 15, 40)  # 02:40


def test_it_shifts_days_backwards_across_the_spring_change():
    after = wall_time(date(2026, 3, 30), "10:00", LONDON)  # BST
    assert shift(after, LONDON, days=-2) == utc(2026, 3, 28, 10)  # GMT, 47 hours earlier


def test_it_counts_hours_and_minutes_as_elapsed_time():
    # 48 hours before 15:00 is 48 real hours earlier, whatever the clocks did.
    at = wall_time(date(2026, 3, 9), "15:00", NY)
    earlier = shift(at, NY, hours=-48)
    assert at - earlier == utc(2026, 1, 3) - utc(2026, 1, 1)
    assert earlier.astimezone(ZoneInfo(NY)).time() == time(14, 0)
    # One hour after the first 01:30 in London is the second 01:30.
    first = wall_time(date(2026, 10, 25), "01:30", LONDON)
    assert shift(first, LONDON, hours=1) == utc(2026, 10, 25, 1, 30)
    assert shift(first, LORD_HOWE, minutes=90) == utc(2026, 10, 25, 2)


def test_it_refuses_a_naive_instant():
    with pytest.raises(ValueError, match="naive"):
        shift(datetime(2026, 1, 1), NY, days=1)  # noqa: DTZ001 - the naive value is the point


def test_it_reads_the_day_of_an_instant_on_the_venue_clock():
    late_friday = utc(2026, 10, 24, 3, 30)  # Friday 23:30 in New York
    assert day_in_zone(late_friday, NY) == date(2026, 10, 23)
    assert day_in_zone(late_friday, LONDON) == date(2026, 10, 24)
