"""Every request's work is bounded and stated (issue 31, "Fair shares and bounds"): the
findings reproduced (a job of 3,651 rungs, one of 200 items, 1,020 one-second schedules), each
refused naming the field or the path and the limit, with nothing changed."""

import copy
import json

import pytest

from timekeeping import manifests
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Brand, Job, Manifest, Schedule, Timer
from timekeeping.schedules import action
from timekeeping.specs import limits

TAX = json.loads(TAX_MANIFEST.read_text())
JSON = "application/json"
RETURN = "$.services.annual-return"


@action("chores.tidy")
def tidy() -> None:
    return None


def schedules(count: int, every: str) -> dict:
    return {"schedules": {"chores": {f"s{n}": {"every": every, "run": "tidy"}
                                     for n in range(count)}}}


def problems(document: dict, brand: Brand | None = None) -> set[tuple[str, str]]:
    return {(p.code, p.path) for p in manifests.check(document, brand=brand)}


@pytest.fixture
def owner(client, actors):
    client.force_login(actors["owner"])
    return client


def order(owner, brand, jurisdictions: list[str]):
    subject = owner.post("/api/subjects", {"kind": "taxpayer", "key": "22-2222222",
                                           "name": "Lumen Labs", "zone": "America/New_York"},
                         content_type=JSON)
    assert subject.status_code == 201, subject.content
    return owner.post("/api/jobs", {"service": "annual-return", "subject": subject.json()["id"],
                                    "period": "2027",
                                    "input": {"jurisdictions": jurisdictions}},
                      content_type=JSON)


def test_a_manifest_with_3651_rungs_on_a_clock_is_refused_at_the_rungs_path(owner, brand):
    document = copy.deepcopy(TAX)
    document["services"]["annual-return"]["clocks"]["pay"]["rungs"] = [
        f"notice {days}d" for days in range(3651)]
    answer = owner.post(f"/api/brands/{brand.pk}/manifests", document, content_type=JSON)
    assert answer.status_code == 400
    found = {(p["code"], p["path"]): p["message"] for p in answer.json()["problems"]}
    message = found[("clock.rungs_too_many", f"{RETURN}.clocks.pay.rungs")]
    assert f"at most {limits.RUNGS_PER_CLOCK} rungs" in message and "3,651" in message
    assert not Manifest.objects.exists()


def test_an_order_of_200_items_is_refused_naming_the_field_and_the_limit(owner, brand):
    assert owner.post(f"/api/brands/{brand.pk}/manifests", TAX,
                      content_type=JSON).status_code == 201
    answer = order(owner, brand, [f"US-{n}" for n in range(200)])
    assert answer.status_code == 400
    assert answer.json()["input.jurisdictions"] == [f"at most {limits.ITEMS_PER_JOB} items; "
                                                    "this has 200"]
    assert not Job.objects.exists() and not Timer.objects.exists()


def test_an_order_within_the_items_but_past_the_work_is_refused(owner, brand):
    document = copy.deepcopy(TAX)
    document["services"]["annual-return"]["clocks"]["file"]["rungs"] = [
        f"notice {days}d" for days in range(1, limits.RUNGS_PER_CLOCK + 1)]
    assert owner.post(f"/api/brands/{brand.pk}/manifests", document,
                      content_type=JSON).status_code == 201
    answer = order(owner, brand, [f"US-{n}" for n in range(limits.ITEMS_PER_JOB)])
    assert answer.status_code == 400
    assert f"at most {limits.WORK_MAX} dates and reminders" in \
        answer.json()["input.jurisdictions"][0]
    assert not Job.objects.exists() and not Timer.objects.exists()


def test_an_order_within_the_bounds_opens_every_item(owner, brand):
    assert owner.post(f"/api/brands/{brand.pk}/manifests", TAX,
                      content_type=JSON).status_code == 201
    answer = order(owner, brand, [f"US-{n}" for n in range(12)])
    assert answer.status_code == 201, answer.content
    assert Job.objects.get().clocks.get(name="file").occurrences.count() == 12


def test_a_manifest_with_1020_one_second_schedules_is_refused(brand):
    found = problems(schedules(1020, "1s"), brand)
    assert ("schedule.too_many", "$.schedules") in found
    assert ("schedule.every_too_short", "$.schedules.chores.s0.every") in found
    assert ("schedule.every_too_short", "$.schedules.chores.s1019.every") in found
    with pytest.raises(manifests.ManifestInvalid):
        manifests.load(brand, schedules(1020, "1s"))
    assert not Schedule.objects.filter(brand=brand).exists()


def test_a_brands_plan_raises_how_many_schedules_it_may_declare(brand):
    document = schedules(limits.SCHEDULES["free"].most + 1, "1h")
    brand.plan = "free"
    assert ("schedule.too_many", "$.schedules") in problems(document, brand)
    brand.plan = "team"
    assert problems(document, brand) == set()
    assert problems(schedules(limits.SCHEDULES["team"].most, "1m"), brand) == set()


def test_a_service_past_its_clocks_steps_or_the_manifests_services_is_refused_at_its_path():
    service = copy.deepcopy(TAX["services"]["annual-return"])
    service["steps"] = {f"step{n}": {} for n in range(limits.STEPS_PER_SERVICE + 1)}
    service["clocks"] = {f"date{n}": {"due": {"after_period": {"months": 1, "day": 1}}}
                         for n in range(limits.CLOCKS_PER_SERVICE + 1)}
    services = {f"service{n}": {"subject": {"kind": "taxpayer"}}
                for n in range(limits.SERVICES_MAX)}
    found = problems({"calendar": TAX["calendar"],
                      "services": {**services, "annual-return": service}})
    assert {("manifest.services_too_many", "$.services"),
            ("service.steps_too_many", f"{RETURN}.steps"),
            ("service.clocks_too_many", f"{RETURN}.clocks")} <= found


def test_a_body_past_the_limit_is_refused_with_a_413_naming_it(owner, brand):
    body = json.dumps({"kind": "taxpayer", "key": "1", "name": "x" * limits.BODY_MAX})
    answer = owner.post("/api/subjects", body, content_type=JSON)
    assert answer.status_code == 413
    assert "larger than 2 MiB" in answer.json()["detail"]
