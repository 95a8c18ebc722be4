"""Money at risk on the console (S12, S25): what the unkept dates would cost a month late,
summed per week they turn late in the brand's zone, and what is late already, in one world."""

import copy
import json
from datetime import UTC, date, datetime

import pytest
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from timekeeping import clocks, manifests
from timekeeping.basics import shown
from timekeeping.clocks import costs
from timekeeping.clocks.exposure import minor_units as money_at_risk_minor
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Subject, TestClock

TAX = json.loads(TAX_MANIFEST.read_text())


@pytest.fixture
def world(brand, actors):
    manifests.load(brand, copy.deepcopy(TAX))
    brand.refresh_from_db()
    # Wednesday 1 March 2028 in New York, before daylight saving starts on the 12th.
    spring = TestClock.objects.create(brand=brand, name="spring",
                                      frozen_time=datetime(2028, 3, 1, 14, tzinfo=UTC))
    subject = Subject.objects.create(brand=brand, kind="taxpayer", key="1", name="Harbor",
                                     zone="America/New_York", test_clock=spring)
    clocks.order(brand=brand, service="annual-return", subject=subject, period="2027",
                 input={"jurisdictions": ["US", "US-CA", "US-NJ"],
                        "earliest_credit_expiry": "2046-12-31"})
    return spring


def test_the_weeks_ahead_sum_what_a_month_late_would_cost(brand, world):
    found = costs.at_risk(brand, now=datetime(2026, 1, 1, tzinfo=UTC), test_clock=world)
    assert found.late.dates == 0
    assert [week.start for week in found.weeks][:2] == [date(2028, 2, 28), date(2028, 3, 6)]
    priced = {week.start: (week.dates, week.text) for week in found.weeks if week.dates}
    # US and US-CA's filing and the date to pay roll to Tuesday 18 April and turn late on the
    # 19th; US-NJ's (15 May) falls past the eight weeks shown.
    assert priced == {date(2028, 4, 17): (3, "$972")}
    assert (found.later.dates, found.later.text) == (1, "$324")  # US-NJ's
    assert found.rows[-1] is found.later


def test_dates_passed_unkept_are_late_already(brand, world):
    world.frozen_time = datetime(2028, 4, 20, 14, tzinfo=UTC)
    world.save()
    found = costs.at_risk(brand, now=datetime(2026, 1, 1, tzinfo=UTC), test_clock=world)
    assert (found.late.dates, found.late.text) == (3, "$972")
    assert {week.start: week.text for week in found.weeks if week.dates} == {
        date(2028, 5, 15): "$324"}
    assert [row.start for row in found.rows][0] is None  # late already, first


def test_the_console_shows_it_in_the_world_chosen(brand, world, actors):
    owner = Client()
    owner.force_login(actors["owner"])
    page = owner.get(f"/console/{brand.pk}/?test={world.pk}").content.decode()
    assert "Money at risk" in page and "from Mon 17 Apr" in page and "$972" in page
    assert "<th scope=\"row\">later</th>" in page
    # Live (test mode off), the real clock's world has no priced date: no section.
    live = owner.get(f"/console/{brand.pk}/?test=off")
    assert live.status_code == 200 and "Money at risk" not in live.content.decode()


@pytest.mark.parametrize(("typed", "currency", "minor"), [
    ("198", "USD", 19800), ("198.5", "USD", 19850), ("1,198.05", "USD", 119805),
    (" 0.01 ", "USD", 1), ("500", "JPY", 500), ("5.5", "JPY", None), ("1.005", "USD", None),
    ("-1", "USD", None), ("1e3", "USD", None), ("", "USD", None), ("NaN", "USD", None),
])
def test_money_typed_by_a_person_is_read_exactly(typed, currency, minor):
    assert money_at_risk_minor(typed, currency) == minor


@given(st.integers(min_value=0, max_value=10**12))
def test_minor_units_read_back_what_the_pages_write(amount):
    written = shown.money(amount, "USD").removeprefix("$")
    assert money_at_risk_minor(written, "USD") == amount
