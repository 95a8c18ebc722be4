"""A date measured from another clock follows it (S12): after an extension moves the clock it
is measured from, and after an authority's notice moves it; a date already kept stays kept."""

import copy
import json
from datetime import UTC, date, datetime

import pytest

from timekeeping import clocks, manifests
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Occurrence, Record, Subject, TestClock, Timer
from timekeeping.tick import test_clocks

START = datetime(2028, 2, 1, 14, tzinfo=UTC)
JURISDICTIONS = ["US", "US-CA", "US-NY", "US-NJ"]
REVIEW = {"title": "review the {period} filing", "due": {"clock": "file", "days": 30},
          "each": {"of": "jurisdictions"}, "rungs": ["notice 60d"]}


@pytest.fixture
def tax(brand, actors):
    actors["owner"].email = "owner@example.test"
    actors["owner"].save()
    document = json.loads(TAX_MANIFEST.read_text())
    document["services"]["annual-return"]["clocks"]["review"] = copy.deepcopy(REVIEW)
    assert not manifests.check(document)
    manifests.load(brand, document)
    brand.refresh_from_db()
    clock = TestClock.objects.create(brand=brand, name="2027", frozen_time=START)
    subject = Subject.objects.create(brand=brand, test_clock=clock, kind="taxpayer",
                                     key="11-1111111", name="Fernhill Tools",
                                     zone="America/New_York")
    job = clocks.order(brand=brand, service="annual-return", subject=subject, period="2027",
                       input={"jurisdictions": JURISDICTIONS,
                              "earliest_credit_expiry": "2046-12-31"})
    return brand, clock, job


def due(job, name, item=""):
    return Occurrence.objects.get(clock__job=job, clock__name=name, item=item)


def test_a_dependent_date_follows_its_clock_after_an_extension(tax):
    brand, clock, job = tax
    assert due(job, "review", "US").due == date(2028, 5, 18)  # 30 days after 04-18
    assert due(job, "review", "US-NJ").due == date(2028, 6, 14)
    # Kept early, by hand: a dependent date already kept stays kept when its clock moves.
    clocks.mark_done(due(job, "review", "US-CA"), by="owner")
    test_clocks.advance(TestClock.objects.get(pk=clock.pk), to=datetime(2028, 4, 16, tzinfo=UTC))
    assert due(job, "file", "US").due == date(2028, 10, 16)  # the extension moved it
    review = due(job, "review", "US")
    # 30 days after 10-16 is Wednesday 11-15.
    assert (review.due, review.moved_from, review.moved_by) == (
        date(2028, 11, 15), date(2028, 5, 18), "follows file")
    assert due(job, "review", "US-NY").due == date(2028, 11, 15)
    assert (due(job, "review", "US-CA").status, due(job, "review", "US-CA").due) == (
        "satisfied", date(2028, 5, 18))
    assert due(job, "review", "US-NJ").due == date(2028, 6, 14)  # its filing did not move
    moved = Record.objects.get(kind="clock.moved", job=job.pk, data__name="review",
                               data__item="US")
    assert moved.data["by"] == "follows" and moved.data["follows_name"] == "file"
    assert moved.data["cause"]["by"] == "extend"
    assert (moved.data["cause"]["from"], moved.data["cause"]["to"]) == ("2028-04-18",
                                                                        "2028-10-16")
    assert (moved.data["from"], moved.data["to"]) == ("2028-05-18", "2028-11-15")
    # Its rung rings again for the new date: 60 days before 11-15, at 09:00 New York time.
    rung = Timer.objects.get(key=f"{review.label}:notice 60d", state="armed")
    assert rung.owed == datetime(2028, 9, 16, 13, tzinfo=UTC)
    late = Timer.objects.get(key=f"{review.label}:date", state="armed")
    assert late.owed == datetime(2028, 11, 16, 5, tzinfo=UTC)  # EST by then


def test_a_dependent_date_follows_its_clock_when_a_notice_postpones_it(tax, client, actors):
    brand, clock, job = tax
    client.force_login(actors["owner"])
    answer = client.post("/api/owner/calendar/postponements", {
        "from": "2028-04-01", "through": "2028-05-31", "to": "2028-06-15",
        "notice": "Relief notice NY-2028-03", "test_clock": clock.pk,
    }, content_type="application/json")
    assert answer.status_code == 201, answer.content
    assert due(job, "file", "US").due == date(2028, 6, 15)
    assert due(job, "file", "US-NJ").due == date(2028, 6, 15)
    # review US (05-18) is in the notice's range too, but it followed its filing first and
    # keeps its distance: 30 days after 06-15 is Saturday 07-15, rolled to Monday 07-17.
    review = due(job, "review", "US")
    assert (review.due, review.rolled_from, review.moved_by) == (
        date(2028, 7, 17), date(2028, 7, 15), "follows file")
    assert due(job, "review", "US-NJ").due == date(2028, 7, 17)
    moved = Record.objects.get(kind="clock.moved", job=job.pk, data__name="review",
                               data__item="US")
    assert moved.data["cause"]["by"] == "calendar"
    assert moved.data["cause"]["notice"] == "Relief notice NY-2028-03"
    assert moved.data["cause"]["record"].startswith("rec_")
    assert any("(follows file)" in line for line in answer.json()["moved"])
    calendar = client.get(f"/api/subjects/{job.subject_id}/calendar?from=2028-02-01")
    assert calendar.status_code == 200
    line = next(each for each in calendar.json()["dates"] if each["what"].startswith("review"))
    assert "moved with file from 05-18 and 06-14" in line["status"]
