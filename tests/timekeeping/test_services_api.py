import copy
import json
from datetime import UTC, datetime
from io import StringIO

import icalendar
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Ask, Job, Manifest, Record, Subject, Subscription, TestClock
from timekeeping.tick import test_clocks

TAX = json.loads(TAX_MANIFEST.read_text())
JSON = "application/json"


@pytest.fixture
def owner(client, actors):
    client.force_login(actors["owner"])
    return client


@pytest.fixture
def ordered(owner, brand):
    assert owner.post(f"/api/brands/{brand.pk}/manifests", copy.deepcopy(TAX),
                      content_type=JSON).status_code == 201
    clock = TestClock.objects.create(brand=brand, name="t",
                                     frozen_time=datetime(2028, 2, 1, 14, tzinfo=UTC))
    subject = owner.post("/api/subjects", {"kind": "taxpayer", "key": "22-2222222",
                                           "name": "Lumen Labs", "zone": "America/New_York",
                                           "test_clock": clock.pk},
                         content_type=JSON).json()
    assert subject["test_clock"] == clock.pk
    job = owner.post("/api/jobs", {"service": "annual-return", "subject": subject["id"],
                                   "period": "2027",
                                   "input": {"jurisdictions": ["US", "US-NJ"],
                                             "earliest_credit_expiry": "2046-12-31"}},
                     content_type=JSON)
    assert job.status_code == 201, job.content
    return subject["id"], job.json()["id"], clock


def test_it_loads_a_manifest_or_lists_every_problem(owner, brand):
    bad = copy.deepcopy(TAX)
    bad["calendar"]["zone"] = "Mars/Olympus"
    bad["services"]["annual-return"]["clocks"]["pay"]["rungs"] = ["shout 3d"]
    answer = owner.post(f"/api/brands/{brand.pk}/manifests", bad, content_type=JSON)
    assert answer.status_code == 400
    assert {p["code"] for p in answer.json()["problems"]} == {"calendar.zone_invalid",
                                                               "clock.rung_invalid"}
    assert not Manifest.objects.exists()
    good = owner.post(f"/api/brands/{brand.pk}/manifests", TAX, content_type=JSON)
    assert good.status_code == 201 and good.json()["version"] == 1


def test_it_answers_period_taken_with_409_and_opens_nothing(owner, ordered):
    subject, job, clock = ordered
    again = owner.post("/api/jobs", {"service": "annual-return", "subject": subject,
                                     "period": "2027"},
                       content_type=JSON)
    assert again.status_code == 409 and again.json()["code"] == "period_taken"
    assert Job.objects.count() == 1


def test_it_names_a_bad_order_field(owner, ordered):
    subject, _, _ = ordered
    answer = owner.post("/api/jobs", {"service": "nothing", "subject": subject},
                        content_type=JSON)
    assert answer.status_code == 400 and "'nothing'" in answer.json()["service"][0]
    answer = owner.post("/api/jobs", {"service": "annual-return", "subject": subject,
                                      "period": "last year"}, content_type=JSON)
    assert answer.status_code == 400 and "tax_year" in answer.json()["period"][0]


def test_it_commits_a_step_or_refuses_it_with_its_code(owner, ordered):
    _, job, _ = ordered
    done = owner.post(f"/api/jobs/{job}/steps", {"step": "file", "items": ["US"]},
                      content_type=JSON)
    assert done.status_code == 200 and done.json()["committed"] is True
    assert "file US" in done.json()["satisfied"]
    refused = owner.post(f"/api/jobs/{job}/steps", {"step": "file", "items": ["US-TX"]},
                         content_type=JSON)
    assert refused.status_code == 409 and refused.json()["code"] == "item_unknown"


def test_it_lists_a_subject_calendar_in_its_zone(owner, ordered):
    subject, job, clock = ordered
    test_clocks.advance(clock, to=datetime(2028, 4, 16, tzinfo=UTC))
    body = owner.get(f"/api/subjects/{subject}/calendar?from=2028-01-01").json()
    dates = [(d["date"], d["what"], d["kind"], d["status"]) for d in body["dates"]]
    assert dates[:5] == [
        ("2028-04-18", "pay the 2027 tax", "hard",
         "open · rolled from 04-15 · about $324 a month late"),
        # The job's deadline, 5 days before its earliest filing date: US moved to 10-16, so
        # New Jersey's 05-15 is the earliest now, and the deadline followed it.
        ("2028-05-11", "annual-return 2027 is due (within 5d before file)", "deadline",
         "open · held while a party is asked"),
        ("2028-05-15", "file the 2027 return, US-NJ", "clock",
         "open · about $324 a month late"),
        ("2028-07-30", "the link for the organizer expires", "ask", "open"),
        ("2028-10-16", "file the 2027 return, US", "clock",
         "open · extended from 04-18 · rolled from 10-15 · about $324 a month late"),
    ]
    assert body["zone"] == "America/New_York"
    to = owner.get(f"/api/subjects/{subject}/calendar?from=2028-01-01&to=2028-12-31").json()
    assert len(to["dates"]) == 5


