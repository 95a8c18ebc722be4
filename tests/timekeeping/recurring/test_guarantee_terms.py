"""A promise's terms (S12, issue 29): the seed's `guarantee: {covers: ['penalties', 'interest
on them'], up_to: 5_000, after: 'notice-response', excludes: 'held'}`, $5,000 kept as 500000
cents. Before the notice response is done a penalty notice credits nothing; after it, the
penalty up to the cap; the share of the lateness the work spent waiting on the customer (an
ask open) is not covered. Through the tick on a New York test clock across the spring change
of 2028 (12 March), and the API."""

from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from money import ledger
from timekeeping import clocks, manifests
from timekeeping.access import keys
from timekeeping.clocks import gate, history
from timekeeping.jobs import asks, lifecycle
from timekeeping.models import Ask, Occurrence, Record, Subject
from timekeeping.tick import test_clocks

START = datetime(2028, 3, 1, 14, tzinfo=UTC)  # 09:00 EST
SEED = {"covers": ["penalties", "interest on them"],
        "up_to": {"amount": 500000, "currency": "USD"},
        "after": "notice-response", "excludes": "held"}


def document(**guarantee) -> dict:
    return {"calendar": {"zone": "America/New_York", "weekends": [], "closes": "23:59",
                         "rings_at": "09:00"},
            "services": {
                "annual-return": {
                    "subject": {"kind": "taxpayer"}, "steps": {"file": {}, "engage": {}},
                    "deliver": {"organizer": {"title": "the organizer", "ask": "owner",
                                              "expires": "180d"}},
                    "clocks": {"file": {"title": "file the return", "due": {"input": "due"},
                                        "each": {"of": "jurisdictions"},
                                        "owner": "of_record", "satisfied_by": ["file"],
                                        "guarantee": {
                                            key: value for key, value in
                                            {**SEED, **guarantee}.items()
                                            if value is not None}}}},
                "notice-response": {"subject": {"kind": "taxpayer"}, "steps": {"reply": {}}}}}


@pytest.fixture
def world(brand, actors):
    def make(jurisdictions=("US",), **guarantee):
        manifests.load(brand, document(**guarantee))
        clock = test_clocks.create(brand=brand, name="spring", frozen_time=START)
        subject = Subject.objects.create(brand=brand, test_clock=clock, kind="taxpayer",
                                         key="1", name="Harbor", zone="America/New_York",
                                         contact_email="harbor@example.com")
        job = clocks.order(brand=brand, service="annual-return", subject=subject,
                           input={"due": "2028-03-10", "jurisdictions": list(jurisdictions)})
        secret = keys.make(brand=brand, name="k", by=actors["owner"], now=START).secret
        return clock, job, {"HTTP_AUTHORIZATION": f"Bearer {secret}"}
    return make


def _advance(clock, to):
    clock.refresh_from_db()
    return test_clocks.advance(clock, to=to)


def _late_from(job, item="US") -> datetime:
    return Occurrence.objects.get(clock__job=job, clock__name="file", item=item).late_from


def _penalty(job, key, amount, notice="CP161", **more):
    return Client().post(f"/api/jobs/{job.pk}/penalties", {
        "clock": "file", "amount": amount, "currency": "USD", "notice": notice, **more},
        content_type="application/json", **key)


def _respond(job):
    """The notice response done: its job, for the same subject and world, ended."""
    response = clocks.order(brand=job.brand, service="notice-response", subject=job.subject,
                            period="CP161", input={})
    lifecycle.end(response, by="ana")


def _customer(job) -> int:
    return ledger.balance(f"{job.brand_id}:customer:{job.subject_id}", brand=job.brand_id)


def test_before_the_notice_response_is_done_a_notice_credits_nothing_and_says_why(world):
    clock, job, key = world()
    asks.answer_ask(Ask.objects.get(job=job), by="harbor")  # before the date: nothing held
    late = _late_from(job)
    _advance(clock, late + timedelta(days=30))  # the date passed: missed, through the tick
    assert Occurrence.objects.get(clock__job=job, item="US").status == "lapsed"
    early = _penalty(job, key, 320000)
    assert early.status_code == 201, early.json()
    assert (early.json()["covered"], early.json()["credited"]) == (0, 0)
    assert early.json()["why"] == ("Nothing was credited: the promise covers penalties once "
                                   "the notice response work is done.")
    assert _customer(job) == 0
    said = [line.text for line in history.history(job.subject)
            if line.kind == "guarantee.credited"]
    assert said == ["Penalty notice CP161 ($3,200.00) on the file date for US. Nothing was "
                    "credited: the promise covers penalties once the notice response work is "
                    "done."]
    _respond(job)
    # Recorded again once the response is done: the penalty, then the cap ($5,000 in all).
    first = _penalty(job, key, 320000).json()
    assert (first["covered"], first["credited"], first["left"]) == (320000, 320000, 180000)
    second = _penalty(job, key, 250000, notice="CP162").json()
    assert (second["covered"], second["credited"], second["left"]) == (250000, 180000, 0)
    assert "the promise's cap for the date is reached" in second["why"]
    assert _customer(job) == 500000


