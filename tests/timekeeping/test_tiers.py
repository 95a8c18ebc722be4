"""The brand's plan (S26): every key runs on a test clock; live, a job or a subscription whose
Service uses a key the plan lacks is refused with plan_lacks_key, naming the key and plan."""

import copy
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from timekeeping import clocks, manifests
from timekeeping.models import Subject
from timekeeping.tick import test_clocks

TAX = json.loads((Path(__file__).resolve().parents[2] / "timekeeping" / "manifests" /
                  "examples" / "tax.json").read_text())


def _subject(brand, test_clock=None) -> Subject:
    return Subject.objects.create(brand=brand, test_clock=test_clock, kind="taxpayer",
                                  key="1" if test_clock is None else "2", name="Harbor",
                                  input={"jurisdictions": ["US"]})


@pytest.mark.parametrize(("plan", "refused"), [
    ("free", "'clocks.guarantee' runs live on the team plan; the brand is on free"),
    ("launch", "'clocks.guarantee' runs live on the team plan; the brand is on launch"),
    ("team", None),
])
def test_a_live_job_needs_every_key_of_its_service_on_the_brands_plan(brand, plan, refused):
    brand.plan = plan
    brand.save()
    manifests.load(brand, copy.deepcopy(TAX))
    order = dict(brand=brand, service="annual-return", period="2027",
                 input={"jurisdictions": ["US"]})
    if refused is None:
        assert clocks.order(subject=_subject(brand), **order).state == "open"
        return
    with pytest.raises(clocks.OrderRefused) as lacking:
        clocks.order(subject=_subject(brand), **order)
    assert lacking.value.field == "service"
    assert lacking.value.message == f"plan_lacks_key: {refused} (it runs on a test clock on " \
                                    "any plan)"
    rehearsal = test_clocks.create(brand=brand, name="t",
                                   frozen_time=datetime(2028, 2, 1, 14, tzinfo=UTC))
    assert clocks.order(subject=_subject(brand, rehearsal), **order).state == "open"


def test_a_service_on_free_keys_runs_live_on_free(brand):
    brand.plan = "free"
    brand.save()
    document = copy.deepcopy(TAX)
    service = document["services"]["annual-return"]
    service["subject"].pop("period")
    service["subject"].pop("keeps")
    for clock in service["clocks"].values():
        clock.pop("lives_on", None)
        clock.pop("guarantee", None)
    manifests.load(brand, document)
    job = clocks.order(brand=brand, service="annual-return", subject=_subject(brand),
                       input={"jurisdictions": ["US"], "earliest_credit_expiry": "2040-01-01"})
    assert job.state == "open"
