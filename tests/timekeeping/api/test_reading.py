"""Reading subjects, jobs, clocks, timers and records (timekeeping/api/subjects.py,
jobs.py, clocks.py, timers.py, records.py).

Each filter is asked by a superuser, who keeps both brands, so a filter that did nothing
would show; each case also checks the filter changed the answer."""

from datetime import timedelta

import pytest

from tests.timekeeping.api.conftest import NOW
from tests.timekeeping.api.pages import every, ids
from timekeeping import clocks
from timekeeping.basics import wallclock
from timekeeping.models import Clock, Job, Occurrence, Record, Subject, Timer


def _stamp(instant) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def _file_us(r) -> Occurrence:
    return Occurrence.objects.get(clock__job=r.job, clock__name="file", item="US")


FILTERS = {
    "subjects by brand": ("/api/subjects", lambda r: {"brand": r.other.pk},
                          lambda r: Subject.objects.filter(brand=r.other)),
    "subjects by kind": ("/api/subjects", lambda r: {"kind": "company"},
                         lambda r: Subject.objects.filter(kind="company")),
    "subjects by name": ("/api/subjects", lambda r: {"q": "lumen"},
                         lambda r: Subject.objects.filter(name__startswith="Lumen")),
    "subjects by key": ("/api/subjects", lambda r: {"q": "22-222"},
                        lambda r: Subject.objects.filter(key="22-2222222")),
    "subjects of a test clock": ("/api/subjects", lambda r: {"test_clock": r.test_clock.pk},
                                 lambda r: Subject.objects.filter(pk=r.world_subject.pk)),
    "subjects of the real clock": ("/api/subjects", lambda r: {"test_clock": "none"},
                                   lambda r: Subject.objects.filter(test_clock=None)),
    "jobs by brand": ("/api/jobs", lambda r: {"brand": r.brand.pk},
                      lambda r: Job.objects.filter(brand=r.brand)),
    "jobs by subject": ("/api/jobs", lambda r: {"subject": r.subject.pk},
                        lambda r: Job.objects.filter(pk=r.job.pk)),
    "jobs by service": ("/api/jobs", lambda r: {"service": "bookkeeping"}, lambda r: []),
    "jobs by period": ("/api/jobs", lambda r: {"period": "2026"}, lambda r: []),
    "jobs by state": ("/api/jobs", lambda r: {"state": "ended"},
                      lambda r: Job.objects.filter(pk=r.other_job.pk)),
    "jobs of a test clock": ("/api/jobs", lambda r: {"test_clock": r.test_clock.pk},
                             lambda r: Job.objects.filter(pk=r.world_job.pk)),
    "clocks by brand": ("/api/clocks", lambda r: {"brand": r.other.pk},
                        lambda r: Clock.objects.filter(brand=r.other)),
    "clocks by subject": ("/api/clocks", lambda r: {"subject": r.subject.pk},
                          lambda r: Clock.objects.filter(subject=r.subject)),
    "clocks by job": ("/api/clocks", lambda r: {"job": r.world_job.pk},
                      lambda r: Clock.objects.filter(job=r.world_job)),
    "clocks by status": ("/api/clocks", lambda r: {"status": "satisfied"},
                         lambda r: Clock.objects.filter(pk=_file_us(r).clock_id)),
    "clocks due from": ("/api/clocks", lambda r: {"due_from": "2030-01-01"},
                        lambda r: Clock.objects.filter(occurrences__due__gte="2030-01-01")),
    "clocks due to": ("/api/clocks", lambda r: {"due_to": "2028-12-31"},
                      lambda r: Clock.objects.filter(occurrences__due__lte="2028-12-31")),
    "clocks of the real clock": ("/api/clocks", lambda r: {"test_clock": "none"},
                                 lambda r: Clock.objects.filter(test_clock=None)),
    "timers by brand": ("/api/timers", lambda r: {"brand": r.brand.pk},
                        lambda r: Timer.objects.filter(brand=r.brand)),
    "timers by state": ("/api/timers", lambda r: {"state": "fired"},
                        lambda r: Timer.objects.filter(state="fired")),
    "timers by kind": ("/api/timers", lambda r: {"kind": "delay"},
                       lambda r: Timer.objects.filter(kind="delay")),
    "timers by place": ("/api/timers", lambda r: {"place": "4"},
                        lambda r: Timer.objects.filter(place=4)),
    "timers by owner": ("/api/timers", lambda r: {"owner": "job_Fired"},
                        lambda r: Timer.objects.filter(owner_id="job_Fired")),
    "timers owed from": ("/api/timers", lambda r: {"owed_from": "2028-01-01T00:00:00Z"},
                         lambda r: Timer.objects.filter(owed__gte="2028-01-01T00:00:00Z")),
    "timers owed to": ("/api/timers", lambda r: {"owed_to": _stamp(r.late.owed)},
                       lambda r: Timer.objects.filter(owed__lt=r.late.owed)),
    "timers fired late": ("/api/timers", lambda r: {"late": "true"},
                          lambda r: Timer.objects.filter(key="late")),
    "timers fired on time": ("/api/timers", lambda r: {"late": "false"},
                             lambda r: Timer.objects.filter(key="on-time")),
    "timers of a test clock": ("/api/timers", lambda r: {"test_clock": r.test_clock.pk},
                               lambda r: Timer.objects.filter(test_clock=r.test_clock)),
    "records by brand": ("/api/records", lambda r: {"brand": r.other.pk},
                         lambda r: Record.objects.filter(brand=r.other)),
    "records by kind": ("/api/records", lambda r: {"kind": "note.kept"},
                        lambda r: Record.objects.filter(kind="note.kept")),
    "records by subject": ("/api/records", lambda r: {"subject": r.subject.pk},
                           lambda r: Record.objects.filter(subject=r.subject.pk)),
    "records by job": ("/api/records", lambda r: {"job": r.world_job.pk},
                       lambda r: Record.objects.filter(job=r.world_job.pk)),
    "records by timer": ("/api/records", lambda r: {"timer": r.late.pk},
                         lambda r: Record.objects.filter(timer=r.late.pk)),
    "records from": ("/api/records", lambda r: {"from": _stamp(NOW)},
                     lambda r: Record.objects.filter(instant__gte=NOW)),
    "records to": ("/api/records", lambda r: {"to": _stamp(NOW)},
                   lambda r: Record.objects.filter(instant__lt=NOW)),
    "records of a test clock": ("/api/records", lambda r: {"test_clock": r.test_clock.pk},
                                lambda r: Record.objects.filter(test_clock=r.test_clock)),
}


