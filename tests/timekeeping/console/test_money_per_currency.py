"""Amounts in two currencies are never added or compared (S12, issue 29): the money at risk,
the dates at risk's total and their sort stand per currency, side by side ("€150 · $972"),
with the bars scaled each to its own currency. The tax manifest with its franchise reports
priced in euros, on a New York test clock."""

import copy
import json
from datetime import UTC, date, datetime

import pytest
from django.test import Client

from timekeeping import clocks, manifests
from timekeeping.basics import shown
from timekeeping.clocks import costs, dates
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Subject, TestClock

TAX = json.loads(TAX_MANIFEST.read_text())
EUROS = {"per_month_late": {"amount": 15000, "currency": "EUR"}}  # €150 a month late


@pytest.fixture
def world(brand, actors):
    document = copy.deepcopy(TAX)
    document["services"]["annual-return"]["clocks"]["franchise"]["exposure"] = EUROS
    manifests.load(brand, document)
    brand.refresh_from_db()
    spring = TestClock.objects.create(brand=brand, name="spring",
                                      frozen_time=datetime(2028, 3, 1, 14, tzinfo=UTC))
    subject = Subject.objects.create(brand=brand, kind="taxpayer", key="1", name="Harbor",
                                     zone="America/New_York", test_clock=spring)
    clocks.order(brand=brand, service="annual-return", subject=subject, period="2027",
                 input={"jurisdictions": ["US", "US-CA", "US-NJ"], "franchise_reports": ["DE"],
                        "earliest_credit_expiry": "2046-12-31"})
    return spring


def _at(world, instant):
    world.frozen_time = instant
    world.save()


def test_it_shows_amounts_side_by_side_in_the_one_money_format():
    assert shown.moneys({"USD": 120000, "EUR": 30000}) == "€300 · $1,200"
    assert shown.moneys({"USD": 120050}) == "$1,200.50"
    assert shown.moneys({}) == ""


def test_each_week_stands_per_currency_with_bars_of_its_own_currency(brand, world):
    _at(world, datetime(2028, 4, 20, 14, tzinfo=UTC))
    found = costs.at_risk(brand, now=datetime(2026, 1, 1, tzinfo=UTC), test_clock=world)
    assert (found.late.dates, found.late.text, found.late.bars) == (3, "$972", [100])
    may = {week.start: week for week in found.weeks}[date(2028, 5, 15)]
    # US-NJ's filing ($324) and the franchise report (€150) turn late the same week: side by
    # side, never "$474"; the euro bar is full (its currency's largest), the dollar bar a third.
    assert (may.dates, may.text, may.bars) == (2, "€150 · $324", [100, 33])
    assert found.peaks == {"EUR": 15000, "USD": 97200}


def test_dates_at_risk_sort_by_currency_then_cost_and_page_alike(brand, world):
    _at(world, datetime(2028, 5, 10, 14, tzinfo=UTC))
    risk = dates.AtRisk(brand, world=world)
    lines = risk[0:]
    priced = [(line.what, line.occurrence.miss_currency, line.occurrence.miss_cost)
              for line in lines if line.price]
    # The euro date first (EUR before USD, by code), though €150 is less than $324: two
    # currencies are never ranked by each other's amounts. Then the dollars, dearest first
    # (all $324), then nearest; unpriced dates last.
    assert priced[0] == ("file the franchise report on the 2027 books, DE", "EUR", 15000)
    assert {currency for _, currency, _ in priced[1:]} == {"USD"}
    assert [line.price for line in lines].index(None) == len(priced)
    assert all(line.price is None for line in lines[len(priced):])
    late_from = [line.occurrence.late_from for line in lines[1:len(priced)]]
    assert late_from == sorted(late_from)
    paged = [line.occurrence.pk for number in (1, 2, 3, 4) for line in
             risk.page(number, 2).object_list]
    assert paged == [line.occurrence.pk for line in lines]
    assert risk.totals().said == (f"€150 · $1,296 a month at risk across {len(lines)} dates "
                                  f"({len(lines) - len(priced)} of them not priced).")


def test_the_console_shows_each_currency_on_its_own(brand, world, actors):
    _at(world, datetime(2028, 5, 10, 14, tzinfo=UTC))
    owner = Client()
    owner.force_login(actors["owner"])
    page = owner.get(f"/console/{brand.pk}/?test={world.pk}").content.decode()
    assert "€150 · $1,296 a month at risk across" in page
    assert "€150 · $324" in page  # the week of 15 May, in the money at risk
    assert "$1,446" not in page and "+" not in page.split("Money at risk", 1)[1].split(
        "</table>", 1)[0]