def test_it_serves_the_feed_only_with_the_subject_token_and_rotates_it(owner, ordered):
    subject, _, _ = ordered
    feed = owner.get(f"/api/subjects/{subject}/calendar").json()["feed"]
    client = Client()  # a calendar app: signed in as nobody
    answer = client.get(feed)
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/calendar")
    events = icalendar.Calendar.from_ical(answer.content).walk("VEVENT")
    assert len(events) == 7  # five dates, the organizer's link and the job's deadline
    assert sum("#US" in str(e["uid"]) for e in events) == 2  # one event per jurisdiction
    uids = sorted(str(e["uid"]) for e in events)
    assert uids == sorted(str(e["uid"]) for e in icalendar.Calendar.from_ical(
        client.get(feed).content).walk("VEVENT"))  # stable
    assert client.get(f"/subjects/{subject}/calendar.ics?token=wrong").status_code == 404
    assert client.get(f"/subjects/{subject}/calendar.ics").status_code == 404
    rotated = owner.post(f"/api/subjects/{subject}/calendar/token").json()["feed"]
    assert client.get(feed).status_code == 404 and client.get(rotated).status_code == 200


def test_it_answers_404_to_a_stranger_everywhere(client, actors, ordered, brand):
    subject, job, _ = ordered
    client.force_login(actors["outsider"])
    assert client.get(f"/api/subjects/{subject}/calendar").status_code == 404
    assert client.post(f"/api/jobs/{job}/steps", {"step": "file"},
                       content_type=JSON).status_code == 404
    assert client.post(f"/api/brands/{brand.pk}/manifests", TAX,
                       content_type=JSON).status_code == 404
    assert client.post("/api/jobs", {"service": "annual-return", "subject": subject,
                                     "period": "2028"}, content_type=JSON).status_code == 404
    assert not Record.objects.filter(kind="step.committed").exists()


