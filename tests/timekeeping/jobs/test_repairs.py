"""A repair window (S21, `deliver.<step>.perfect`): a rejected filing resubmitted inside it
keeps the first filing time; past it, the first time is lost and the date is late on its own
terms. Through the API and the tick on a New York test clock across the spring change of 2028
(12 March): ten days from 8 March 09:00 EST close on 18 March 09:00 EDT."""

from datetime import UTC, datetime

import pytest
from django.test import Client

from timekeeping import clocks, manifests
from timekeeping.clocks import gate, history, subject_calendar
from timekeeping.models import Occurrence, Record, Subject, Timer
from timekeeping.tick import test_clocks

START = datetime(2028, 3, 1, 14, tzinfo=UTC)  # 09:00 EST
FILED = datetime(2028, 3, 6, 14, tzinfo=UTC)
REJECTED = datetime(2028, 3, 8, 14, tzinfo=UTC)
CLOSES = datetime(2028, 3, 18, 13, tzinfo=UTC)  # 09:00 EDT


def document(**file) -> dict:
    return {"calendar": {"zone": "America/New_York", "weekends": [], "closes": "23:59",
                         "rings_at": "09:00"},
            "services": {"work": {
                "subject": {"kind": "client"}, "steps": {"nudge": {}},
                "deliver": {"file": {"perfect": "10d", **file}},
                "clocks": {"file": {"title": "file it", "due": {"input": "due"},
                                    "owner": "brand", "satisfied_by": ["file"]}}}}}


@pytest.fixture
def filed(brand, actors):
    manifests.load(brand, document())
    clock = test_clocks.create(brand=brand, name="spring", frozen_time=START)
    subject = Subject.objects.create(brand=brand, test_clock=clock, kind="client", key="1",
                                     name="Harbor", zone="America/New_York")
    job = clocks.order(brand=brand, service="work", subject=subject,
                       input={"due": "2028-03-10"})
    _advance(clock, FILED)
    assert gate.propose(job=job, step="file", by="ana").committed
    _advance(clock, REJECTED)
    api = Client()
    api.force_login(actors["owner"])
    return clock, job, api


def _advance(clock, to):
    clock.refresh_from_db()
    return test_clocks.advance(clock, to=to)


def _reject(api, job, **body):
    return api.post(f"/api/jobs/{job.pk}/rejections", {"step": "file", "code": "math", **body},
                    content_type="application/json")


def _date(job) -> Occurrence:
    return Occurrence.objects.get(clock__job=job, clock__name="file")


def test_a_repair_inside_the_window_keeps_the_first_filing_time(filed):
    clock, job, api = filed
    rejected = _reject(api, job)
    assert rejected.status_code == 201, rejected.json()
    assert rejected.json()["closes"] == "2028-03-18T13:00:00Z"
    assert _date(job).status == "open"
    # The date falls due on 10 March during the repair: it is not late while the window is open.
    _advance(clock, datetime(2028, 3, 15, 13, tzinfo=UTC))
    assert not Record.objects.filter(kind="clock.lapsed").exists()
    assert gate.propose(job=job, step="file", by="ana").committed
    kept = _date(job)
    assert (kept.status, kept.settled) == ("satisfied", FILED)
    assert not Timer.objects.filter(key__startswith=f"{job.pk}:repair:", state="armed").exists()
    satisfied = Record.objects.filter(kind="clock.satisfied").order_by("instant")
    assert [r.data["late"] for r in satisfied] == [False, False]
    lines = [(line.date.isoformat(), line.status) for line in subject_calendar.lines(
        job.subject) if line.kind == "window"]
    assert lines == [("2028-03-18", "repaired")]
    story = " ".join(said.text for said in history.history(job.subject))
    assert ("The filing of file was rejected (math); resubmitted by Sat 18 Mar 2028 it keeps its "
            "first filing time, Mon 6 Mar 2028") in story
    assert "was repaired in its window and keeps its first filing time" in story


def test_past_the_window_the_first_time_is_lost_and_the_date_is_late(filed):
    clock, job, api = filed
    assert _reject(api, job).status_code == 201
    _advance(clock, CLOSES)
    assert Record.objects.filter(kind="repair.lapsed").count() == 1
    # Armed again, the date's late mark was owed already: it lapses in the same walk.
    assert _date(job).status == "lapsed"
    _advance(clock, datetime(2028, 3, 20, 13, tzinfo=UTC))
    assert gate.propose(job=job, step="file", by="ana").committed
    late = _date(job)
    assert late.settled == datetime(2028, 3, 20, 13, tzinfo=UTC)
    assert Record.objects.filter(kind="clock.satisfied").order_by("-instant").first().data[
        "late"] is True
    lines = [line.status for line in subject_calendar.lines(job.subject) if line.kind == "window"]
    assert lines == ["closed: the first filing time is lost"]


def test_a_rejection_is_refused_by_name_and_changes_nothing(filed):
    _, job, api = filed
    unknown = _reject(api, job, step="nudge")
    assert unknown.status_code == 400 and "no repair window" in unknown.json()["step"][0]
    elsewhere = _reject(api, job, items=["NY"])
    assert elsewhere.status_code == 400 and "kept no date" in elsewhere.json()["items"][0]
    assert _date(job).status == "satisfied"
    assert _reject(api, job).status_code == 201
    again = _reject(api, job)  # nothing kept to reject now
    assert again.status_code == 400 and "items" in again.json()
    assert Record.objects.filter(kind="step.rejected").count() == 1


def test_perfect_is_checked(brand):
    bad = document(perfect="ten days")
    bad["services"]["work"]["deliver"]["nudge2"] = {"perfect": "3d"}
    with pytest.raises(manifests.ManifestInvalid) as refused:
        manifests.load(brand, bad)
    found = {(p.code, p.path) for p in refused.value.problems}
    assert ("deliver.perfect_invalid", "$.services.work.deliver.file.perfect") in found
    assert ("deliver.perfect_without_date", "$.services.work.deliver.nudge2.perfect") in found
