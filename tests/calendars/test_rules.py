from datetime import UTC, date, datetime, timedelta

import pytest

from calendars.rules import Calendar

NY, LONDON, LORD_HOWE = "America/New_York", "Europe/London", "Australia/Lord_Howe"


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


@pytest.fixture(scope="module")
def us_dc():
    return Calendar(zone=NY, weekends=("sat", "sun"), holidays=("US", "DC"), closed=(),
                    closes="23:59", rings_at="09:00", roll="next open day")


def test_it_rolls_the_seed_filing_date_past_the_weekend_and_emancipation_day(us_dc):
    rolled = us_dc.roll(date(2028, 4, 15))
    assert rolled.date == date(2028, 4, 18)
    assert rolled.rolled_from == date(2028, 4, 15)
    assert rolled.reasons == [
        "2028-04-15 Saturday",
        "2028-04-16 Sunday, Emancipation Day",
        "2028-04-17 Emancipation Day (observed)",
    ]
    assert [day.why for day in rolled.passed][-1] == "Emancipation Day (observed)"


def test_it_keeps_an_open_date_with_no_reasons(us_dc):
    rolled = us_dc.roll(date(2028, 5, 15))  # New Jersey's own date, a Monday
    assert (rolled.date, rolled.rolled_from, rolled.reasons) == (date(2028, 5, 15), None, [])


def test_it_rolls_the_extended_date_from_sunday_to_monday(us_dc):
    rolled = us_dc.roll(date(2028, 10, 15))
    assert rolled.date == date(2028, 10, 16)
    assert rolled.reasons == ["2028-10-15 Sunday"]


def test_it_answers_which_days_are_open(us_dc):
    assert us_dc.is_open(date(2028, 4, 18))
    assert not us_dc.is_open(date(2028, 4, 17))  # observed holiday on a Monday
    assert not us_dc.is_open(date(2028, 4, 15))  # Saturday
    assert not us_dc.is_open(date(2028, 7, 4))
    assert us_dc.closed_because(date(2028, 11, 10)) == "Veterans Day (observed)"


def test_it_keeps_a_closed_date_when_the_rule_is_none():
    cal = Calendar(zone=NY, holidays=("US", "DC"), roll="none")
    rolled = cal.roll(date(2028, 4, 15))
    assert (rolled.date, rolled.rolled_from, rolled.reasons) == (date(2028, 4, 15), None, [])


def test_it_takes_any_set_of_weekdays_as_weekends():
    friday_saturday = Calendar(zone="Asia/Riyadh", weekends=("fri", "sat"))
    assert friday_saturday.is_open(date(2026, 12, 6))  # a Sunday
    rolled = friday_saturday.roll(date(2026, 12, 4))  # a Friday
    assert rolled.date == date(2026, 12, 6)
    assert rolled.reasons == ["2026-12-04 Friday", "2026-12-05 Saturday"]
    assert Calendar(weekends=()).is_open(date(2026, 12, 5))
    assert not Calendar(weekends=(2, "Thursday")).is_open(date(2026, 12, 3))


def test_it_closes_explicit_dates_and_dates_a_function_gives_per_year():
    explicit = Calendar(closed=("2026-12-24", "2026-12-25", date(2026, 12, 28)))
    assert explicit.roll(date(2026, 12, 24)).date == date(2026, 12, 29)
    asked = []

    def company_days(year):
        asked.append(year)
        return [f"{year}-12-24", date(year, 12, 31)]

    by_year = Calendar(closed=company_days)
    assert not by_year.is_open(date(2027, 12, 24))
    assert not by_year.is_open(date(2028, 12, 31))
    assert by_year.is_open(date(2027, 12, 23))
    for _ in range(50):
        by_year.is_open(date(2027, 12, 24))
    assert asked == [2027, 2028]  # a year's closed days are computed once per calendar
    assert by_year.roll(date(2027, 12, 24)).reasons == ["2027-12-24 closed", "2027-12-25 Saturday",
                                                        "2027-12-26 Sunday"]


def test_it_rolls_across_a_year_end():
    cal = Calendar(zone=LONDON, holidays=("GB", "ENG"))
    rolled = cal.roll(date(2027, 12, 25))  # Saturday; Boxing Day Sunday; both observed after
    assert rolled.date == date(2027, 12, 29)
    assert rolled.reasons[-1] == "2027-12-28 Boxing Day (observed)"
    assert cal.roll(date(2028, 1, 1)).date == date(2028, 1, 4)