def test_it_prints_a_subject_calendar_on_the_command_line(ordered):
    subject, _, clock = ordered
    out = StringIO()
    call_command("subjects", "calendar", subject, "--from", "2028-01-01", "--test-clock",
                 clock.pk, stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == (f"{subject} · taxpayer 22-2222222 · Lumen Labs · America/New_York · "
                        f"7 dates · webcal at /subjects/{subject}/calendar.ics")
    assert lines[1].split()[:3] == ["date", "what", "kind"]
    assert lines[2].startswith("  2028-04-14  annual-return 2027 is due (within 5d before file)")
    assert lines[3].startswith("  2028-04-18  file the 2027 return, US ")
    assert Subject.objects.get(pk=subject).zone == "America/New_York"


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_the_demo_runs_the_seed_command_lines(settings):
    settings.DEBUG = True  # the demo loads only in development
    call_command("demo", stdout=StringIO())
    out = StringIO()
    call_command("tick", "--test-clock", "tc_7Hq4", "--to", "2028-04-16T00:00:00Z", "--trace",
                 stdout=out)
    trace = out.getvalue()
    assert trace.splitlines()[0].startswith("tc_7Hq4 · 2028-02-01 04:59Z → 2028-04-16 00:00Z")
    tentative = [line for line in trace.splitlines() if "rung run tentative 3d" in line]
    assert len(tentative) == 3
    assert all(" 2028-04-15 13:00Z " in line for line in tentative)
    assert any("moved US 2028-04-18 → 2028-10-16, rolled from 2028-10-15" in line
               for line in tentative)
    assert any("moved US-CA 2028-04-18 → 2028-11-15" in line for line in tentative)
    out = StringIO()
    call_command("subjects", "calendar", "sbj_7Hq2", "--from", "2027-02-01", "--test-clock",
                 "tc_7Hq4", stdout=out)
    listing = out.getvalue()
    assert "2028-04-18  pay the 2027 tax" in listing and "open · rolled from 04-15" in listing
    assert "2028-05-15  file the 2027 return, US-NJ" in listing
    assert "2028-10-16  file the 2027 return, US and US-NY" in listing
    assert "2028-11-15  file the 2027 return, US-CA" in listing


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_the_demo_opens_the_return_in_the_seeds_trace_shape(settings):
    """The tick that mints the 2027 return from the Tax Plan's schedule: the mint arms the
    organizer's link and its reminder, the deadline's late mark, and holds its at-risk mark
    while the organizer waits;
    the three passed `notice 90d` rungs fire in place in the second pass (seed 000, "The
    tick")."""
    settings.DEBUG = True
    call_command("demo", stdout=StringIO())
    out = StringIO()
    call_command("tick", "--test-clock", "tc_7Hq4", "--to", "2028-02-01T20:00:00Z", "--trace",
                 stdout=out)
    lines = out.getvalue().splitlines()
    # The demo kept 2027 on the test clock and stopped at the last minute of 31 January 2028
    # in New York.
    assert lines[0].startswith("tc_7Hq4 · 2028-02-01 04:59Z → 20:00Z · UTC · 4 fired · ")
    assert lines[0].endswith(" armed · 1 held · 2 passes")
    job = Job.objects.get(subject_id="sbj_7Hq2", period="2027").pk
    ask = Ask.objects.get(job_id=job).pk
    plan = Subscription.objects.get(subject_id="sbj_7Hq2").pk
    # The Tax Plan's annual schedule mints the return, inside the allowance of cycle 2.
    assert lines[2] == (f"  1     2028-02-01 14:00Z  2028-02-01 14:00Z  2      schedule  {plan} "
                        f"annual → {job} · period 2027 · $0.00 · 1 of 1")
    assert lines[3] == (f"          armed 1   2029-02-01 14:00Z  2  schedule  {plan} annual · "
                        "period 2028, the next")
    assert (f"          armed 2   2028-07-29 13:00Z  3  ask       {job} the organizer · a "
            "reminder the day before, then its expiry") in lines
    assert (f"          armed 1   2028-04-14 04:00Z  5  deadline  {job} late · within 5d "
            "before file") in lines
    assert (f"          held  1   —                  5  deadline  {job} at risk · 54d 10h 30m "
            f"of work left · held by {ask} while the organizer waits") in lines
    in_place = [line for line in lines if line.startswith("  2 ")]
    assert len(in_place) == 3
    assert all("notice 90d · its day passed: fired in place" in line for line in in_place)
    assert {line.split()[7].split("#")[1] for line in in_place} == {"US", "US-CA", "US-NY"}


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_the_demo_keeps_the_seeds_captured_calendar(settings):
    """The seed's capture (seed 000, "Model it"): on 2 February 2028 the tax subject's calendar
    from 1 February 2027 holds the seed's 21 dates, in order, with their kinds, who answers
    for each and the facts of their statuses. Our calendar says more beside them (the other
    three estimates' mints, the work's deadlines, the refund window of the open return and
    what the plans will do next); the dates, kinds and facts the seed shows are all here."""
    settings.DEBUG = True
    call_command("demo", stdout=StringIO())
    call_command("tick", "--test-clock", "tc_7Hq4", "--to", "2028-02-02T14:00:00Z",
                 stdout=StringIO())
    out = StringIO()
    call_command("subjects", "calendar", "sbj_7Hq2", "--from", "2027-02-01", "--test-clock",
                 "tc_7Hq4", stdout=out)
    listing = out.getvalue().splitlines()
    assert listing[0].startswith("sbj_7Hq2 · taxpayer 98-7654321 · Harbor Robotics · "
                                 "America/New_York · ")
    rows = [" ".join(line.split()) for line in listing[2:]]
    seed = [  # date, what, kind, answers for, status: the seed's 21, in its words or ours
        "2027-02-01 the 2026 annual-return opens schedule the brand opened",
        "2027-04-05 the 2027-Q1 estimate opens schedule the brand opened",
        "2027-04-15 pay the 2026 tax hard Grace Okafor kept 2027-04-12",
        "2027-04-15 pay the 2027-Q1 estimate clock Grace Okafor kept 2027-04-05",
        "2027-06-15 pay the 2027-Q2 estimate clock Grace Okafor kept 2027-06-05",
        # 180 days from 1 February 2027 is 31 July (the seed prints 30 July, a day short; its
        # 2028 line, 180 days from 1 February in a leap year, agrees with ours).
        "2027-07-31 the link for the organizer expires ask Grace Okafor answered 2027-07-13",
        "2027-09-15 pay the 2027-Q3 estimate clock Grace Okafor kept 2027-09-05",
        "2027-10-15 file the 2026 return, US and US-NY clock of record kept 2027-07-11, US-NY "
        "2027-07-13 · extended from 04-15",
        "2027-11-15 file the 2026 return, US-CA and US-NJ clock of record kept 2027-07-11 · "
        "extended from 04-15 and 05-17",
        "2027-12-14 reply to the CP161 clock of record kept 2027-11-14",
        "2027-12-15 pay the 2027-Q4 estimate clock Grace Okafor kept 2027-12-05",
        "2028-01-20 the tax-plan renews cycle Grace Okafor renewed, cycle 2",
        "2028-02-01 the 2027 annual-return opens schedule the brand opened",
        "2028-04-18 file the 2027 return, US, US-CA and US-NY clock of record open · rolled "
        "from 04-15",
        "2028-04-18 pay the 2027 tax hard Grace Okafor open · rolled from 04-15 · about $324 "
        "a month late",
        "2028-05-15 file the 2027 return, US-NJ clock of record open",
        "2028-05-15 file the franchise report on the 2027 books, US-TX clock of record open",
        "2028-07-30 the link for the organizer expires ask Grace Okafor open",
        "2029-04-17 refund claims on the 2025 return close hard of record open · rolled from "
        "04-15 · bars amend",
        "2030-07-11 refund claims on the 2026 return close hard of record open · measured "
        "from when file was kept · bars amend",
        "2046-12-31 the earliest carryforward expires clock the brand open · $13,800 of US "
        "credit from 2026",
    ]
    assert len(seed) == 21
    at = -1
    for expected in seed:
        found = [n for n, row in enumerate(rows) if row.startswith(expected)]
        assert found, (expected, rows)
        assert found[0] > at, ("out of order", expected, rows)
        at = found[0]
    # Beside them, and nothing else: the other estimates' mints, the work's deadlines, the
    # open return's refund window (measured from its due date until it is filed), and the
    # plans' next mints and renewal.
    extra = [row for row in rows if not any(row.startswith(each) for each in seed)]
    assert [row.split(" ")[0] for row in extra] == [
        "2027-06-05", "2027-09-05", "2027-10-11", "2027-12-05", "2028-04-05", "2028-04-14",
        "2029-01-20", "2029-02-01", "2031-04-15"], extra
    assert listing[0].split(" · ")[4] == f"{len(rows)} dates"
    # The portal says what the carryforward's expiry is about, as the calendar does.
    customer = Client()
    customer.force_login(get_user_model().objects.get(username="finance@harbor.example"))
    portal = customer.get("/portal/subjects/sbj_7Hq2/").content.decode()
    assert "about $13,800 of US credit from 2026" in portal


def test_it_names_a_field_it_does_not_know_and_keeps_nothing(owner, ordered):
    subject, _, _ = ordered
    answer = owner.post("/api/jobs", {"service": "annual-return", "subject": subject,
                                      "period": "2031", "priority": "high", "_state": 1},
                        content_type=JSON)
    assert answer.status_code == 400
    assert set(answer.json()) == {"priority", "_state"}
    assert "the fields are: input, period, service, subject" in answer.json()["priority"][0]
    assert not Job.objects.filter(period="2031").exists()


@pytest.mark.parametrize(("body", "named"), [
    ("[1, 2]", "body"),
    ('{"kind": "taxpayer", "key": "k", "name": "a\\u0000b"}', "name"),
    ('{"kind": "taxpayer", "key": "k", "name": "n", "input": {"a": ' + "[" * 40 + "]" * 40
     + "}}", "input.a"),
    ('{"kind": "taxpayer", "key": "k", "name": "n", "input": ' + "[" * 5000 + "]" * 5000
     + "}", None),
])
def test_it_refuses_a_body_that_is_no_plain_object_naming_where(owner, brand, body, named):
    answer = owner.post("/api/subjects", body, content_type=JSON)
    assert answer.status_code == 400
    if named is not None:
        assert any(key.startswith(named) for key in answer.json()), answer.json()
    assert not Subject.objects.exists()
