from datetime import UTC, date, datetime

import pytest

from calendars.hours import HoursRow, WeeklyHours

LONDON, NY = "Europe/London", "America/New_York"


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@pytest.fixture(scope="module")
def venue():
    return WeeklyHours(
        [
            HoursRow("mon", "11:00", "21:00", open=False),
            HoursRow("tue", "11:00", "21:00"),
            HoursRow("wed", "18:00", "02:00"),  # past midnight
            HoursRow("thu", "11:00", "21:00"),
            HoursRow("thu", "12:00", "22:00"),  # two rows say two things
            ("sat", "18:00", "2:00"),
            ("sun", "noon", "21:00:00"),
            # no row for Friday
        ]
    )


def test_it_closes_at_the_same_wall_time_in_winter_and_summer(venue):
    assert venue.closes_at(date(2026, 10, 20), LONDON) == utc(2026, 10, 20, 20)  # BST
    assert venue.closes_at(date(2026, 10, 27), LONDON) == utc(2026, 10, 27, 21)  # GMT
    assert venue.opens_at(date(2026, 10, 27), LONDON) == utc(2026, 10, 27, 11)


def test_it_reads_a_closing_at_or_before_the_opening_on_the_next_day(venue):
    assert venue.closes_at(date(2026, 10, 21), LONDON) == utc(2026, 10, 22, 1)
    assert venue.opens_at(date(2026, 10, 21), LONDON) == utc(2026, 10, 21, 17)


def test_it_reads_a_past_midnight_closing_on_the_night_the_clocks_go_back(venue):
    # Saturday 24 October 2026 closes at 02:00 on Sunday, after the repeated hour: 02:00 GMT.
    assert venue.closes_at(date(2026, 10, 24), LONDON) == utc(2026, 10, 25, 2)


def test_it_ends_a_closed_day_or_a_missing_weekday_at_midnight(venue):
    assert venue.closes_at(date(2026, 10, 26), LONDON) == utc(2026, 10, 27)  # closed Monday
    assert venue.opens_at(date(2026, 10, 26), LONDON) == utc(2026, 10, 27)
    assert venue.closes_at(date(2026, 10, 23), LONDON) == utc(2026, 10, 23, 23)  # Friday, BST
    assert venue.closes_at(date(2026, 3, 6), NY) == utc(2026, 3, 7, 5)


def test_it_gives_no_value_for_a_weekday_written_twice(venue):
    assert venue.closes_at(date(2026, 10, 22), LONDON) is None
    assert venue.opens_at(date(2026, 10, 22), LONDON) is None


def test_it_gives_no_value_for_an_edge_it_cannot_read(venue):
    assert venue.opens_at(date(2026, 10, 25), LONDON) is None  # "noon"
    assert venue.closes_at(date(2026, 10, 25), LONDON) == utc(2026, 10, 25, 21)


def test_it_refuses_an_unknown_edge_or_weekday(venue):
    with pytest.raises(ValueError, match="edge: 'lunch'"):
        venue.edge(date(2026, 10, 20), "lunch", LONDON)
    with pytest.raises(ValueError, match="weekday: 'someday'"):
        WeeklyHours([("someday", "09:00", "17:00")])
