"""Writes are whole or absent, and every date accepted lies in the span kept (1900 to 2200):
an order, a postponement, a test clock, a row."""

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from calendars.models import Postponement
from timekeeping import clocks, manifests
from timekeeping.clocks import opening
from timekeeping.models import Clock, Job, Occurrence, Record, TestClock, Timer

EXAMPLES = Path(__file__).resolve().parents[2] / "timekeeping" / "manifests" / "examples"
TAX = json.loads((EXAMPLES / "tax.json").read_text())
JSON = "application/json"


@pytest.fixture
def owner(client, actors, brand):
    manifests.load(brand, TAX)
    client.force_login(actors["owner"])
    return client


@pytest.fixture
def subject(owner):
    return owner.post("/api/subjects", {"kind": "taxpayer", "key": "1", "name": "S",
                                        "zone": "America/New_York"}, content_type=JSON).json()


def order(owner, subject, period, **input):
    return owner.post("/api/jobs", {"service": "annual-return", "subject": subject["id"],
                                    "period": period,
                                    "input": {"jurisdictions": ["US"], **input}},
                      content_type=JSON)


def test_a_far_period_is_refused_by_name_and_leaves_the_period_free(owner, subject):
    far = order(owner, subject, "9999")
    assert far.status_code == 400 and "period" in far.json()
    assert not Job.objects.exists() and not Timer.objects.exists()
    assert order(owner, subject, "2027").status_code == 201


def test_a_far_input_date_is_refused_by_name_and_leaves_the_period_free(owner, subject):
    far = order(owner, subject, "2027", earliest_credit_expiry="9999-12-31")
    assert far.status_code == 400
    assert list(far.json()) == ["input.earliest_credit_expiry"]
    assert "1900-01-01 to 2200-12-31" in far.json()["input.earliest_credit_expiry"][0]
    bad = order(owner, subject, "2027", earliest_credit_expiry="2046-02-30")
    assert bad.status_code == 400 and "input.earliest_credit_expiry" in bad.json()
    assert not Job.objects.exists() and not Clock.objects.exists()
    assert order(owner, subject, "2027", earliest_credit_expiry="2046-12-31").status_code == 201


def test_an_order_that_fails_halfway_keeps_nothing(brand, owner, subject, monkeypatch):
    # Its clocks and dates are written, its first date's reminders armed (gathered), and the
    # second date's arming fails: nothing of the order is kept.
    armed = []
    real = opening.arm

    def fails_on_the_second(occurrence, spec, **options):
        if armed:
            raise RuntimeError("the database refused the second date's reminders")
        armed.append(occurrence.label)
        return real(occurrence, spec, **options)

    monkeypatch.setattr(opening, "arm", fails_on_the_second)
    from timekeeping.models import Subject

    with pytest.raises(RuntimeError):
        clocks.order(brand=brand, service="annual-return", period="2027",
                     subject=Subject.objects.get(pk=subject["id"]),
                     input={"jurisdictions": ["US"]})
    assert armed, "the first date was armed before the failure"
    assert not Job.objects.exists() and not Clock.objects.exists()
    assert not Occurrence.objects.exists()
    assert not Timer.objects.exists() and not Record.objects.filter(kind="job.opened").exists()


def test_a_postponement_to_a_far_date_is_refused_and_not_stored(owner, brand):
    answer = owner.post("/api/owner/calendar/postponements",
                        {"from": "2028-04-10", "through": "2028-04-20", "to": "9999-12-31",
                         "notice": "IR-2028-01"}, content_type=JSON)
    assert answer.status_code == 400 and list(answer.json()) == ["to"]
    assert not Postponement.objects.exists()


@pytest.mark.parametrize("when", ["9999-12-31T00:00:00Z", "0001-01-01T00:00:00Z",
                                  "2201-01-01T00:00:00+14:00"])
def test_a_test_clock_outside_the_span_is_refused(owner, brand, when):
    made = owner.post("/api/test_clocks", {"name": "far", "frozen_time": when},
                      content_type=JSON)
    assert made.status_code == 400 and "frozen_time" in made.json()
    clock = TestClock.objects.create(brand=brand, name="t",
                                     frozen_time=datetime(2028, 1, 1, tzinfo=UTC))
    advanced = owner.post(f"/api/test_clocks/{clock.pk}/advance", {"to": when},
                          content_type=JSON)
    assert advanced.status_code == 400 and "to" in advanced.json()
    clock.refresh_from_db()
    assert (clock.frozen_time, clock.status) == (datetime(2028, 1, 1, tzinfo=UTC), "ready")
