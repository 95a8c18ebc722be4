"""A brand's events over the API (issue 30): the records that are events, each in its webhook's
envelope, paged by cursor in the order they were written, with no event repeated or skipped,
even among events written in the same instant; filtered by type, time, subject and test
clock; read by everyone who keeps the brand, 404 to anyone else; a page's queries bounded.
Times are Tokyo's, fixed; each event's `written` is set, as one transaction would stamp it."""

import copy
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from timekeeping import clocks, manifests
from timekeeping.access import keys
from timekeeping.basics import wallclock
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Brand, Record, Subject, TestClock
from timekeeping.tick import phases
from timekeeping.webhooks import catalogue

pytestmark = pytest.mark.django_db
NOW = datetime(2028, 3, 3, 9, 0, tzinfo=ZoneInfo("Asia/Tokyo"))
SUBJECT = "sbj_Fernhill00000001"
CLOCK = "clk_A000000000000000"
TAX = json.loads(TAX_MANIFEST.read_text())


@pytest.fixture
def owner(actors):
    client = Client()
    client.force_login(actors["owner"])
    return client


def _event(brand, kind="job.opened", minutes=0, **fields) -> Record:
    at = NOW + timedelta(minutes=minutes)
    return Record.objects.create(kind=kind, brand=brand, instant=at, written=at, **fields)


def _path(brand) -> str:
    return f"/api/brands/{brand.pk}/events"


def _all(client, brand, **query) -> list[dict]:
    """Every page, following `next`."""
    found, answer = [], client.get(_path(brand), query)
    while True:
        assert answer.status_code == 200, answer.content
        found += answer.json()["results"]
        if answer.json()["next"] is None:
            return found
        answer = client.get(answer.json()["next"])


@pytest.fixture
def written(brand) -> list[Record]:
    """Seven events, three of them written in one instant, and two records that are none."""
    events = [_event(brand, minutes=0), _event(brand, kind="clock.lapsed", minutes=1,
                                               subject=SUBJECT, data={"clock": CLOCK})]
    events += [_event(brand, kind="clock.satisfied", minutes=2) for _ in range(3)]
    events += [_event(brand, kind="schedule.failed", minutes=3),
               _event(brand, kind="job.ended", minutes=4, subject=SUBJECT)]
    _event(brand, kind="note.kept", minutes=2)
    _event(brand, kind="timer.fired", minutes=5)
    return sorted(events, key=lambda record: (record.written, record.pk))


def test_pages_follow_the_cursor_with_no_event_repeated_or_skipped(brand, owner, written):
    for limit in (1, 2, 3, 50):
        assert [each["id"] for each in _all(owner, brand, limit=limit)] == [
            record.pk for record in written]
        assert [each["id"] for each in _all(owner, brand, limit=limit, order="desc")] == [
            record.pk for record in reversed(written)]
    first = owner.get(_path(brand), {"limit": 2}).json()
    assert first["next_cursor"] and first["next"].endswith(f"cursor={first['next_cursor']}")


def test_each_event_is_in_its_webhooks_envelope(brand, owner, written):
    lapsed = next(each for each in _all(owner, brand) if each["type"] == "date.missed")
    record = Record.objects.get(kind="clock.lapsed")
    assert lapsed["id"] == record.pk and lapsed["brand"] == brand.pk
    assert lapsed["subject"] == SUBJECT and lapsed["objects"] == {"clock": CLOCK}
    assert lapsed["occurs_at"] == "2028-03-03T00:01:00Z" and lapsed["version"] == 1
    assert lapsed["data"]["kind"] == "clock.lapsed" and lapsed["test_clock"] is None
    assert lapsed["link"].endswith(f"/console/{brand.pk}/subjects/{SUBJECT}/")
    assert set(lapsed) == {"id", "type", "version", "created", "occurs_at", "brand",
                           "test_clock", "subject", "objects", "summary", "link", "data"}


def test_filters_narrow_by_type_time_and_subject(brand, owner, written):
    def types(**query):
        return [each["type"] for each in _all(owner, brand, **query)]

    assert types(type=["date.kept", "job.opened"]) == ["job.opened"] + ["date.kept"] * 3
    assert types(**{"from": "2028-03-03T09:02:00+09:00", "to": "2028-03-03T00:04:00Z"}) == [
        "date.kept"] * 3 + ["schedule.failed"]
    assert types(subject=SUBJECT) == ["date.missed", "job.ended"]
    assert types(type="date.kept", limit=1, order="desc") == ["date.kept"] * 3


def test_a_test_clocks_events_only_when_asked_by_its_id(brand, owner, test_clock):
    live = _event(brand)
    practice = _event(brand, test_clock=test_clock)
    assert [each["id"] for each in _all(owner, brand)] == [live.pk]
    asked = _all(owner, brand, test_clock=test_clock.pk)
    assert [each["id"] for each in asked] == [practice.pk]
    assert asked[0]["test_clock"] == test_clock.pk
    theirs = TestClock.objects.create(
        brand=Brand.objects.create(name="Other", slug="other", owner=brand.owner),
        name="theirs", frozen_time=NOW)
    refused = owner.get(_path(brand), {"test_clock": theirs.pk})
    assert refused.status_code == 400 and list(refused.json()) == ["test_clock"]


