"""Subscribing from the portal: the webcal link, the .ics download (the feed's own file), a
rotatable token, and the feed's alarms for the rungs a customer hears (notice and escalate
rungs of the dates they answer for), at the instants those rungs ring."""

from datetime import UTC, date, datetime

import icalendar
from django.test import Client

from timekeeping.basics import wallclock
from timekeeping.clocks import gate

AT = datetime(2026, 12, 1, 12, tzinfo=UTC)


def events(raw: bytes) -> dict[str, icalendar.Event]:
    return {str(event["uid"]): event for event in icalendar.Calendar.from_ical(raw).walk("VEVENT")}


def download(portal) -> bytes:
    with wallclock.fixed(AT):
        answer = portal.client.get(f"/portal/subjects/{portal.subject.pk}/calendar.ics")
    assert answer.status_code == 200
    assert answer["Content-Type"] == "text/calendar; charset=utf-8"
    assert answer["Content-Disposition"] == f'attachment; filename="{portal.subject.pk}.ics"'
    return answer.content


def test_the_download_is_the_feed_calendar_apps_fetch(portal):
    subject = portal.subject
    with wallclock.fixed(AT):
        public = Client().get(f"/subjects/{subject.pk}/calendar.ics?token={subject.feed_token}")
    assert download(portal) == public.content


def test_the_feed_rings_the_customers_rungs_where_they_ring(portal):
    pay = portal.clock("pay").occurrences.get()
    found = events(download(portal))
    alarms = found[f"{pay.label}@keeping-time"].walk("VALARM")
    # pay's rungs, notice 14d and escalate 3d, at 09:00 in the subject's zone (Los Angeles)
    assert [(str(a["action"]), a.decoded("trigger")) for a in alarms] == [
        ("DISPLAY", datetime(2028, 4, 4, 16, tzinfo=UTC)),
        ("DISPLAY", datetime(2028, 4, 15, 16, tzinfo=UTC))]
    assert [str(a["description"]) for a in alarms] == [
        "pay the 2027 tax: due 2028-04-18 (notice 14d)",
        "pay the 2027 tax: due 2028-04-18 (escalate 3d)"]
    others = [event for uid, event in found.items() if uid != f"{pay.label}@keeping-time"]
    assert others and not any(event.walk("VALARM") for event in others)  # the brand's dates


def test_a_kept_date_rings_no_more(portal):
    gate.propose(job=portal.job, step="pay", by="test")
    pay = portal.clock("pay").occurrences.get()
    assert not events(download(portal))[f"{pay.label}@keeping-time"].walk("VALARM")


def test_uids_stay_the_same_when_dates_move(portal):
    before = events(download(portal))
    gate.propose(job=portal.job, step="extend", items=["US"], by="test")
    after = events(download(portal))
    assert set(before) == set(after)
    federal = portal.clock("file").occurrences.get(item="US")
    uid = f"{federal.label}@keeping-time"
    assert before[uid].decoded("dtstart") == date(2028, 4, 18)
    assert after[uid].decoded("dtstart") == date(2028, 10, 16)
    for event in after.values():
        for alarm in event.walk("VALARM"):
            assert str(alarm["uid"]) in {str(a["uid"]) for e in before.values()
                                         for a in e.walk("VALARM")}


def test_a_new_link_stops_the_old_one(portal):
    subject = portal.subject
    old = f"/subjects/{subject.pk}/calendar.ics?token={subject.feed_token}"
    # Without JavaScript the button first answers a page that asks, and changes nothing.
    asked = portal.client.post(f"/portal/subjects/{subject.pk}/calendar/token")
    assert asked.status_code == 200 and "Make a new calendar link?" in asked.content.decode()
    assert Client().get(old).status_code == 200
    answer = portal.client.post(f"/portal/subjects/{subject.pk}/calendar/token",
                                {"confirmed": "yes"})
    assert answer.status_code == 302
    subject.refresh_from_db()
    assert Client().get(old).status_code == 404
    page = portal.client.get(answer["Location"]).content.decode()
    assert "A new calendar link: the old one no longer works." in page
    assert f"calendar.ics?token={subject.feed_token}" in page
    fresh = Client().get(f"/subjects/{subject.pk}/calendar.ics?token={subject.feed_token}")
    assert fresh.status_code == 200


def test_a_new_link_comes_back_in_place_for_htmx(portal):
    # htmx asked in the browser (hx-confirm) and sends the yes (hx-vals).
    answer = portal.client.post(f"/portal/subjects/{portal.subject.pk}/calendar/token",
                                {"confirmed": "yes"}, HTTP_HX_REQUEST="true")
    portal.subject.refresh_from_db()
    text = answer.content.decode()
    assert text.strip().startswith('<div id="subscribe-box"')
    assert portal.subject.feed_token in text and "the old one no longer works" in text