def test_it_makes_a_date_late_from_the_minute_after_closes(us_dc):
    late = us_dc.late_from(date(2028, 4, 18))
    assert late == utc(2028, 4, 19, 4)
    assert late - timedelta(microseconds=1) == utc(2028, 4, 19, 3, 59, 59, 999999)  # on time


@pytest.mark.parametrize(
    ("zone", "day", "closes", "late"),
    [
        (NY, date(2026, 1, 15), "23:59", utc(2026, 1, 16, 5)),
        (NY, date(2026, 3, 8), "23:59", utc(2026, 3, 9, 4)),  # the spring-forward day
        (NY, date(2026, 11, 1), "01:30", utc(2026, 11, 1, 5, 31)),  # repeated: the first
        (NY, date(2026, 3, 8), "02:30", utc(2026, 3, 8, 7, 31)),  # skipped: an hour later
        (LONDON, date(2026, 10, 25), "23:59", utc(2026, 10, 26)),
        (LONDON, date(2026, 3, 29), "17:00", utc(2026, 3, 29, 16, 1)),
        (LORD_HOWE, date(2026, 10, 4), "23:59", utc(2026, 10, 4, 13)),
        (LORD_HOWE, date(2026, 4, 5), "01:45", utc(2026, 4, 4, 14, 46)),
    ],
)
def test_it_closes_a_due_date_in_its_zone(zone, day, closes, late):
    assert Calendar(zone=zone, closes=closes).late_from(day) == late


def test_it_rings_the_seed_notice_90_days_before_at_0900_new_york(us_dc):
    due = us_dc.roll(date(2028, 4, 15)).date
    assert us_dc.rings(due - timedelta(days=90)) == utc(2028, 1, 19, 14)
    assert us_dc.rings(due - timedelta(days=3)) == utc(2028, 4, 15, 13)  # on a Saturday


@pytest.mark.parametrize(
    ("zone", "day", "rings_at", "rings"),
    [
        (NY, date(2026, 3, 8), "02:30", utc(2026, 3, 8, 7)),  # skipped: next minute, 03:00
        (NY, date(2026, 11, 1), "01:30", utc(2026, 11, 1, 5, 30)),  # repeated: the first
        (LONDON, date(2026, 3, 29), "01:15", utc(2026, 3, 29, 1)),  # 02:00 BST
        (LONDON, date(2026, 10, 25), "01:15", utc(2026, 10, 25, 0, 15)),
        (LORD_HOWE, date(2026, 10, 4), "02:15", utc(2026, 10, 3, 15, 30)),  # 02:30
        (LORD_HOWE, date(2026, 4, 5), "01:40", utc(2026, 4, 4, 14, 40)),
    ],
)
def test_it_rings_a_rung_across_both_changes(zone, day, rings_at, rings):
    assert Calendar(zone=zone, rings_at=rings_at).rings(day) == rings


def test_it_rings_at_0900_with_a_zone_and_midnight_without():
    assert Calendar(zone=LONDON).rings(date(2026, 7, 1)) == utc(2026, 7, 1, 8)
    assert Calendar().rings(date(2026, 7, 1)) == utc(2026, 7, 1)
    assert Calendar(zone=NY).rings(date(2026, 7, 1), at="17:30") == utc(2026, 7, 1, 21, 30)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"zone": "Mars/Olympus"}, "zone: 'Mars/Olympus'"),
        ({"closes": "25:00"}, "closes: '25:00'"),
        ({"rings_at": "9am"}, "rings_at: '9am'"),
        ({"holidays": ("XX", None)}, "holidays: 'XX'"),
        ({"holidays": ("US", "ZZ")}, "holidays: 'ZZ' is not a subdivision of US"),
        ({"weekends": ("sat", "funday")}, "weekends: 'funday'"),
        ({"weekends": tuple(range(7))}, "weekends: a calendar needs at least one open weekday"),
        ({"roll": "previous open day"}, "roll: 'previous open day'"),
        ({"closed": ("2026-02-30",)}, "closed: '2026-02-30'"),
    ],
)
def test_it_refuses_a_bad_argument_and_names_it(arguments, message):
    with pytest.raises(ValueError) as error:
        Calendar(**arguments)
    assert message in str(error.value)


def test_it_is_immutable(us_dc):
    with pytest.raises(AttributeError):
        us_dc.zone = LONDON
