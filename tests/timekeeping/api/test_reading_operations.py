"""Reading test clocks, postponements, manifests, schedules and their runs
(timekeeping/api/test_clocks.py, postponements.py, manifests.py, schedules.py)."""

from datetime import date, timedelta

from tests.timekeeping.api.conftest import NOW
from tests.timekeeping.api.pages import every, ids
from timekeeping import clocks
from timekeeping.models import Brand, Schedule, ScheduleRun, TestClock


def test_test_clocks_list_by_brand_and_status(reading):
    other = TestClock.objects.create(brand=reading.other, name="b", frozen_time=NOW)
    busy = TestClock.objects.create(brand=reading.brand, name="busy", frozen_time=NOW,
                                    status=TestClock.Status.ADVANCING)
    assert ids(every(reading, "root", "/api/test_clocks", brand=reading.other.pk)) == {
        other.pk}
    assert ids(every(reading, "owner_a", "/api/test_clocks", status="advancing")) == {busy.pk}
    row = every(reading, "key_a", "/api/test_clocks", status="ready")[0]
    assert row == {"id": reading.test_clock.pk, "brand": reading.brand.pk, "name": "spring",
                   "frozen_time": "2026-12-01T12:00:00Z", "status": "ready"}
    assert reading.get("owner_a", "/api/test_clocks", status="stopped").status_code == 400


def test_a_postponement_reads_as_it_was_added(reading):
    row = every(reading, "viewer_a", "/api/owner/calendar/postponements")[0]
    assert row == {"id": row["id"], "calendar": reading.brand.calendar_id, "from": "2031-01-01",
                   "through": "2031-01-02", "to": "2031-01-05", "where": {},
                   "notice": "storm at A", "test_clock": None}


def test_a_shared_calendars_notices_are_listed_but_not_another_brands_test_clocks(reading):
    sharing = Brand.objects.create(name="C", slug="c", owner=reading.other.owner,
                                   calendar=reading.brand.calendar)
    theirs = TestClock.objects.create(brand=sharing, name="c", frozen_time=NOW)
    span = {"from_date": date(2032, 1, 1), "through": date(2032, 1, 2), "to": date(2032, 1, 5),
            "where": {}}
    shared, _ = clocks.add_postponement(calendar=sharing.calendar, notice="shared", **span)
    clocks.add_postponement(calendar=sharing.calendar, notice="C's test",
                            test_clock_id=theirs.pk, **span)
    mine, _ = clocks.add_postponement(calendar=reading.brand.calendar, notice="A's test",
                                      test_clock_id=reading.test_clock.pk, **span)
    listed = {row["notice"] for row in every(reading, "owner_a",
                                             "/api/owner/calendar/postponements")}
    assert listed == {"storm at A", "shared", "A's test"}
    by_brand = every(reading, "root", "/api/owner/calendar/postponements",
                     brand=reading.brand.pk)
    assert {row["notice"] for row in by_brand} == listed
    assert {row["test_clock"] for row in by_brand} == {None, reading.test_clock.pk}
    of_sharing = ids(every(reading, "root", "/api/owner/calendar/postponements",
                           brand=sharing.pk))
    assert shared.pk in of_sharing and mine.pk not in of_sharing


def test_manifests_list_their_versions_latest_first_and_one_reads_with_its_document(reading):
    rows = every(reading, "key_a", f"/api/brands/{reading.brand.pk}/manifests")
    assert [row["version"] for row in rows] == [2, 1]
    assert set(rows[0]) == {"id", "version", "bundle", "created"}
    one = reading.get("viewer_a", f"/api/brands/{reading.brand.pk}/manifests/2").json()
    assert one["version"] == 2 and one["bundle"] == rows[0]["bundle"]
    pay = one["document"]["services"]["annual-return"]["clocks"]["pay"]
    assert pay["title"] == "pay the {period} tax in full"


def test_schedules_list_by_brand_and_whether_still_declared(reading):
    Schedule.objects.filter(pk=reading.schedule.pk).update(active=False)
    assert ids(every(reading, "root", "/api/schedules", brand=reading.other.pk)) == {
        reading.other_schedule.pk}
    assert ids(every(reading, "owner_a", "/api/schedules", active="false")) == {
        reading.schedule.pk}
    assert every(reading, "owner_a", "/api/schedules", active="true") == []
    assert reading.get("owner_a", "/api/schedules", active="no").status_code == 400


def test_a_schedule_reads_with_when_it_runs_next(reading):
    body = reading.get("key_a", f"/api/schedules/{reading.schedule.pk}").json()
    assert body["brand"] == reading.brand.pk and body["every_s"] == 3600
    assert body["why"].startswith("nightly runs timekeeping.schedules.pulses.nothing every 1h")
    assert "its last failure was due" in body["why"]


def test_a_test_clocks_schedule_says_when_on_that_clock(reading):
    row = Schedule.objects.create(key=f"{reading.brand.pk}:{reading.test_clock.pk}:nightly",
                                  name="nightly", brand=reading.brand,
                                  test_clock=reading.test_clock, action="x", every_s=60,
                                  next_due=NOW + timedelta(minutes=1))
    why = reading.get("owner_a", f"/api/schedules/{row.pk}").json()["why"]
    assert "(in 1m)" in why


def test_a_schedules_runs_come_latest_first_and_filter_by_outcome(reading):
    path = f"/api/schedules/{reading.schedule.pk}/runs"
    rows = every(reading, "viewer_a", path)
    assert [row["outcome"] for row in rows] == ["succeeded", "failed", "skipped"]
    assert rows[1]["reason"] == "failed" and rows[0]["schedule"] == reading.schedule.pk
    failed = every(reading, "owner_a", path, outcome="failed")
    assert ids(failed) == set(ScheduleRun.objects.filter(
        schedule=reading.schedule, outcome="failed").values_list("pk", flat=True))
    assert reading.get("owner_a", path, outcome="broken").json() == {
        "outcome": ["'broken' is not one of: running, succeeded, failed, skipped"]}
