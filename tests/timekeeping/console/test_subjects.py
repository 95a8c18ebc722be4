"""Subjects: the list (search, kind, 50 a page, live ones unless a test world is named) and a
subject's page (its calendar as the API gives it, its jobs and clocks with their open dates,
its history newest first, its feed link and the invitation of its contact)."""

import html
import re
from datetime import UTC, datetime

from django.contrib.messages import get_messages

from timekeeping.basics import shown, wallclock
from timekeeping.clocks import subject_calendar
from timekeeping.models import Delivery, Invitation, Subject


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


def _said(answer) -> str:
    return [str(message) for message in get_messages(answer.wsgi_request)][-1]


def test_the_list_searches_by_name_or_key_filters_by_kind_and_pages_by_50(desk):
    Subject.objects.bulk_create([Subject(brand=desk.brand, kind="venue" if n % 2 else "taxpayer",
                                         key=f"k{n:03d}", name=f"Client {n:03d}")
                                 for n in range(120)])
    owner = desk.clients["owner"]
    first = _text(owner.get(desk.url("subjects/"), {"test": "off"}))  # live
    assert "Page 1 of 3 (120 in all)" in first and "Client 049" in first  # live ones only
    assert "Client 050" not in first
    assert "Client 050" in _text(owner.get(desk.url("subjects/"), {"page": 2}))
    found = _text(owner.get(desk.url("subjects/"), {"q": "k11", "kind": "venue"}))
    assert "Client 111" in found and "Client 110" not in found and "Harbor" not in found
    assert "Harbor Books" not in _text(owner.get(desk.url("subjects/"), {"q": "harbor"}))
    assert "Harbor Books" in _text(owner.get(desk.url("subjects/"),
                                             {"q": "harbor", "test": desk.test_clock.pk}))
    assert "No subject matches" in _text(owner.get(desk.url("subjects/"), {"q": "nobody"}))


def test_a_subjects_page_shows_the_apis_calendar_its_jobs_and_its_open_dates(desk):
    page = desk.clients["viewer"].get(desk.url(f"subjects/{desk.subject.pk}/"))
    text = _text(page)
    for line in subject_calendar.lines(desk.subject):  # the API's lines, in the owner's words
        kind = {"hard": "fixed date", "clock": "date"}.get(line.kind, line.kind)
        answers = ("Northwind Filing" if line.answers_for in ("the brand", "of record")
                   else line.answers_for)
        assert f"{shown.day(line.date)} {line.what} {kind} {answers}" in text
    api = desk.clients["viewer"].get(f"/api/subjects/{desk.subject.pk}/calendar").json()
    assert [line["what"] for line in api["dates"]] == [
        line.what for line in subject_calendar.lines(desk.subject)]
    assert "annual return 2027 · open" in text and "pay the 2027 tax fixed date" in text
    assert "about $324 a month late" in text and "Mark done" not in text  # a viewer


def test_the_history_is_newest_first_and_pages_by_before(desk, monkeypatch):
    monkeypatch.setattr("timekeeping.console.subjects.HISTORY_PAGE", 3)
    owner = desk.clients["owner"]
    first = owner.get(desk.url(f"subjects/{desk.subject.pk}/"))
    text = _text(first)
    assert text.index("Reminder sent: the pay date is due Tue 18 Apr 2028.") < text.index(
        "Reminder sent: the file date for US is due Tue 18 Apr 2028.")
    older = re.search(r'href="\?(?:[^"]*&amp;)?before=([^"&]+)" rel="next"',
                      first.content.decode())[1]
    second = _text(owner.get(desk.url(f"subjects/{desk.subject.pk}/") + "?before=" + older))
    assert "Reminder sent: the pay date is due Tue 18 Apr 2028." not in second
    assert "Newest" in second
    broken = owner.get(desk.url(f"subjects/{desk.subject.pk}/"), {"before": "yesterday"})
    assert broken.status_code == 200  # a bad page mark reads as the newest page


def test_rotating_the_feed_link_is_the_apis_rotation(desk):
    before = desk.subject.feed_token
    answer = desk.clients["manager"].post(desk.url(f"subjects/{desk.subject.pk}/feed"),
                                          {"confirmed": "yes"})
    desk.subject.refresh_from_db()
    assert answer.status_code == 302 and desk.subject.feed_token != before
    assert _said(answer) == "The feed has a new link; the old link no longer works."
    page = desk.clients["manager"].get(desk.url(f"subjects/{desk.subject.pk}/"))
    assert f"calendar.ics?token={desk.subject.feed_token}" in page.content.decode()
    api = desk.clients["manager"].post(f"/api/subjects/{desk.subject.pk}/calendar/token")
    desk.subject.refresh_from_db()
    assert api.json()["feed"].endswith(desk.subject.feed_token)
    assert desk.clients["viewer"].post(
        desk.url(f"subjects/{desk.subject.pk}/feed")).status_code == 403


def test_inviting_the_contact_sends_the_invitation_to_the_brands_owner_in_a_test_world(desk,
                                                                                      brand):
    brand.owner.email = "owner@northwind.test"
    brand.owner.save()
    page = desk.clients["manager"].get(desk.url(f"subjects/{desk.subject.pk}/"))
    assert 'value="grace@harbor.test"' in page.content.decode()  # prefilled
    with wallclock.fixed(datetime(2026, 12, 1, 12, tzinfo=UTC)):
        answer = desk.clients["manager"].post(desk.url(f"subjects/{desk.subject.pk}/invite"),
                                              {"email": "grace@harbor.test"})
    assert answer.status_code == 302
    assert _said(answer) == ("Invitation for grace@harbor.test sent to the brand's owner (the "
                             "subject lives in a test world); its link works for 7 days, once.")
    made = Invitation.objects.get(subject=desk.subject)
    assert made.email == "grace@harbor.test"
    mail = Delivery.objects.get(idempotency_key=f"invitation:{made.pk}")
    assert mail.payload["to"] == ["owner@northwind.test"]
    # Relative to now (days from here), with the exact instant on hover: now fixed a day after
    # the invitation (read on the real clock, the page said "47 hours" from 6 December 2026).
    with wallclock.fixed(datetime(2026, 12, 2, 12, tzinfo=UTC)):
        page = desk.clients["manager"].get(desk.url(f"subjects/{desk.subject.pk}/"))
    assert re.search(r"grace@harbor\.test · its link expires in \d days", _text(page))
    assert f'title="{shown.moment(made.expires, "America/New_York")}">in ' in \
        page.content.decode()


def test_a_bad_email_is_named_on_the_page_and_a_viewer_cannot_invite(desk):
    answer = desk.clients["owner"].post(desk.url(f"subjects/{desk.subject.pk}/invite"),
                                        {"email": "not an email"})
    assert answer.status_code == 400 and "Enter a valid email address." in _text(answer)
    assert Invitation.objects.count() == 0
    assert desk.clients["viewer"].post(desk.url(f"subjects/{desk.subject.pk}/invite"),
                                       {"email": "a@b.test"}).status_code == 403


def test_another_brands_subject_is_not_found(desk):
    theirs = Subject.objects.create(brand=desk.other, kind="taxpayer", key="9", name="Theirs")
    assert desk.clients["owner"].get(desk.url(f"subjects/{theirs.pk}/")).status_code == 404
    assert desk.clients["owner"].post(desk.url(f"subjects/{theirs.pk}/feed")).status_code == 404
