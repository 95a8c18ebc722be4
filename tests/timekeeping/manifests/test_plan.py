"""Manifest plans and explicit removals (issue 15): what a load would change, before it is
stored; a removal of something in use refused unless the document states it; a stated one
kept in the records, its table's rows still readable and retired."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.world import manifest
from timekeeping import clocks, manifests
from timekeeping.basics import wallclock
from timekeeping.models import BrandTable, Connection, Job, Manifest, Record, Subject
from timekeeping.moves.rows import Venue
from timekeeping.tick import phases

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

T0 = datetime(2027, 3, 1, 14, 0, tzinfo=UTC)
LOCKERS = {
    "schedules": {"demo": {"beat": {"every": "1m", "run": "heartbeat"}}},
    "tables": {
        "settings": {"settings": True, "columns": [{"ref": "auto_release", "type": "boolean"}]},
        "lockers": {
            "columns": [{"ref": "holder", "type": "text", "maxLength": 120},
                        {"ref": "release_at", "type": "timestamptz"}],
            "states": {"column": "status", "initial": "held",
                       "moves": {"held": ["released"]},
                       "timed": [{"from": "held", "to": "released",
                                  "at": {"column": "release_at"}}]},
        },
    },
}


def _triples(planned) -> set[tuple[str, str, str]]:
    return {(change.action, change.what, change.path) for change in planned.changes}


def _lockers_in_use(brand) -> Venue:
    """The lockers loaded, a row held until a moment still ahead, and the schedule run twice."""
    manifests.load(brand, LOCKERS)
    venue = Venue.of(Connection.objects.select_related("brand").get(brand=brand))
    venue.model("lockers").objects.create(holder="ana", status="held",
                                          release_at=T0 + timedelta(days=30))
    for minute in range(3):
        phases.run_once(now=T0 + timedelta(minutes=minute))
    return venue


def test_a_first_plan_adds_every_part_and_stores_nothing(brand):
    planned = manifests.plan(brand, manifest())
    assert planned.problems == [] and planned.current is None and not planned.unchanged
    assert {("added", "service", "$.services.annual-return"), ("added", "table", "$.tables.orders"),
            ("added", "calendar", "$.calendar")} <= _triples(planned)
    assert not Manifest.objects.filter(brand=brand).exists()
    assert not BrandTable.objects.filter(brand=brand).exists()


def test_a_plan_names_each_kind_of_change_and_a_load_answers_with_it(brand):
    first = {**manifest(), **{"schedules": LOCKERS["schedules"]}}
    manifests.load(brand, first)
    second = copy.deepcopy(first)
    del second["services"]["recovery"]  # no job: not in use
    annual = second["services"]["annual-return"]
    annual["steps"]["review"] = {}
    del annual["clocks"]["franchise"]
    second["services"]["notice-reply"] = copy.deepcopy(second["services"]["notice-response"])
    second["schedules"] = {"demo": {"pulse": {"every": "1m", "run": "heartbeat"}}}
    second["tables"]["orders"]["columns"].append({"ref": "note", "type": "text",
                                                  "maxLength": 200})
    del second["tables"]["stays"]
    second["calendar"]["closes"] = "17:00"
    second["settings"] = {"locale": "en"}

    planned = manifests.plan(brand, second)

    assert planned.problems == []
    assert _triples(planned) == {
        ("changed", "service", "$.services.annual-return"),
        ("added", "step", "$.services.annual-return.steps.review"),
        ("removed", "clock", "$.services.annual-return.clocks.franchise"),
        ("added", "service", "$.services.notice-reply"),
        ("removed", "service", "$.services.recovery"),
        ("renamed", "schedule", "$.schedules.demo.pulse"),
        ("changed", "table", "$.tables.orders"),
        ("added", "column", "$.tables.orders.columns.note"),
        ("removed", "table", "$.tables.stays"),
        ("changed", "calendar", "$.calendar"),
        ("added", "settings", "$.settings"),
    }
    renamed = next(c for c in planned.changes if c.action == "renamed")
    assert renamed.was == "$.schedules.demo.beat"
    assert all(change.uses == () for change in planned.removals)
    assert Manifest.objects.filter(brand=brand).count() == 1  # a plan stores nothing

    applied = manifests.apply(brand, second, by="user 1 (ana)")
    assert applied.version.version == 2 and _triples(applied.plan) == _triples(planned)
    removed = Record.objects.filter(brand=brand, kind="manifest.removed").order_by("id")
    assert {record.data["path"] for record in removed} == {
        "$.services.annual-return.clocks.franchise", "$.services.recovery", "$.tables.stays"}
    assert {record.data["by"] for record in removed} == {"user 1 (ana)"}


def test_an_unstated_removal_in_use_is_refused_and_the_current_version_stays(brand):
    _lockers_in_use(brand)

    with pytest.raises(manifests.ManifestInvalid) as refused:
        manifests.load(brand, {})

    problems = {(p.code, p.path) for p in refused.value.problems}
    assert problems == {("removal_unstated", "$.tables.lockers"),
                        ("removal_unstated", "$.schedules.demo.beat")}
    message = next(p.message for p in refused.value.problems if p.path == "$.tables.lockers")
    assert "1 row" in message and "'removes'" in message
    assert Manifest.objects.filter(brand=brand).count() == 1
    assert not Record.objects.filter(brand=brand, kind="manifest.removed").exists()
    venue = Venue.of(Connection.objects.select_related("brand").get(brand=brand))
    assert set(venue.tables) == {"settings", "lockers"} and venue.retired == {}


def test_a_stated_removal_keeps_the_rows_readable_retired_and_records_who(brand, actors,
                                                                          client):
    _lockers_in_use(brand)
    client.force_login(actors["owner"])
    document = {"removes": ["tables.lockers", "$.tables.settings", "schedules.demo.beat"]}

    planned = client.post(f"/api/brands/{brand.pk}/manifests/plan", document,
                          content_type="application/json").json()
    assert planned["loadable"] and planned["problems"] == []
    lockers = next(c for c in planned["changes"] if c["path"] == "$.tables.lockers")
    assert lockers == {"action": "removed", "what": "table", "path": "$.tables.lockers",
                       "uses": ["1 row"], "stated": True}

    loaded = client.post(f"/api/brands/{brand.pk}/manifests", document,
                         content_type="application/json")
    assert loaded.status_code == 201 and loaded.json()["version"] == 2
    assert loaded.json()["plan"]["changes"] == planned["changes"]
    record = Record.objects.get(brand=brand, kind="manifest.removed",
                                data__path="$.tables.lockers")
    assert record.data["uses"] == ["1 row"] and record.data["stated"] is True
    assert record.data["by"] == f"user {actors['owner'].pk} (owner)"

    rows = client.get(f"/api/tables/lockers/rows?brand={brand.pk}").json()
    assert rows["retired"] is True and [row["holder"] for row in rows["rows"]] == ["ana"]
    row_id = rows["rows"][0]["id"]
    assert client.get(f"/api/tables/lockers/rows/{row_id}?brand={brand.pk}").status_code == 200
    refused = client.post(f"/api/tables/lockers/rows/{row_id}/move?brand={brand.pk}",
                          {"to": "released"}, content_type="application/json")
    assert refused.status_code == 409 and refused.json()["code"] == "TABLE_RETIRED"
    written = client.patch(f"/api/tables/lockers/rows/{row_id}?brand={brand.pk}",
                           {"holder": "bo"}, content_type="application/json")
    assert written.status_code == 409

    # Past the row's moment, the timed-move job leaves a retired table alone.
    phases.run_once(now=T0 + timedelta(days=31))
    client.force_login(actors["owner"])  # that tick's housekeeping ended the old session
    again = client.get(f"/api/tables/lockers/rows?brand={brand.pk}").json()["rows"]
    assert again[0]["status"] == "held"

    # Declared again, the table is current: its rows were kept all along.
    manifests.load(brand, LOCKERS)
    assert client.get(f"/api/tables/lockers/rows?brand={brand.pk}").json()["retired"] is False


def test_removes_names_only_what_the_document_removes(brand):
    manifests.load(brand, LOCKERS)
    document = {**LOCKERS, "removes": ["tables.lockers", "tables.settings.columns.auto_release",
                                       "schedules.demo.beat", "services.nothing"]}
    planned = manifests.plan(brand, document)
    assert [(p.code, p.path) for p in planned.problems] == [
        ("removes.not_removed", "$.removes")] * 3
    assert [p.message.split("'")[1] for p in planned.problems] == [
        "schedules.demo.beat", "tables.lockers", "tables.settings.columns.auto_release"]
    # A file that keeps the `removes` of an earlier version loads again, and again unchanged.
    gone = {"tables": {"settings": LOCKERS["tables"]["settings"]},
            "removes": ["tables.lockers", "schedules.demo.beat"]}
    manifests.load(brand, gone)
    assert manifests.plan(brand, gone).problems == []
    assert manifests.plan(brand, gone).unchanged
    assert manifests.plan(brand, {**gone, "settings": {"a": 1}}).problems == []
    bad = manifests.plan(brand, {**LOCKERS, "removes": ["tables", 7, "tables.Lockers"]})
    assert [(p.code, p.path) for p in bad.problems] == [
        ("removes.path_invalid", "$.removes[0]"), ("removes.path_invalid", "$.removes[1]"),
        ("removes.path_invalid", "$.removes[2]")]
    assert manifests.plan(brand, {**LOCKERS, "removes": "tables.lockers"}).problems[0].code \
        == "removes.not_list"


def _no_plan() -> dict:
    """The doors' manifest without its plan, which includes the annual return."""
    document = manifest()
    del document["services"]["tax-plan"]
    return document


