"""Operations: schedules (pause, resume, run now), the timed-move connection (backlog, set-aside
rows, the next 24 hours, pause, resume), postponements (add one; it says how many dates moved),
test clocks (create, advance with the trace), API keys (owners only) and manifests (check,
load)."""

import html
import json
import re
from datetime import UTC, date, datetime, timedelta

import pytest
from django.contrib.messages import get_messages

from tests.words import visible_text
from timekeeping.access import keys
from timekeeping.basics import wallclock
from timekeeping.models import ApiKey, Manifest, Schedule, ScheduleRun, SetAside, TestClock
from timekeeping.tick import phases

from .conftest import tax

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def _text(answer) -> str:
    return _text_of(answer.content.decode())


def _text_of(body: str) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)))


def _said(answer) -> str:
    return [str(message) for message in get_messages(answer.wsgi_request)][-1]


# -- schedules -------------------------------------------------------------------------------

@pytest.fixture
def nightly(desk) -> Schedule:
    row = Schedule.objects.create(key=f"{desk.brand.pk}:-:nightly", name="nightly",
                                  brand=desk.brand, action="timekeeping.schedules.pulses.nothing",
                                  every_s=86400, next_due=NOW + timedelta(hours=3))
    ScheduleRun.objects.create(schedule=row, due=NOW - timedelta(days=1),
                               tick=NOW - timedelta(days=1), outcome="failed", reason="boom")
    return row


def test_the_schedules_page_shows_next_due_and_last_run_and_steers(desk, nightly):
    with wallclock.fixed(NOW):
        answer = desk.clients["viewer"].get(desk.url("schedules/"))
    text, body = _text(answer), answer.content.decode()
    assert "nightly" in text and "every day" in text
    # Relative to now, with the exact time in the brand's zone on hover.
    assert 'title="Tue 1 Dec 2026, 10:00 EST">in 3 hours</time>' in body
    assert 'title="Mon 30 Nov 2026, 07:00 EST">24 hours ago</time>' in body
    assert "24 hours ago failed" in text and "Pause" not in text
    assert "timekeeping.schedules.pulses.nothing" not in visible_text(body)  # in Details only
    manager = desk.clients["manager"]
    for verb, said, field, value in (
            ("pause", "nightly is paused", "paused", True),
            ("resume", "nightly is resumed.", "paused", False),
            ("run", "nightly runs once at the next minute, as well as at its usual times.",
             "run_requested", True)):
        answer = manager.post(desk.url("schedules/act"), {"schedule": nightly.pk, "do": verb})
        assert answer.status_code == 302 and _said(answer).startswith(said)
        nightly.refresh_from_db()
        assert getattr(nightly, field) is value


def test_steering_another_brands_schedule_or_a_bad_verb_does_nothing(desk, nightly):
    theirs = Schedule.objects.create(key=f"{desk.other.pk}:-:nightly", name="nightly",
                                     brand=desk.other, action="a.b", every_s=60)
    for form in ({"schedule": theirs.pk, "do": "pause"}, {"schedule": nightly.pk, "do": "drop"}):
        answer = desk.clients["owner"].post(desk.url("schedules/act"), form)
        assert _said(answer).startswith("Nothing was done")
    assert not Schedule.objects.filter(paused=True).exists()
    assert desk.clients["viewer"].post(desk.url("schedules/act"), {
        "schedule": nightly.pk, "do": "pause"}).status_code == 403


# -- the timed-move connection ---------------------------------------------------------------

def test_a_brand_without_tables_says_so(desk):
    text = _text(desk.clients["owner"].get(desk.url("moves/")))
    assert "No tables yet, so nothing moves on its own." in text and "Manifests" in text


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_the_connection_page_shows_backlog_set_aside_and_pauses(world):
    link = world.brand.connection
    SetAside.objects.create(brand_id=link.brand_id, connection=link,
                            table="orders", row=world.orders[0], rule=1,
                            code="STATE_MOVE_REFUSED: the move waits for settings.auto_release "
                                 "to be True", until=NOW + timedelta(minutes=30))
    owner, path = world.clients["owner_a"], f"/console/{world.brand.pk}/moves/"
    with wallclock.fixed(NOW):
        body = owner.get(path).content.decode()
    text = _text_of(body)
    assert "Waiting to move" in text and "1: placed → cancelled" in text
    assert (f"Couldn't move row {world.orders[0]} of orders from placed to cancelled: "
            "'auto-release' is off. Turn it on or move it by hand. Tried again in 30 minutes"
            ) in text
    assert "STATE_MOVE_REFUSED" not in visible_text(body)  # the code is in Details
    assert "The next 24 hours" in text and "is running" in text
    answer = owner.post(f"/console/{world.brand.pk}/moves/act", {"do": "pause"})
    link.refresh_from_db()
    assert answer.status_code == 302 and link.paused
    assert "is paused" in _text(owner.get(path))
    owner.post(f"/console/{world.brand.pk}/moves/act", {"do": "resume"})
    link.refresh_from_db()
    assert not link.paused
    assert world.clients["viewer_a"].post(f"/console/{world.brand.pk}/moves/act",
                                          {"do": "pause"}).status_code == 403


