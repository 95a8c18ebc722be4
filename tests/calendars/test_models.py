from datetime import UTC, date, datetime

import pytest
from django.core.exceptions import ValidationError

from calendars.models import Calendar, OpeningHours, Postponement, WeeklyHours


def us_dc(**changes) -> Calendar:
    fields = {"name": "US federal + DC", "zone": "America/New_York", "holidays_country": "US",
              "holidays_subdivision": "DC"}
    return Calendar(**{**fields, **changes})


@pytest.mark.django_db
def test_it_gives_the_value_that_rolls_and_rings():
    stored = us_dc()
    stored.full_clean()
    stored.save()
    rules = Calendar.objects.get(pk=stored.pk).rules()
    assert rules.roll(date(2028, 4, 15)).date == date(2028, 4, 18)
    assert rules.rings(date(2028, 1, 19)) == datetime(2028, 1, 19, 14, tzinfo=UTC)
    assert rules is stored.rules()  # one value per distinct calendar, so years are built once


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"zone": "Mars/Olympus"}, "zone", "not an IANA time zone"),
        ({"closes": "25:00"}, "closes", "not a time of day"),
        ({"rings_at": "9am"}, "rings_at", "not a time of day"),
        ({"holidays_country": "XX", "holidays_subdivision": ""}, "holidays_country", "'XX'"),
        ({"holidays_subdivision": "ZZ"}, "holidays_subdivision", "'ZZ'"),
        ({"holidays_country": ""}, "holidays_country", "needs its country"),
        ({"weekends": ["sat", "funday"]}, "weekends", "'funday'"),
        ({"closed_dates": ["2026-02-30"]}, "closed_dates", "'2026-02-30'"),
        ({"roll": "sideways"}, "roll", "not a valid choice"),
    ],
)
@pytest.mark.django_db
def test_it_names_the_field_and_saves_nothing(changes, field, words):
    stored = us_dc(**changes)
    with pytest.raises(ValidationError) as error:
        stored.full_clean()
    assert field in error.value.message_dict
    assert words in " ".join(error.value.message_dict[field])
    assert not Calendar.objects.exists()


@pytest.mark.django_db
def test_it_refuses_a_bad_calendar_in_the_admin_and_keeps_nothing(admin_client_logged_in):
    page = admin_client_logged_in.post(
        "/admin/calendars/calendar/add/",
        {"name": "Bad", "zone": "Mars/Olympus", "weekends": '["sat", "sun"]',
         "closed_dates": "[]", "closes": "25:00", "roll": "next open day",
         "postponements-TOTAL_FORMS": "0", "postponements-INITIAL_FORMS": "0"},
    )
    assert page.status_code == 200
    body = page.content.decode()
    assert "is not an IANA time zone" in body and "is not a time of day" in body
    assert not Calendar.objects.exists()


@pytest.mark.django_db
def test_it_checks_a_postponement_runs_forward():
    calendar = us_dc()
    calendar.save()
    notice = Postponement(calendar=calendar, from_date=date(2027, 1, 10),
                          through=date(2027, 1, 1), to=date(2027, 5, 15), notice="CA-2027-01")
    with pytest.raises(ValidationError) as error:
        notice.full_clean()
    assert "through" in error.value.message_dict
    notice.through = date(2027, 3, 31)
    notice.full_clean()
    assert notice.covers(date(2027, 3, 15)) and not notice.covers(date(2027, 4, 15))


@pytest.mark.django_db
def test_it_builds_weekly_hours_from_its_rows():
    weekly = WeeklyHours.objects.create(name="Kitchen")
    OpeningHours.objects.create(weekly=weekly, weekday="tue", opens="11:00", closes="21:00")
    OpeningHours.objects.create(weekly=weekly, weekday="wed", opens="18:00", closes="02:00")
    rules = weekly.rules()
    assert rules.closes_at(date(2026, 10, 27), "Europe/London") == datetime(
        2026, 10, 27, 21, tzinfo=UTC
    )
    assert rules.closes_at(date(2026, 10, 28), "Europe/London") == datetime(
        2026, 10, 29, 2, tzinfo=UTC
    )
    bad = OpeningHours(weekly=weekly, weekday="thu", opens="25:00", closes="21:00")
    with pytest.raises(ValidationError) as error:
        bad.full_clean()
    assert "opens" in error.value.message_dict


@pytest.mark.django_db
def test_it_falls_back_to_utc_weekends_for_a_brand_without_a_calendar(brand):
    rules = brand.calendar_rules()
    assert rules.zone_name == "UTC"
    assert rules.rings(date(2026, 7, 1)) == datetime(2026, 7, 1, tzinfo=UTC)
    brand.calendar = us_dc()
    brand.calendar.save()
    assert brand.calendar_rules().is_open(date(2028, 4, 17)) is False


@pytest.mark.django_db
@pytest.mark.parametrize("page", ["calendar", "postponement", "weeklyhours"])
def test_it_lists_calendar_models_in_the_admin(admin_client_logged_in, page):
    assert admin_client_logged_in.get(f"/admin/calendars/{page}/").status_code == 200
