"""The console's home: at risk first, what needs attention, the next 30 days; a banner when
ticks stopped; each person sees their own brands only."""

import html
import re
from datetime import UTC, datetime, timedelta

from timekeeping.basics import wallclock
from timekeeping.models import Fault, Heartbeat, Timer

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


def _at_risk(answer) -> str:
    """The at-risk section's text alone (the next 30 days name the same dates again)."""
    return _text(answer).split("Needs attention")[0]


def test_it_lists_what_is_at_risk_first_priced_with_why_and_the_controls(desk):
    page = desk.clients["owner"].get(desk.url())
    text = _text(page)
    assert page.status_code == 200
    assert text.index("At risk") < text.index("Needs attention") < text.index("The next 30 days")
    first, pay, refund = (text.index(what) for what in (
        "file the 2027 return, US", "pay the 2027 tax", "refund claims on the 2027 return"))
    # Priced first (the filing and the payment, both "about $324 a month late", the same
    # day: their order is the ids'), then the rest by nearness.
    assert max(first, pay) < refund
    assert "about $324 a month late" in text and "in 8 days" in text
    assert "Reminder sent Sun 19 Mar 2028; done once 'file' is recorded" in text
    assert "late from Wed 19 Apr 2028, 00:00 EDT" in text and "Times are New York time" in text
    assert "rang" not in text and "America/New_York" not in text
    assert text.count("Mark done") == 3 and "staff (manager)" in text
    # The browser tab counts the dates at risk: pay, the federal filing, the refund window.
    assert re.search(r"<title>.*</title>", page.content.decode())[0] == (
        "<title>3 at risk · Northwind Filing · Keeping Time</title>")
    assert page.content.decode().count('name="csrfmiddlewaretoken"') >= 12


def test_a_viewer_sees_everything_and_no_control(desk):
    page = desk.clients["viewer"].get(desk.url())
    assert page.status_code == 200 and "pay the 2027 tax" in _text(page)
    assert "Mark done" not in _text(page)
    assert f'action="/console/{desk.brand.pk}/' not in page.content.decode()  # no control


def test_strangers_hear_404_and_no_one_signed_in_is_sent_to_sign_in(desk, client):
    assert desk.clients["stranger"].get(desk.url()).status_code == 404
    assert desk.clients["stranger"].get(f"/console/{desk.other.pk}/").status_code == 200
    assert client.get(desk.url())["Location"].startswith("/accounts/login/")


def test_the_banner_says_when_ticks_stopped(desk):
    with wallclock.fixed(NOW):
        assert "No tick has run yet" in _text(desk.clients["owner"].get(desk.url()))
        Heartbeat.objects.create(name="tick", at=NOW - timedelta(minutes=10))
        text = _text(desk.clients["owner"].get(desk.url()))
        assert ("Ticks stopped: nothing has run on its own for 10 minutes (the last tick ran "
                "Tue 1 Dec 2026, 11:50 UTC). Check the cron line.") in text
        Heartbeat.objects.filter(name="tick").update(at=NOW - timedelta(minutes=1))
        assert "Ticks stopped" not in _text(desk.clients["owner"].get(desk.url()))


def test_what_needs_attention_shows_failures_first_with_times_in_the_zone(desk):
    Fault.objects.create(brand=desk.brand, phase=Fault.Phase.TIMERS, where=desk.brand.pk,
                         error="ValueError: broke", first_seen=NOW - timedelta(hours=2),
                         last_seen=NOW - timedelta(hours=2))
    Timer.objects.create(brand=desk.brand, key="late", kind="delay", place=4, owed=NOW,
                         state=Timer.State.FIRED, fired=NOW - timedelta(hours=1),
                         late_by=timedelta(minutes=9), owner_id="job_X", owner_opened=NOW)
    with wallclock.fixed(NOW):  # live, not the desk's test world: the engine's faults are live
        text = _text(desk.clients["viewer"].get(desk.url(), {"test": "off"}))
    assert text.index("failed once and has not worked since") < text.index("ran 9m late")
    # Relative, with the exact time in the zone on hover; the error under Details.
    body = desk.clients["viewer"].get(desk.url()).content.decode()
    assert 'title="Tue 1 Dec 2026, 05:00 EST">' in body and "2 hours ago" in text
    assert "<summary>Details</summary><code>" in body and "ValueError: broke" in text


def test_the_next_30_days_are_a_chart_and_a_list_by_day_for_the_world_chosen(desk):
    page = desk.clients["owner"].get(desk.url(), {"test": desk.test_clock.pk})
    body, text = page.content.decode(), _text(page)
    assert '<svg class="chart"' in body and 'role="img"' in body
    assert "<script" not in body.split("<main")[1]
    assert "What falls due per day, 10 Apr to 9 May (New York time)" in body
    assert "<title>Tue 18 Apr: 1 fixed date</title>" in body
    assert "Tue 18 Apr 2028 1 fixed date, 1 date" in text
    real = _text(desk.clients["owner"].get(desk.url(), {"test": "off"}))
    assert "Nothing falls due in the next 30 days." in real


def test_the_at_risk_list_pages_by_25(desk, monkeypatch):
    monkeypatch.setattr("timekeeping.console.views.AT_RISK_PAGE", 2)
    first = _at_risk(desk.clients["owner"].get(desk.url()))
    second = _at_risk(desk.clients["owner"].get(desk.url(), {"risk": 2}))
    assert "Page 1 Next" in first and "refund claims" not in first
    assert "Previous Page 2" in second and "Next" not in second.split("Page 2")[1][:20]
    assert "refund claims" in second and "pay the 2027 tax" not in second


def test_the_at_risk_list_filters_by_state_and_by_whom_it_is_assigned_to(desk):
    pay = desk.occurrence("pay")
    pay.assignee = desk.manager
    pay.save(update_fields=["assignee"])
    ahead = _at_risk(desk.clients["owner"].get(desk.url(), {"state": "ahead"}))
    assert "refund claims" in ahead and "pay the 2027 tax soon" not in ahead
    mine = _at_risk(desk.clients["owner"].get(desk.url(), {"assignee": desk.manager.pk}))
    assert "pay the 2027 tax" in mine and "file the 2027 return, US" not in mine
    nobody = _at_risk(desk.clients["owner"].get(desk.url(), {"assignee": "nobody"}))
    assert "file the 2027 return, US" in nobody and "assigned to staff" not in nobody
    assert "Nothing is at risk of these." in _text(desk.clients["owner"].get(
        desk.url(), {"state": "lapsed"}))
