"""The tax example's quarterly estimates (S18): the Tax Plan's `estimate` schedule mints an
estimate for each quarter of a C corp, ten days before its payment is due, and the due rule's
`quarters` puts the first quarter's payment on 15 April and the others inside their quarter.
On a New York test clock from 20 January 2027 through the year."""

import json
from datetime import UTC, date, datetime

import pytest

from calendars import periods
from timekeeping import manifests
from timekeeping.clocks import dues
from timekeeping.demo import TAX_MANIFEST
from timekeeping.manifests.check import check
from timekeeping.models import Job, Occurrence, Record, Subject
from timekeeping.recurring import plans
from timekeeping.tick import test_clocks

START = datetime(2027, 1, 20, 14, tzinfo=UTC)


@pytest.mark.parametrize(("quarter", "due"), [
    ("2027-Q1", date(2027, 4, 15)), ("2027-Q2", date(2027, 6, 15)),
    ("2027-Q3", date(2027, 9, 15)), ("2027-Q4", date(2027, 12, 15)),
    ("2028-Q1", date(2028, 4, 15))])
def test_a_quarter_keeps_its_own_rule(quarter, due):
    rule = json.loads(TAX_MANIFEST.read_text())["services"]["estimate"]["clocks"]["pay"]["due"]
    last_day = date.fromordinal(periods.period("quarter", quarter).end.toordinal() - 1)
    found = dues.evaluate(rule, dues.DueContext(period_end=last_day, job_input={}, item="",
                                                period=quarter))
    assert found == due


def _subject(brand, clock, entity: str) -> Subject:
    return Subject.objects.create(brand=brand, test_clock=clock, kind="taxpayer",
                                  key=entity, name=entity, zone="America/New_York",
                                  input={"entity": entity, "jurisdictions": ["US"]})


def test_the_plan_mints_each_quarters_estimate_ten_days_before_it_is_due(brand):
    manifests.load(brand, json.loads(TAX_MANIFEST.read_text()))
    clock = test_clocks.create(brand=brand, name="2027", frozen_time=START)
    corp, person = _subject(brand, clock, "C corp"), _subject(brand, clock, "individual")
    for subject in (corp, person):
        plans.subscribe(subject=subject, service="tax-plan", anchor=date(2027, 1, 20))
    test_clocks.advance(clock, to=datetime(2027, 12, 31, 14, tzinfo=UTC))
    minted = Job.objects.filter(service="estimate").order_by("period")
    assert [(job.subject_id, job.period) for job in minted] == [
        (corp.pk, "2027-Q1"), (corp.pk, "2027-Q2"), (corp.pk, "2027-Q3"), (corp.pk, "2027-Q4")]
    # Each minted at 09:00 New York ten days before its payment: daylight time from March.
    mints = Record.objects.filter(kind="schedule.minted", data__service="estimate").order_by(
        "instant")
    assert [r.instant for r in mints] == [datetime(2027, 4, 5, 13, tzinfo=UTC),
                                          datetime(2027, 6, 5, 13, tzinfo=UTC),
                                          datetime(2027, 9, 5, 13, tzinfo=UTC),
                                          datetime(2027, 12, 5, 14, tzinfo=UTC)]
    dues_ = Occurrence.objects.filter(clock__job__service="estimate").order_by("due")
    assert [o.rule_due for o in dues_] == [date(2027, 4, 15), date(2027, 6, 15),
                                           date(2027, 9, 15), date(2027, 12, 15)]
    # 5 September is a Sunday: a mint day is the plan's, not a due date, so it does not roll.
    # All four are inside the plan's allowance of four estimates a cycle.
    assert [(r.data["used"], r.data["included"], r.data["inside"]) for r in mints] == [
        (1, 4, True), (2, 4, True), (3, 4, True), (4, 4, True)]
    assert not Job.objects.filter(subject=person, service="estimate").exists()


def test_quarters_are_checked():
    document = json.loads(TAX_MANIFEST.read_text())
    pay = document["services"]["estimate"]["clocks"]["pay"]
    pay["due"]["quarters"] = {"Q5": {"after_period": {"months": 1, "day": 15}}}
    problems = {(p.code, p.path) for p in check(document)}
    assert ("clock.due_invalid", "$.services.estimate.clocks.pay.due.quarters") in problems
    pay["due"]["quarters"] = {"Q1": {"after_period": {"months": 1, "day": 15},
                                     "quarters": {}}}
    assert any(p.code == "clock.due_invalid" for p in check(document))
