"""Every list and detail of the reading API is scoped to the caller's brands: a brand's owner,
viewer and key read all of it; another brand's rows are never listed, and another brand's id
answers exactly as a missing one (docs/security.md)."""

import pytest

from calendars.models import Postponement
from tests.timekeeping.api.pages import every, ids
from timekeeping.models import Clock, Job, Record, Schedule, Subject, TestClock, Timer

READERS = ("owner_a", "viewer_a", "key_a")
LISTS = {
    "/api/subjects": lambda r: Subject.objects.filter(brand=r.brand),
    "/api/jobs": lambda r: Job.objects.filter(brand=r.brand),
    "/api/clocks": lambda r: Clock.objects.filter(brand=r.brand),
    "/api/timers": lambda r: Timer.objects.filter(brand=r.brand),
    "/api/records": lambda r: Record.objects.filter(brand=r.brand),
    "/api/schedules": lambda r: Schedule.objects.filter(brand=r.brand),
    "/api/test_clocks": lambda r: TestClock.objects.filter(brand=r.brand),
    "/api/owner/calendar/postponements":
        lambda r: Postponement.objects.filter(calendar=r.brand.calendar),
}


@pytest.mark.parametrize("path", LISTS)
def test_each_reader_of_a_brand_lists_its_rows_and_never_another_brands(reading, path):
    mine = {row.pk for row in LISTS[path](reading)}
    assert mine
    for caller in READERS:
        assert ids(every(reading, caller, path)) == mine, caller
    assert not ids(every(reading, "owner_b", path)) & mine


@pytest.mark.parametrize("path", LISTS)
def test_a_list_asks_for_a_key_or_a_session(reading, path):
    assert reading.get("anonymous", path).status_code == 401


MISSING = "{prefix}_Missing0000000000"
DETAILS = {
    "subject": ("/api/subjects/{}", lambda r: (r.subject.pk, Subject.objects.filter(
        brand=r.other).first().pk)),
    "job": ("/api/jobs/{}", lambda r: (r.job.pk, r.other_job.pk)),
    "clock": ("/api/clocks/{}", lambda r: (r.job.clocks.first().pk,
                                           r.other_job.clocks.first().pk)),
    "timer": ("/api/timers/{}", lambda r: (r.late.pk, Timer.objects.filter(
        brand=r.other).first().pk)),
    "schedule": ("/api/schedules/{}", lambda r: (r.schedule.pk, r.other_schedule.pk)),
    "schedule runs": ("/api/schedules/{}/runs", lambda r: (r.schedule.pk,
                                                          r.other_schedule.pk)),
    "manifests": ("/api/brands/{}/manifests", lambda r: (r.brand.pk, r.other.pk)),
    "manifest": ("/api/brands/{}/manifests/1", lambda r: (r.brand.pk, r.other.pk)),
}


@pytest.mark.parametrize("name", DETAILS)
def test_each_reader_reads_a_detail_and_another_brands_id_is_missing(reading, name):
    path, pair = DETAILS[name]
    mine, theirs = pair(reading)
    for caller in READERS:
        assert reading.get(caller, path.format(mine)).status_code == 200, caller
    missing = MISSING.format(prefix=theirs.split("_")[0])
    for caller in ("owner_a", "key_a"):
        other = reading.get(caller, path.format(theirs))
        absent = reading.get(caller, path.format(missing))
        assert other.status_code == absent.status_code == 404
        assert other.content.decode().replace(theirs, "<id>") == (
            absent.content.decode().replace(missing, "<id>"))


def test_a_manifest_version_the_brand_lacks_is_missing(reading):
    answer = reading.get("owner_a", f"/api/brands/{reading.brand.pk}/manifests/3")
    assert answer.status_code == 404 and "no version 3" in answer.json()["detail"]


def test_the_codes_own_schedules_are_a_superusers_only(reading):
    code = reading.code_schedule.pk
    assert reading.get("root", f"/api/schedules/{code}").status_code == 200
    assert code in ids(every(reading, "root", "/api/schedules"))
    for caller in READERS:
        assert reading.get(caller, f"/api/schedules/{code}").status_code == 404
        assert reading.get(caller, f"/api/schedules/{code}/runs").status_code == 404
        assert code not in ids(every(reading, caller, "/api/schedules"))


def test_a_viewer_reads_but_still_changes_nothing(reading):
    assert reading.get("viewer_a", "/api/subjects").status_code == 200
    made = reading.clients["viewer_a"].post(
        "/api/subjects", {"kind": "taxpayer", "key": "9", "name": "No"},
        content_type="application/json")
    assert made.status_code == 403
