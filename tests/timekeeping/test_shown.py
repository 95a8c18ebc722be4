"""One format for each thing people read (issue 27, timekeeping/shown.py): dates, times in a
named zone across a DST change, relative spans, zone names, people and money by Babel."""

from datetime import UTC, date, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from hypothesis import given, settings
from hypothesis import strategies as st

from timekeeping.basics import shown
from timekeeping.clocks import exposure

NEW_YORK = "America/New_York"


def test_it_says_a_date_and_an_instant_in_its_zone_on_both_sides_of_spring_forward():
    assert shown.day(date(2028, 4, 18)) == "Tue 18 Apr 2028"
    before = datetime(2027, 3, 14, 6, 59, tzinfo=UTC)  # 01:59 EST
    after = before + timedelta(minutes=1)  # 03:00 EDT: 02:xx never happens
    assert shown.moment(before, NEW_YORK) == "Sun 14 Mar 2027, 01:59 EST"
    assert shown.moment(after, NEW_YORK) == "Sun 14 Mar 2027, 03:00 EDT"
    assert shown.clock_time(after, "Europe/London") == "07:00 GMT"


def test_it_says_how_far_an_instant_is_from_now():
    now = datetime(2028, 4, 10, 12, tzinfo=UTC)
    assert shown.relative(now + timedelta(days=8, hours=3), now) == "in 8 days"
    assert shown.relative(now - timedelta(hours=2), now) == "2 hours ago"
    assert shown.relative(now + timedelta(seconds=30), now) == "now"
    assert shown.relative(now + timedelta(days=800), now) == "in 2 years"
    assert shown.span(timedelta(minutes=1)) == "1 minute"


def test_it_names_zones_by_their_city_and_utc_plainly():
    assert shown.zone_name(NEW_YORK) == "New York time"
    assert shown.zone_name("Europe/London") == "London time"
    assert shown.zone_name("UTC") == "UTC"


@pytest.mark.parametrize(("amount", "currency", "exact", "short"), [
    (240000, "USD", "$2,400.00", "$2,400"),
    (32450, "USD", "$324.50", "$324.50"),
    (-1999, "USD", "-$19.99", "-$19.99"),
    (1550, "EUR", "€15.50", "€15.50"),
    (500000, "JPY", "¥500,000", "¥500,000"),
    (123456, "GBP", "£1,234.56", "£1,234.56"),
])
def test_money_is_exact_minor_units_in_the_settings_locale(amount, currency, exact, short):
    assert shown.money(amount, currency) == exact
    assert shown.money(amount, currency, short=True) == short


def test_the_locale_comes_from_the_settings(settings):
    settings.LANGUAGE_CODE = "en-gb"
    assert shown.money(240000, "USD") == "US$2,400.00"
    assert shown.money(240000, "GBP") == "£2,400.00"


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(min_value=0, max_value=10**12 - 1),  # minor_units reads 12 digits
       st.sampled_from(["USD", "EUR", "JPY"]))
def test_what_the_pages_write_reads_back_exactly(amount, currency):
    written = shown.money(amount, currency).lstrip("$€¥")
    assert exposure.minor_units(written, currency) == amount


@pytest.mark.django_db
def test_a_person_is_named_by_their_full_name_else_their_sign_in():
    grace = get_user_model().objects.create(username="grace", first_name="Grace",
                                            last_name="Okafor")
    plain = get_user_model().objects.create(username="sam")
    assert (shown.person(grace), shown.person(plain)) == ("Grace Okafor", "sam")
    assert (shown.kind("rung"), shown.kind("delay", 3), shown.kind("hard date", 2)) == (
        "reminder", "tasks", "fixed dates")