def test_a_service_with_an_open_job_stays_on_its_version_until_its_end(brand):
    with wallclock.fixed(T0):
        manifests.load(brand, _no_plan())
        subject = Subject.objects.create(brand=brand, kind="taxpayer", key="1", name="S",
                                         input={"jurisdictions": ["US"]},
                                         bundle=manifests.current(brand).bundle)
        job = clocks.order(brand=brand, service="annual-return", subject=subject,
                           period="2026", input={"jurisdictions": ["US"]})
        without = _no_plan()
        del without["services"]["annual-return"]
        refused = manifests.plan(brand, without)
        assert [(p.code, p.path) for p in refused.problems] == [
            ("removal_unstated", "$.services.annual-return")]
        assert "1 open job" in refused.problems[0].message
        clock_gone = _no_plan()
        del clock_gone["services"]["annual-return"]["clocks"]["pay"]
        assert [p.path for p in manifests.plan(brand, clock_gone).problems] == [
            "$.services.annual-return.clocks.pay"]

        applied = manifests.apply(brand, {**without, "removes": ["services.annual-return"]})

    staying = applied.plan.staying
    assert (staying.jobs, staying.subjects) == (1, 1)
    assert staying.last_owed is not None and staying.last_owed > T0
    job.refresh_from_db()
    assert job.state == Job.State.OPEN and job.bundle != applied.version.bundle


