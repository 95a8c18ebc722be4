"""Open dates as people see them: what a miss costs, what is at risk, what is coming up."""

import copy
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from timekeeping import clocks, manifests
from timekeeping.clocks import dates, exposure, history
from timekeeping.models import Subject, TestClock
from timekeeping.tick import test_clocks

EXAMPLES = Path(__file__).resolve().parents[2] / "timekeeping" / "manifests" / "examples"
TAX = json.loads((EXAMPLES / "tax.json").read_text())
START = datetime(2028, 2, 1, 14, tzinfo=UTC)


def test_a_price_reads_its_form_and_says_it_as_people_do():
    monthly = exposure.price({"per_month_late": {"amount": 32400, "currency": "USD"}})
    daily = exposure.price({"per_day_late": {"amount": 1550, "currency": "EUR"}})
    once = exposure.price({"once": {"amount": 500000, "currency": "JPY"}})
    assert (monthly.text, daily.text, once.text) == (
        "about $324 a month late", "about €15.50 a day late", "about ¥500,000 if missed")
    assert (monthly.monthly, daily.monthly, once.monthly) == (32400, 46500, 500000)
    late_from = datetime(2028, 4, 19, 4, tzinfo=UTC)
    assert monthly.so_far(late_from, datetime(2028, 5, 20, tzinfo=UTC)) == 64800  # 2 months
    assert exposure.price({"per_week": {}}) is None and exposure.price(None) is None


@pytest.fixture
def world(brand):
    document = copy.deepcopy(TAX)
    document["services"]["annual-return"]["clocks"]["pay"]["exposure"] = {
        "per_day_late": {"amount": 2000, "currency": "USD"}}  # $600 a month: before filing's
    manifests.load(brand, document)
    clock = TestClock.objects.create(brand=brand, name="t", frozen_time=START)
    subject = Subject.objects.create(brand=brand, test_clock=clock, kind="taxpayer", key="1",
                                     name="Harbor", zone="America/New_York", owner_name="Grace")
    clocks.order(brand=brand, service="annual-return", subject=subject, period="2027",
                 input={"jurisdictions": ["US", "US-NJ"]})
    return clock, subject


def _now(clock: TestClock) -> TestClock:
    """The test world as it stands now (advanced since it was read)."""
    return TestClock.objects.get(pk=clock.pk)


def test_live_lists_none_of_a_test_worlds_dates(brand, world):
    assert dates.at_risk(brand) == []  # the subject lives in the test world: never live


def test_at_risk_lists_near_and_hard_dates_priced_first_by_what_a_month_late_costs(brand, world):
    clock, _ = world
    assert [line.what for line in dates.at_risk(brand, world=_now(clock))] == [
        "pay the 2027 tax", "refund claims on the 2027 return close"]  # hard dates only yet
    test_clocks.advance(clock, to=datetime(2028, 4, 10, tzinfo=UTC))
    lines = dates.at_risk(brand, world=_now(clock))
    assert [(line.what, line.state) for line in lines] == [
        ("pay the 2027 tax", "near"), ("file the 2027 return, US", "near"),
        ("refund claims on the 2027 return close", "ahead")]
    pay, file_us, _ = lines
    assert pay.cost == "about $20 a day late" and file_us.cost == "about $324 a month late"
    assert pay.when == "in 9 days" and "Reminder sent Tue 4 Apr 2028" in pay.why
    assert "done once 'file' is recorded" in file_us.why
    assert f"{brand.name} answers for it" in file_us.why  # kept of record: the brand, by name
    assert "rang" not in pay.why and "of record" not in file_us.why


def test_a_late_date_says_what_it_has_cost_so_far(brand, world):
    clock, _ = world
    test_clocks.advance(clock, to=datetime(2028, 5, 1, tzinfo=UTC))
    lines = {line.what: line for line in dates.at_risk(brand, world=_now(clock))}
    lapsed = lines["pay the 2027 tax"]  # hard: the tentative extension moved filing, not pay
    assert lapsed.state == "lapsed" and lapsed.when == "11 days late"
    assert lapsed.cost == "about $20 a day late; $240 so far"
    assert "file the 2027 return, US" not in lines  # extended to October: not near


def test_coming_up_puts_what_is_late_first_then_the_soonest(brand, world):
    clock, subject = world
    test_clocks.advance(clock, to=datetime(2028, 4, 20, tzinfo=UTC))
    lines = dates.coming_up([subject])
    assert [(line.what, line.state) for line in lines][:1] == [("pay the 2027 tax", "lapsed")]
    ahead = [line.occurrence.late_from for line in lines if line.state not in ("lapsed", "late")]
    assert ahead == sorted(ahead)


def test_a_page_of_dates_costs_the_same_few_queries_however_many_there_are(
        brand, world, django_assert_max_num_queries):
    clock, subject = world
    for n in range(30):
        more = Subject.objects.create(brand=brand, test_clock=clock, kind="taxpayer",
                                      key=f"k{n}", name=f"S{n}")
        clocks.order(brand=brand, service="annual-return", subject=more, period="2027",
                     input={"jurisdictions": ["US", "US-CA"]})
    test_clocks.advance(clock, to=datetime(2028, 4, 10, tzinfo=UTC))
    with django_assert_max_num_queries(4):
        assert len(dates.at_risk(brand, world=_now(clock))) > 60


def test_the_history_says_what_happened_newest_first(brand, world):
    clock, subject = world
    test_clocks.advance(clock, to=datetime(2028, 4, 20, tzinfo=UTC))
    lines = history.history(subject)
    said = [line.text for line in lines]
    assert [line.at for line in lines] == sorted((line.at for line in lines), reverse=True)
    assert "The annual return job for 2027 was opened." in said
    assert any(text.startswith("The pay date of Tue 18 Apr 2028 was missed") for text in said)
    assert any(text.startswith("The file date for US moved from Tue 18 Apr 2028 to Mon 16 Oct "
                               "2028")
               for text in said)
    assert any(text.startswith("Reminder sent: the file date for US is due Tue 18 Apr 2028")
               for text in said)