# -- postponements ---------------------------------------------------------------------------

def _notice(desk, who="manager", **form):
    body = {"from_date": "2028-04-17", "through": "2028-04-19", "to": "2028-05-01",
            "notice": "IR-2028-77: storms", "test_clock": desk.test_clock.pk, **form}
    return desk.clients[who].post(desk.url("postponements/add"), body)


def test_adding_a_postponement_moves_the_dates_and_says_how_many(desk):
    answer = _notice(desk)
    assert answer.status_code == 302
    assert _said(answer) == ("Notice added: 2 dates moved to Mon 1 May 2028; each subject's "
                             "page and its history show which.")
    assert desk.occurrence("pay").due == date(2028, 5, 1)
    listed = _text(desk.clients["viewer"].get(desk.url("postponements/")))
    assert "IR-2028-77: storms" in listed and "test world spring" in listed
    assert "Mon 17 Apr 2028 Wed 19 Apr 2028 Mon 1 May 2028" in listed


def test_a_refused_postponement_is_named_on_the_page(desk):
    answer = _notice(desk, through="2028-04-01")
    assert answer.status_code == 400 and "'through' is on or after 'from'" in _text(answer)
    assert _notice(desk, where="[1]").status_code == 400
    assert "outside the dates kept" in _text(_notice(desk, from_date="1800-01-01"))
    theirs = TestClock.objects.create(brand=desk.other, name="x", frozen_time=NOW)
    assert "Select a valid choice" in _text(_notice(desk, test_clock=theirs.pk))
    assert desk.occurrence("pay").due == date(2028, 4, 18)
    assert _notice(desk, who="viewer").status_code == 403


# -- test clocks -----------------------------------------------------------------------------

def test_a_test_clock_is_made_at_a_time_read_in_the_brands_zone(desk):
    answer = desk.clients["manager"].post(desk.url("test-clocks/add"), {
        "name": "summer", "frozen_time": "2028-07-01T09:00"})
    made = TestClock.objects.get(brand=desk.brand, name="summer")
    assert made.frozen_time == datetime(2028, 7, 1, 13, tzinfo=UTC)  # 09:00 EDT
    assert answer["Location"] == desk.url(f"test-clocks/{made.pk}/")
    with_offset = desk.clients["manager"].post(desk.url("test-clocks/add"), {
        "name": "utc", "frozen_time": "2028-07-01T09:00:00Z"})
    assert with_offset.status_code == 302
    assert TestClock.objects.get(name="utc").frozen_time == datetime(2028, 7, 1, 9, tzinfo=UTC)
    bad = desk.clients["manager"].post(desk.url("test-clocks/add"), {"name": "x",
                                                                      "frozen_time": "soon"})
    assert bad.status_code == 400 and "'soon' is not a time such as" in _text(bad)