def _more(reading) -> None:
    """What makes each filter above narrow something."""
    Subject.objects.create(brand=reading.other, kind="company", key="c1", name="Acme")
    Job.objects.filter(pk=reading.other_job.pk).update(state=Job.State.ENDED)
    with wallclock.fixed(NOW + timedelta(hours=1)):
        clocks.mark_done(_file_us(reading), by="test")


@pytest.mark.parametrize("case", FILTERS, ids=list(FILTERS))
def test_each_filter_narrows_its_list_to_what_it_names(reading, case):
    path, query, expected = FILTERS[case]
    _more(reading)
    wanted = {row.pk for row in expected(reading)}
    assert ids(every(reading, "root", path, **query(reading))) == wanted
    assert wanted != ids(every(reading, "root", path)), "the case narrows nothing"


BAD = [("/api/subjects", "brand", "brd_Nobody0000000000"), ("/api/subjects", "brand", "x"),
       ("/api/subjects", "kind", "k" * 65), ("/api/subjects", "q", "q" * 201),
       ("/api/subjects", "test_clock", "clk_1"), ("/api/jobs", "subject", "job_1"),
       ("/api/jobs", "service", "s" * 101), ("/api/jobs", "period", "p" * 33),
       ("/api/jobs", "state", "closed"), ("/api/clocks", "job", "1"),
       ("/api/clocks", "status", "done"), ("/api/clocks", "due_from", "2027-02-30"),
       ("/api/clocks", "due_to", "9999-12-31"), ("/api/timers", "state", "sleeping"),
       ("/api/timers", "kind", "k" * 33), ("/api/timers", "place", "0"),
       ("/api/timers", "owner", "o" * 65), ("/api/timers", "owed_from", "2027-01-01"),
       ("/api/timers", "owed_to", "2027-01-01T00:00:00"), ("/api/timers", "late", "yes"),
       ("/api/records", "kind", "k" * 65), ("/api/records", "subject", "sbj_"),
       ("/api/records", "timer", "tmr_a-b"), ("/api/records", "from", "0001-01-01T00:00:00Z"),
       ("/api/records", "to", "tomorrow")]


@pytest.mark.parametrize("path, name, value", BAD)
def test_a_bad_filter_value_answers_400_naming_it_and_the_rule(reading, path, name, value):
    answer = reading.get("owner_a", path, **{name: value})
    assert answer.status_code == 400
    assert list(answer.json()) == [name] and answer.json()[name][0]