def test_bad_parameters_are_named(brand, owner, written):
    cases = [({"type": "date.exploded"}, "type"), ({"type": ["date.kept"] * 65}, "type"),
             ({"from": "2028-03-03T09:00:00"}, "from"), ({"to": "soon"}, "to"),
             ({"limit": "0"}, "limit"), ({"limit": "201"}, "limit"),
             ({"order": "sideways"}, "order"), ({"cursor": "not-a-cursor"}, "cursor"),
             ({"subject": "job_X"}, "subject"), ({"colour": "red"}, "colour"),
             ({"limit": ["1", "2"]}, "limit"), ({"cursor": "e" * 201}, "cursor")]
    for query, name in cases:
        answer = owner.get(_path(brand), query)
        assert answer.status_code == 400 and name in answer.json(), (query, answer.json())
    cursor = owner.get(_path(brand), {"limit": 1}).json()["next_cursor"]
    other_way = owner.get(_path(brand), {"cursor": cursor, "order": "desc"})
    assert other_way.status_code == 400 and list(other_way.json()) == ["cursor"]


def test_everyone_who_keeps_the_brand_reads_them_and_a_stranger_hears_404(brand, actors,
                                                                          written):
    secret = keys.make(brand=brand, name="catch-up", by=None, now=NOW).secret
    as_key = Client().get(_path(brand), HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert as_key.status_code == 200 and len(as_key.json()["results"]) == len(written)
    stranger = Client()
    stranger.force_login(actors["outsider"])
    missing = stranger.get("/api/brands/brd_Missing0000000000/events")
    theirs = stranger.get(_path(brand))
    assert theirs.status_code == missing.status_code == 404
    other = Brand.objects.create(name="Other", slug="other", owner=actors["outsider"])
    other_key = keys.make(brand=other, name="x", by=None, now=NOW).secret
    assert Client().get(_path(brand), HTTP_AUTHORIZATION=f"Bearer {other_key}"
                        ).status_code == 404
    assert stranger.get(_path(other)).json()["results"] == []


def test_a_page_costs_the_same_queries_whatever_its_length(brand, owner):
    for n in range(120):
        _event(brand, kind="clock.notice", minutes=n // 4)
    counts = []
    cursor = owner.get(_path(brand), {"limit": 10}).json()["next_cursor"]
    for limit in (1, 100):
        with CaptureQueriesContext(connection) as captured:
            answer = owner.get(_path(brand), {"limit": limit, "cursor": cursor})
        assert len(answer.json()["results"]) == limit
        counts.append(len(captured))
    assert counts[0] == counts[1] <= 4  # session, user, brand, page


def test_the_schema_lists_each_event_type_as_a_webhook_and_real_events_match(brand, owner):
    """The tax practice's filing missed on the real clock: every event it leaves, as the API
    lists it, is valid against its type's webhook in the OpenAPI 3.1 schema."""
    schema = owner.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert schema["openapi"].startswith("3.1")
    assert set(schema["webhooks"]) == set(catalogue.NAMES)
    registry = Registry().with_resource("urn:api", Resource(schema, DRAFT202012))
    manifests.load(brand, copy.deepcopy(TAX))
    opened, missed = datetime(2028, 2, 1, 14, tzinfo=UTC), datetime(2028, 4, 20, 14, tzinfo=UTC)
    with wallclock.fixed(opened):
        subject = Subject.objects.create(brand=brand, kind="taxpayer", key="11-1",
                                         name="Fernhill Tools", zone="America/New_York")
        clocks.order(brand=brand, service="annual-return", subject=subject, period="2027",
                     input={"jurisdictions": ["US"]})
    with wallclock.fixed(missed):
        phases.run_once(now=missed, sweep=False)
    owner.force_login(brand.owner)  # the tick's housekeeping ended sessions old by April 2028
    events = _all(owner, brand, limit=200)
    assert {"job.opened", "date.notice_sent", "date.missed"} <= {each["type"] for each in events}
    for event in events:
        hook = schema["webhooks"][event["type"]]["post"]
        body = hook["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        Draft202012Validator({"$ref": f"urn:api{body}"}, registry=registry).validate(event)
    wrong = {**events[0], "data": {"kind": "clock.lapsed", "due": 5}}
    with pytest.raises(ValidationError):
        Draft202012Validator({"$ref": "urn:api#/components/schemas/Event_date_missed"},
                             registry=registry).validate(wrong)


def test_the_docs_name_every_event_type_and_the_record_kinds_it_holds():
    written = (Path(__file__).resolve().parents[3] / "docs" / "events.md").read_text()
    for event in catalogue.TYPES:
        row = next((line for line in written.splitlines()
                    if line.startswith(f"| `{event.name}` |")), None)
        assert row is not None, event.name
        assert all(f"`{kind}`" in row for kind in event.kinds), event.name
