from datetime import UTC, datetime, timedelta

import pytest

from timekeeping import delays
from timekeeping.models import Member, Record, TestClock, Timer


@pytest.fixture
def owner_client(client, actors):
    client.force_login(actors["owner"])
    return client


def test_it_creates_and_reads_a_test_clock(owner_client, brand):
    made = owner_client.post("/api/test_clocks", {"name": "spring",
                                                  "frozen_time": "2028-02-01T14:00:00Z"},
                             content_type="application/json")
    assert made.status_code == 201, made.content
    body = made.json()
    assert body["id"].startswith("tc_") and body["brand"] == brand.pk
    assert body["frozen_time"] == "2028-02-01T14:00:00Z" and body["status"] == "ready"
    read = owner_client.get(f"/api/test_clocks/{body['id']}")
    assert read.status_code == 200 and read.json() == body


def test_it_names_the_field_of_a_bad_clock_and_keeps_nothing(owner_client, brand):
    naive = owner_client.post("/api/test_clocks", {"name": "x", "frozen_time": "2028-02-01"
                                                   "T14:00:00"}, content_type="application/json")
    assert naive.status_code == 400
    assert "no offset" in naive.json()["frozen_time"][0]
    other = owner_client.post("/api/test_clocks", {"name": "x", "brand": "brd_nope",
                                                   "frozen_time": "2028-02-01T14:00:00Z"},
                              content_type="application/json")
    assert other.status_code == 400 and "brd_nope" in other.json()["brand"][0]
    assert not TestClock.objects.exists()


def test_it_advances_firing_each_owed_timer_at_its_instant_and_returns_the_trace(
    owner_client, brand, test_clock
):
    start = test_clock.frozen_time
    timer_id = delays.delay("timekeeping.note", {"n": 1}, brand=brand, test_clock=test_clock,
                            at=start + timedelta(hours=5), owner="ord_7")
    answer = owner_client.post(f"/api/test_clocks/{test_clock.pk}/advance",
                               {"to": "2028-03-02T00:00:00Z"}, content_type="application/json")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["test_clock"]["frozen_time"] == "2028-03-02T00:00:00Z"
    assert body["test_clock"]["status"] == "ready"
    assert body["fired"] == 1 and body["rows"][0]["timer"] == timer_id
    assert body["rows"][0]["fired"] == body["rows"][0]["owed"] == "2028-03-01T17:00:00Z"
    assert body["trace"].splitlines()[0].startswith(f"{test_clock.pk} · 2028-03-01 12:00Z → ")
    assert Timer.objects.get(pk=timer_id).late_by == timedelta(0)


@pytest.mark.parametrize(
    ("to", "words"),
    [("2028-02-29T00:00:00Z", "only moves forward"), ("tomorrow", "not an ISO 8601 instant"),
     ("2028-03-02T00:00:00", "no offset")],
)
def test_it_refuses_a_bad_advance_naming_it_and_changes_nothing(owner_client, brand,
                                                                  test_clock, to, words):
    delays.delay("timekeeping.note", {}, brand=brand, test_clock=test_clock,
                 at=test_clock.frozen_time - timedelta(hours=1))
    answer = owner_client.post(f"/api/test_clocks/{test_clock.pk}/advance", {"to": to},
                               content_type="application/json")
    assert answer.status_code == 400
    assert words in answer.json()["to"][0]
    test_clock.refresh_from_db()
    assert test_clock.frozen_time == datetime(2028, 3, 1, 12, tzinfo=UTC)
    assert not Record.objects.exists()


def test_it_answers_an_unknown_clock_as_it_answers_another_brands(owner_client, client,
                                                                   actors, brand, test_clock):
    body = {"to": "2028-03-02T00:00:00Z"}
    unknown = owner_client.post("/api/test_clocks/tc_nothere/advance", body,
                                content_type="application/json")
    assert unknown.status_code == 404
    client.force_login(actors["outsider"])
    theirs = client.post(f"/api/test_clocks/{test_clock.pk}/advance", body,
                         content_type="application/json")
    assert theirs.status_code == 404
    assert unknown.json().keys() == theirs.json().keys()


def test_it_answers_404_to_a_stranger(client, actors, brand, test_clock):
    client.force_login(actors["outsider"])
    assert client.get(f"/api/test_clocks/{test_clock.pk}").status_code == 404
    answer = client.post(f"/api/test_clocks/{test_clock.pk}/advance",
                         {"to": "2028-03-02T00:00:00Z"}, content_type="application/json")
    assert answer.status_code == 404
    test_clock.refresh_from_db()
    assert test_clock.frozen_time == datetime(2028, 3, 1, 12, tzinfo=UTC)


def test_it_lets_brand_staff_in_and_keeps_anonymous_callers_out(client, actors, brand,
                                                                test_clock):
    anonymous = client.get(f"/api/test_clocks/{test_clock.pk}")
    assert anonymous.status_code == 401 and anonymous["WWW-Authenticate"].startswith("Bearer")
    Member.objects.create(brand=brand, user=actors["staff"], role=Member.Role.MANAGER)
    client.force_login(actors["staff"])
    assert client.get(f"/api/test_clocks/{test_clock.pk}").status_code == 200


def test_it_describes_the_endpoints_in_the_schema(owner_client):
    schema = owner_client.get("/api/schema/").content.decode()
    assert "/api/test_clocks/{clock_id}/advance" in schema