def test_a_brand_you_do_not_keep_is_named_as_one_that_does_not_exist(reading):
    theirs = reading.get("owner_a", "/api/jobs", brand=reading.other.pk)
    missing = reading.get("owner_a", "/api/jobs", brand="brd_Missing0000000000")
    assert theirs.status_code == missing.status_code == 400
    assert theirs.json()["brand"][0].replace(reading.other.pk, "<id>") == (
        missing.json()["brand"][0].replace("brd_Missing0000000000", "<id>"))


def test_a_clocks_date_filters_hold_of_one_date_together(reading):
    done = _file_us(reading)
    clocks.mark_done(done, by="test")
    day = done.due.isoformat()
    together = every(reading, "owner_a", "/api/clocks", status="satisfied", due_from=day,
                     due_to=day)
    assert ids(together) == {done.clock_id}
    later = (done.due + timedelta(days=1)).isoformat()
    # the clock has open dates later, and a satisfied one, but no satisfied one later
    assert every(reading, "owner_a", "/api/clocks", status="satisfied", due_from=later) == []


def test_a_subject_reads_as_it_was_made(reading):
    made = reading.clients["owner_a"].post(
        "/api/subjects", {"kind": "taxpayer", "key": "33-3333333", "name": "Third",
                          "brand": reading.brand.pk}, content_type="application/json")
    assert made.status_code == 201
    read = reading.get("key_a", f"/api/subjects/{made.json()['id']}")
    assert read.status_code == 200 and read.json() == made.json()


def test_a_job_reads_with_its_clocks_and_their_next_dates(reading):
    body = reading.get("viewer_a", f"/api/jobs/{reading.job.pk}").json()
    assert body["id"] == reading.job.pk and body["state"] == "open" and body["ended"] is None
    assert [row["name"] for row in body["clocks"]] == sorted(
        reading.job.clocks.values_list("name", flat=True))
    file = next(row for row in body["clocks"] if row["name"] == "file")
    assert file["next_due"] == min(o.due for o in Occurrence.objects.filter(
        clock_id=file["id"], status="open")).isoformat()


def test_a_clock_reads_with_each_of_its_dates(reading):
    clock = reading.job.clocks.get(name="file")
    done = _file_us(reading)
    clocks.mark_done(done, by="test")
    body = reading.get("key_a", f"/api/clocks/{clock.pk}").json()
    assert [(row["item"], row["status"]) for row in body["occurrences"]] == [
        (o.item, o.status) for o in clock.occurrences.order_by("due", "item", "seq")]
    us = next(row for row in body["occurrences"] if row["item"] == "US")
    assert us["label"] == f"{clock.pk}#US" and us["status"] == "satisfied"
    assert us["due"] == done.due.isoformat() and us["settled_by"].endswith("by test")
    assert set(us) >= {"seq", "rule_due", "rolled_from", "moved_from", "late_from",
                       "acknowledged", "assignee"}


def test_a_timer_reads_with_why_it_fired_or_not(reading):
    body = reading.get("key_a", f"/api/timers/{reading.late.pk}").json()
    assert body["late_by_s"] == 300.0 and body["state"] == "fired"
    assert body["why"].startswith(f"{reading.late.pk} fired at") and "late by 5m" in body["why"]
    armed = Timer.objects.filter(brand=reading.brand, state="armed").first()
    with wallclock.fixed(NOW):
        why = reading.get("viewer_a", f"/api/timers/{armed.pk}").json()["why"]
    assert "is armed and owed" in why and "on the real clock" in why


def test_a_failed_timer_says_its_last_error_in_one_line(reading):
    Timer.objects.filter(pk=reading.on_time.pk).update(
        attempts=2, last_error="Traceback (most recent call last):\n  ...\nKeyError: 'x'\n")
    row = next(row for row in every(reading, "owner_a", "/api/timers", kind="delay")
               if row["id"] == reading.on_time.pk)
    assert row["attempts"] == 2 and row["failed_with"] == "KeyError: 'x'"


def test_records_come_oldest_first(reading):
    rows = every(reading, "owner_a", "/api/records")
    assert [row["instant"] for row in rows] == sorted(row["instant"] for row in rows)
    kept = next(row for row in rows if row["kind"] == "note.kept")
    assert kept["data"] == {"said": "hello"} and kept["timer"] == reading.late.pk
