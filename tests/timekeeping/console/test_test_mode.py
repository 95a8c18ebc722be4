"""Test mode (issue 27): the console is live by default; a test world only behind the switch,
per brand, kept in the session and in the address, with a banner on every page while it is on;
no list or total mixes the two. The desk's dates live on its test clock, "spring"."""

import html
import re

from django.test import Client

from timekeeping.models import Brand, TestClock


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


def _fresh(user) -> Client:
    """The person in a new browser: nothing kept in a session yet."""
    client = Client()
    client.force_login(user)
    return client


def test_the_console_is_live_until_the_person_switches(desk, actors):
    owner = _fresh(actors["owner"])
    live = _text(owner.get(desk.url()))
    assert "Test mode:" not in live and "Harbor Books" not in live.split("Needs attention")[0]
    assert "Nothing live is at risk. Your test worlds have dates of their own: look at spring" \
        in live
    # The switch lists the brand's test worlds; live is chosen.
    assert re.search(r'<option value="off" selected>Off: live</option>',
                     owner.get(desk.url()).content.decode())

    tested = owner.get(desk.url(), {"test": desk.test_clock.pk})
    text = _text(tested)
    assert ("Test mode: you are looking at the test world \u201cspring\u201d, where it is "
            "Mon 10 Apr 2028, 10:00 EDT. Nothing here is live") in text
    at_risk = text.split("Needs attention")[0]
    assert "file the 2027 return, US" in at_risk and "pay the 2027 tax" in at_risk


def test_the_session_keeps_it_and_every_page_carries_it_in_its_address(desk, actors):
    owner = _fresh(actors["owner"])
    owner.get(desk.url(), {"test": desk.test_clock.pk})
    for path in ("", "subjects/", "schedules/", "keys/", "help/money"):
        sent = owner.get(desk.url(path), {"q": "x"} if path == "subjects/" else {})
        assert sent.status_code == 302, path
        assert sent["Location"] == desk.url(path) + (
            f"?q=x&test={desk.test_clock.pk}" if path == "subjects/"
            else f"?test={desk.test_clock.pk}")
        page = owner.get(sent["Location"])
        assert page.status_code == 200 and "Test mode: you are looking at" in _text(page), path
    # A link shared with someone who keeps the brand opens the same world for them.
    shared = _fresh(actors["staff"]).get(sent["Location"])
    assert "Test mode: you are looking at" in _text(shared)


def test_leaving_test_mode_turns_it_off_for_every_page(desk, actors):
    owner = _fresh(actors["owner"])
    owner.get(desk.url(), {"test": desk.test_clock.pk})
    left = owner.get(desk.url(), {"test": "off"})
    assert left.status_code == 200 and "Test mode:" not in _text(left)
    again = owner.get(desk.url("subjects/"))
    assert again.status_code == 200 and "Test mode:" not in _text(again)


def test_it_is_per_brand(desk, actors):
    second = Brand.objects.create(name="Second Desk", slug="second", owner=actors["owner"])
    owner = _fresh(actors["owner"])
    owner.get(desk.url(), {"test": desk.test_clock.pk})
    other = owner.get(f"/console/{second.pk}/")
    assert other.status_code == 200 and "Test mode:" not in _text(other)


def test_a_stranger_gets_404_and_their_session_keeps_nothing(desk, actors):
    stranger = _fresh(actors["outsider"])
    answer = stranger.get(desk.url(), {"test": desk.test_clock.pk})
    assert answer.status_code == 404
    assert not any(key.startswith("test_mode:") for key in stranger.session.keys())
    assert stranger.get(desk.url()).status_code == 404  # not sent anywhere first


def test_a_test_world_of_another_brand_or_gone_shows_live(desk, actors):
    owner = _fresh(actors["owner"])
    theirs = TestClock.objects.create(brand=desk.other, name="theirs",
                                      frozen_time=desk.test_clock.frozen_time)
    page = owner.get(desk.url(), {"test": theirs.pk})
    assert page.status_code == 200 and "Test mode:" not in _text(page)
    owner.get(desk.url(), {"test": desk.test_clock.pk})
    TestClock.objects.filter(pk=desk.test_clock.pk).delete()
    sent = owner.get(desk.url())  # the session still names it: sent there once, then live
    page = owner.get(sent["Location"])
    assert page.status_code == 200 and "Test mode:" not in _text(page)
    assert owner.get(desk.url()).status_code == 200


def test_the_at_risk_list_says_its_total_and_each_figure_opens_its_breakdown(desk):
    page = desk.clients["owner"].get(desk.url())
    text, body = _text(page), page.content.decode()
    assert "$648 a month at risk across 3 dates (1 of them not priced)." in text
    assert ("Your manifest prices a miss of \u201cfile the 2027 return\u201d at $324 for each "
            "month it is late") in text
    assert body.count('<details class="cost"><summary>about $324 a month late</summary>') == 2
    assert f'href="/console/{desk.brand.pk}/help/money"' in body
    helped = desk.clients["viewer"].get(desk.url("help/money"))
    assert helped.status_code == 200 and "never added together" in _text(helped)
    # Live, the same list is empty and says how it would fill.
    live = _text(desk.clients["owner"].get(desk.url(), {"test": "off"}))
    assert "a month at risk across" not in live and "Nothing live is at risk." in live