def test_the_command_plans_and_exits_1_when_a_load_would_be_refused(brand, tmp_path):
    _lockers_in_use(brand)
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    out = StringIO()
    with pytest.raises(CommandError, match="2 problem"):
        call_command("manifest", "plan", brand.slug, str(empty), stdout=out)
    assert "removal_unstated at $.tables.lockers" in out.getvalue()
    stated = tmp_path / "stated.json"
    stated.write_text(json.dumps({**LOCKERS, "removes": ["schedules.demo.beat"],
                                  "schedules": {}}))
    out = StringIO()
    call_command("manifest", "plan", brand.slug, str(stated), stdout=out)
    assert "removed schedule $.schedules.demo.beat: in use (2 runs), stated" in out.getvalue()
    assert Manifest.objects.filter(brand=brand).count() == 1


def test_the_console_shows_the_plan_before_the_load(brand, actors):
    _lockers_in_use(brand)
    client = Client()
    client.force_login(actors["owner"])
    page = client.post(f"/console/{brand.pk}/manifests/check", {"document": "{}"})
    text = page.content.decode()
    assert page.status_code == 200
    assert "removal_unstated" in text and "1 row" in text  # the code under Details
    assert "not listed among what it removes: add it there to load" in text
    assert '<td data-label="Change" class="removed">removed</td>' in text


NAMES = sorted(manifest()["services"])


@settings(max_examples=25, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(kept=st.sets(st.sampled_from(NAMES)), stated=st.booleans())
def test_a_plans_removals_are_the_names_left_out(brand, kept, stated):
    """Whatever services a new version keeps, the plan removes exactly the others, and none
    is in use on a brand with no jobs: the plan has no problem."""
    if not Manifest.objects.filter(brand=brand).exists():
        manifests.load(brand, manifest())
    document = copy.deepcopy(manifest())
    document["services"] = {name: document["services"][name] for name in kept}
    if stated:
        document["removes"] = [f"services.{name}" for name in NAMES if name not in kept]
    # A plan service that includes a removed one is refused by the check: skip those.
    if manifests.check(document):
        return
    planned = manifests.plan(brand, document)
    assert planned.problems == []
    assert {c.path for c in planned.removals} == {f"$.services.{n}" for n in NAMES
                                                  if n not in kept}
    assert all(c.stated == stated and c.uses == () for c in planned.removals)