def test_the_share_of_lateness_held_waiting_on_the_customer_is_not_credited(world):
    clock, job, key = world()
    _respond(job)
    late = _late_from(job)
    # The organizer (asked when the job opened) comes 10 days after the date passed, across
    # the change to daylight saving; the return is filed 10 days after that: of 20 days late,
    # 10 were held waiting on the customer.
    _advance(clock, late + timedelta(days=10))
    asks.answer_ask(Ask.objects.get(job=job), by="harbor")
    _advance(clock, late + timedelta(days=20))
    assert gate.propose(job=job, step="file", items=["US"], by="ana").committed
    _advance(clock, late + timedelta(days=45))  # the notice comes later: the lateness ended
    body = _penalty(job, key, 320000).json()
    assert (body["item"], body["covered"], body["credited"], body["left"]) == (
        "US", 160000, 160000, 340000)
    assert body["why"] == ("$1,600.00 was credited; $1,600.00 is not covered: for 10 days of "
                           "the 20 days the date was late, the work waited on the customer; "
                           "$3,400.00 of the promise is left.")
    assert _customer(job) == 160000
    record = Record.objects.get(kind="guarantee.credited")
    assert (record.data["held_seconds"], record.data["late_seconds"]) == (10 * 86400,
                                                                          20 * 86400)


def test_the_held_share_rounds_in_the_customers_favour(world):
    clock, job, key = world()
    _respond(job)
    late = _late_from(job)
    _advance(clock, late + timedelta(days=1))
    asks.answer_ask(Ask.objects.get(job=job), by="harbor")
    _advance(clock, late + timedelta(days=3))  # still late: the lateness runs to now
    body = _penalty(job, key, 100).json()
    assert body["covered"] == 67  # 100 - 100 × 1/3 rounded down


def test_after_a_step_of_the_service_starts_the_promise_once_recorded(world):
    clock, job, key = world(after="engage", excludes=None)
    asks.answer_ask(Ask.objects.get(job=job), by="harbor")
    _advance(clock, _late_from(job) + timedelta(days=5))
    assert _penalty(job, key, 1000).json()["credited"] == 0
    assert gate.propose(job=job, step="engage", by="ana").committed
    assert _penalty(job, key, 1000, notice="CP162").json()["credited"] == 1000


def test_a_notice_on_a_clock_missed_for_several_items_names_its_item(world):
    clock, job, key = world(jurisdictions=("US", "US-CA"))
    _respond(job)
    _advance(clock, _late_from(job) + timedelta(days=2))
    unnamed = _penalty(job, key, 1000)
    assert unnamed.status_code == 400
    assert unnamed.json()["item"] == [
        "'file' was missed for 2 items (US, US-CA): name the item the notice is for"]
    unknown = _penalty(job, key, 1000, item="US-NJ")
    assert unknown.status_code == 400 and "'US-NJ' is not an item of 'file'" in unknown.json()[
        "item"][0]
    named = _penalty(job, key, 1000, item="US-CA")
    assert named.status_code == 201 and named.json()["item"] == "US-CA"
    assert Record.objects.filter(kind="guarantee.credited").count() == 1


@pytest.mark.parametrize(("guarantee", "code", "path"), [
    ({"after": "nowhere"}, "clock.guarantee_after_unknown", "after"),
    ({"after": ["file"]}, "clock.guarantee_after_unknown", "after"),
    ({"excludes": "weekends"}, "clock.guarantee_excludes_invalid", "excludes"),
    ({"covers": ["penalties"] * 21}, "clock.guarantee_invalid", "covers"),
])
def test_the_check_names_a_term_it_cannot_keep(guarantee, code, path):
    found = manifests.check(document(**guarantee))
    assert [(problem.code, problem.path) for problem in found] == [
        (code, f"$.services.annual-return.clocks.file.guarantee.{path}")]


def test_the_seeds_terms_and_a_step_of_the_service_pass_the_check():
    assert manifests.check(document()) == []
    assert manifests.check(document(after="file")) == []
