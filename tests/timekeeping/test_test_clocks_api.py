from datetime import UTC, datetime, timedelta

import pytest

from timekeeping.models import Member, Record, TestClock, Timer, Walk
from timekeeping.tick import phases
from timekeeping.timers import delays, records


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
    assert read.status_code == 200 and read.json() == {**body, "walk": None}


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


def test_an_advance_answers_at_once_and_the_tick_walks_it_firing_each_timer_at_its_instant(
    owner_client, actors, brand, test_clock
):
    start = test_clock.frozen_time
    timer_id = delays.delay("timekeeping.note", {"n": 1}, brand=brand, test_clock=test_clock,
                            at=start + timedelta(hours=5), owner="ord_7")
    answer = owner_client.post(f"/api/test_clocks/{test_clock.pk}/advance",
                               {"to": "2028-03-02T00:00:00Z"}, content_type="application/json")
    assert answer.status_code == 202, answer.content
    body = answer.json()
    # Nothing has moved yet: the clock says where it is going.
    assert body["status"] == "advancing" and body["frozen_time"] == "2028-03-01T12:00:00Z"
    walk = body["walk"]
    assert (walk["state"], walk["to"], walk["reached"], walk["fired"], walk["share"]) == (
        "walking", "2028-03-02T00:00:00Z", "2028-03-01T12:00:00Z", 0, 0.0)
    assert walk["by"] == records.person(actors["owner"])
    assert Timer.objects.get(pk=timer_id).state == Timer.State.ARMED
    assert owner_client.get(f"/api/test_clocks/{test_clock.pk}/trace").status_code == 200

    ticked = phases.run_once(now=datetime(2026, 12, 2, 9, tzinfo=UTC))
    assert [done.done for done in ticked.walks.slices] == [True]
    assert "walked " + test_clock.pk in ticked.summary()
    assert ticked.as_dict()["walks"] == [{
        "test_clock": test_clock.pk, "to": "2028-03-02T00:00:00Z",
        "reached": "2028-03-02T00:00:00Z", "instants": 1, "done": True, "fired": 1}]

    read = owner_client.get(f"/api/test_clocks/{test_clock.pk}").json()
    assert read["status"] == "ready" and read["frozen_time"] == "2028-03-02T00:00:00Z"
    assert (read["walk"]["state"], read["walk"]["fired"], read["walk"]["share"]) == (
        "done", 1, 1.0)
    assert Timer.objects.get(pk=timer_id).late_by == timedelta(0)
    traced = owner_client.get(f"/api/test_clocks/{test_clock.pk}/trace")
    assert traced["Content-Type"].startswith("text/plain")
    lines = b"".join(traced.streaming_content).decode().splitlines()
    assert lines[0] == (f"{test_clock.pk} · 2028-03-01 12:00Z → 2028-03-02 00:00Z · UTC · "
                        "1 fired · 0 armed · 0 held · 1 passes")
    assert lines[2].split()[:3] == ["1", "2028-03-01", "17:00Z"] and "ord_7" in lines[2]
    on_it = owner_client.get(f"/api/test_clocks/{test_clock.pk}/trace?on=ord_7")
    assert b"".join(on_it.streaming_content).decode().splitlines() == lines
    on_other = owner_client.get(f"/api/test_clocks/{test_clock.pk}/trace?on=ord_8")
    assert b"".join(on_other.streaming_content).decode().splitlines()[0].endswith(
        "0 fired · 0 armed · 0 held · 1 passes")


def test_an_advance_under_way_answers_409_naming_its_target(owner_client, brand, test_clock):
    first = owner_client.post(f"/api/test_clocks/{test_clock.pk}/advance",
                              {"to": "2028-03-05T00:00:00Z"}, content_type="application/json")
    assert first.status_code == 202
    second = owner_client.post(f"/api/test_clocks/{test_clock.pk}/advance",
                               {"to": "2028-03-09T00:00:00Z"}, content_type="application/json")
    assert second.status_code == 409
    assert second.json()["walking_to"] == "2028-03-05T00:00:00Z"
    assert "advancing to 2028-03-05T00:00:00Z already" in second.json()["test_clock"][0]
    assert Walk.objects.filter(test_clock=test_clock).count() == 1
    phases.run_once(now=datetime(2026, 12, 2, 9, tzinfo=UTC))
    third = owner_client.post(f"/api/test_clocks/{test_clock.pk}/advance",
                              {"to": "2028-03-09T00:00:00Z"}, content_type="application/json")
    assert third.status_code == 202 and third.json()["walk"]["start"] == "2028-03-05T00:00:00Z"


def test_the_trace_of_a_clock_never_advanced_is_not_found(owner_client, test_clock):
    answer = owner_client.get(f"/api/test_clocks/{test_clock.pk}/trace")
    assert answer.status_code == 404 and "has not been advanced" in answer.json()["detail"]


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
    assert "/api/test_clocks/{clock_id}/trace" in schema