def test_advancing_a_test_clock_shows_its_progress_then_its_trace(desk):
    page = desk.url(f"test-clocks/{desk.test_clock.pk}/")
    answer = desk.clients["manager"].post(desk.url(f"test-clocks/{desk.test_clock.pk}/advance"),
                                          {"to": "2028-04-19T09:00"})
    assert answer.status_code == 302 and answer["Location"] == page
    walking = _text(desk.clients["manager"].get(page))
    assert "Moving on" in walking and "Wed 19 Apr 2028, 09:00 EDT" in walking
    assert "0% · reached Mon 10 Apr 2028, 10:00 EDT · 0 things done on the way" in walking
    assert "What happened" not in walking
    # htmx asks for the walk's part alone, every 2 s while it walks.
    part = desk.clients["viewer"].get(page + "?part=walk", HTTP_HX_REQUEST="true")
    assert part.content.decode().lstrip().startswith('<div id="walk"')
    assert 'hx-trigger="every 2s"' in part.content.decode()
    busy = desk.clients["manager"].post(desk.url(f"test-clocks/{desk.test_clock.pk}/advance"),
                                        {"to": "2028-05-01T09:00"})
    assert busy.status_code == 409
    assert "advancing to 2028-04-19T13:00:00Z already" in _text(busy)

    with wallclock.fixed(datetime(2026, 12, 2, 9, tzinfo=UTC)):
        phases.run_once()
    done = _text(desk.clients["viewer"].get(page))
    assert "The last move on" in done and "100% · reached Wed 19 Apr 2028, 09:00 EDT" in done
    assert "What happened the last time it moved on" in done
    assert f"{desk.test_clock.pk} · 2028-04-10 14:00Z → 2028-04-19 13:00Z" in done
    part = desk.clients["viewer"].get(page + "?part=walk", HTTP_HX_REQUEST="true")
    assert part["HX-Refresh"] == "true"  # done: the whole page again, with the trace
    back = desk.clients["manager"].post(desk.url(f"test-clocks/{desk.test_clock.pk}/advance"),
                                        {"to": "2028-04-01T09:00"})
    assert back.status_code == 400 and "a test clock only moves forward" in _text(back)
    assert desk.clients["viewer"].post(desk.url(f"test-clocks/{desk.test_clock.pk}/advance"),
                                       {"to": "2029-01-01T00:00"}).status_code == 403


# -- API keys --------------------------------------------------------------------------------

def test_only_the_owner_sees_keys_and_the_secret_is_shown_once(desk):
    assert desk.clients["manager"].get(desk.url("keys/")).status_code == 403
    assert "API keys" not in _text(desk.clients["manager"].get(desk.url()))
    made = desk.clients["owner"].post(desk.url("keys/add"), {"name": "bookkeeping"})
    secret = re.search(r'value="(kt_[^"]+)"', made.content.decode())[1]
    assert made["Cache-Control"] == "no-store"
    key = ApiKey.objects.get(brand=desk.brand, name="bookkeeping")
    assert keys.find(secret, now=NOW) == key
    listed = desk.clients["owner"].get(desk.url("keys/")).content.decode()
    assert "bookkeeping" in listed and secret not in listed
    answer = desk.clients["owner"].post(desk.url(f"keys/{key.pk}/revoke"))
    assert answer.status_code == 302 and keys.find(secret, now=NOW) is None
    assert desk.clients["owner"].post(desk.url("keys/add"), {"name": ""}).status_code == 400


# -- manifests -------------------------------------------------------------------------------

def test_a_manager_checks_a_manifest_and_sees_every_problem(desk):
    broken = tax()
    broken["calendar"]["zone"] = "Mars/Olympus"
    broken["services"]["annual-return"]["clocks"]["pay"]["owner"] = "nobody"
    answer = desk.clients["manager"].post(desk.url("manifests/check"),
                                          {"document": json.dumps(broken)})
    text = _text(answer)
    assert answer.status_code == 200 and "2 problems" in text
    assert "$.calendar.zone" in text and "$.services.annual-return.clocks.pay.owner" in text
    fine = desk.clients["manager"].post(desk.url("manifests/check"),
                                        {"document": json.dumps(tax())})
    assert "No problems: it can be loaded." in _text(fine)
    assert "Load it" not in _text(fine)  # a manager checks; the owner loads
    assert desk.clients["manager"].post(desk.url("manifests/load"), {
        "document": json.dumps(tax())}).status_code == 403


def test_the_owner_loads_a_manifest_or_sees_why_not(desk):
    changed = tax()
    changed["services"]["annual-return"]["clocks"]["pay"]["title"] = "pay the {period} tax now"
    answer = desk.clients["owner"].post(desk.url("manifests/load"),
                                        {"document": json.dumps(changed)})
    assert answer.status_code == 302 and _said(answer).startswith("Loaded: version 2")
    assert Manifest.objects.filter(brand=desk.brand).count() == 2
    for document, said in (("{not json", "not JSON: Expecting property name"),
                           ("[1, 2]", "manifest.not_object"),
                           ('{"calendar": NaN}', "NaN is not JSON")):
        refused = desk.clients["owner"].post(desk.url("manifests/load"), {"document": document})
        assert refused.status_code == 400 and said in _text(refused)
    assert Manifest.objects.filter(brand=desk.brand).count() == 2
    assert "Version" in _text(desk.clients["viewer"].get(desk.url("manifests/")))
    assert "Check it" not in _text(desk.clients["viewer"].get(desk.url("manifests/")))
