"""A date sold as a promise: penalty notices credited from the brand's line up to the cap for
that date, balanced in the ledger; a date the buyer answers for carries no promise."""

import copy
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.test import Client

from money import ledger
from timekeeping import clocks, manifests
from timekeeping.access import keys
from timekeeping.basics import wallclock
from timekeeping.models import Record, Subject

TAX = json.loads((Path(__file__).resolve().parents[3] / "timekeeping" / "manifests" /
                  "examples" / "tax.json").read_text())  # file: up to $5,000 of penalties
NOW = datetime(2028, 6, 1, 14, tzinfo=UTC)


@pytest.fixture
def filed(brand, actors):
    manifests.load(brand, copy.deepcopy(TAX))
    subject = Subject.objects.create(brand=brand, kind="taxpayer", key="1", name="Harbor")
    with wallclock.fixed(NOW):
        job = clocks.order(brand=brand, service="annual-return", subject=subject,
                           period="2027", input={"jurisdictions": ["US"]})
        secret = keys.make(brand=brand, name="k", by=actors["owner"], now=NOW).secret
    return job, {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def _penalty(job, key, amount, clock_name="file", notice="CP161", currency="USD"):
    with wallclock.fixed(NOW):
        return Client().post(f"/api/jobs/{job.pk}/penalties", {
            "clock": clock_name, "amount": amount, "currency": currency, "notice": notice},
            content_type="application/json", **key)


def test_penalties_are_credited_up_to_the_cap_for_the_date(filed):
    job, key = filed
    first = _penalty(job, key, 320000)
    assert first.status_code == 201
    body = first.json()
    assert body["clock"] == job.clocks.get(name="file").pk
    assert {name: body[name] for name in ("notice", "penalty", "credited", "left")} == {
        "notice": "CP161", "penalty": 320000, "credited": 320000, "left": 180000}
    second = _penalty(job, key, 250000, notice="CP162").json()
    assert (second["credited"], second["left"]) == (180000, 0)  # the cap: $5,000 in all
    third = _penalty(job, key, 10000, notice="CP163").json()
    assert (third["credited"], third["left"]) == (0, 0)
    customer = f"{job.brand_id}:customer:{job.subject_id}"
    assert ledger.balance(customer, brand=job.brand_id) == 500000
    assert Record.objects.filter(kind="guarantee.credited").count() == 3


def test_a_date_without_a_promise_or_in_another_currency_is_refused_by_name(filed):
    job, key = filed
    unpromised = _penalty(job, key, 1000, clock_name="pay")
    assert unpromised.status_code == 400 and "carries no guarantee" in unpromised.json()[
        "clock"][0]
    other = _penalty(job, key, 1000, currency="EUR")
    assert other.status_code == 400 and "in USD, not EUR" in other.json()["currency"][0]
    assert ledger.balance(f"{job.brand_id}:customer:{job.subject_id}", brand=job.brand_id) == 0
