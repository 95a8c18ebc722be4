"""The console's navigation, its Settings page and its Sent emails page (issue 27): at most six
entries, the brand's settings pages under one "Settings" with a line each, and the emails the
brand's work sent readable page by page by its owner and managers."""

import re
from datetime import timedelta

from tests.words import engine_words, read, visible_text
from timekeeping.basics import wallclock
from timekeeping.models import Delivery
from timekeeping.timers import outbox


def nav_links(html: str) -> list[str]:
    nav = re.search(r'<nav class="console".*?</nav>', html, flags=re.S)[0]
    return re.findall(r">([^<>]+)</a>", nav)


def test_the_console_shows_six_entries_and_settings_lists_the_rest(desk):
    home = desk.clients["owner"].get(desk.url()).content.decode()
    assert nav_links(home) == ["Home", "Subjects", "Schedules", "Timed moves", "Why", "Settings"]
    page = desk.clients["owner"].get(desk.url("settings"))
    html = page.content.decode()
    assert page.status_code == 200
    assert 'aria-current="page">Settings<' in html
    listed = re.findall(r"<dt><a href=\"([^\"]+)\">([^<]+)</a></dt><dd>([^<]+)</dd>", html)
    assert [name for _, name, _ in listed] == ["Postponements", "Standby", "Test clocks",
                                                "Manifests", "Plan", "Your email digest",
                                                "Sent emails", "API keys", "Webhooks",
                                                "Download or delete"]
    for url, _, said in listed:
        assert said and desk.clients["owner"].get(url).status_code == 200
    assert engine_words(visible_text(html)) == []


def test_a_settings_page_marks_settings_in_the_navigation(desk):
    html = desk.clients["owner"].get(desk.url("standby/")).content.decode()
    assert 'aria-current="true">Settings<' in html


def test_a_viewer_sees_only_the_settings_they_may_open(desk):
    html = desk.clients["viewer"].get(desk.url("settings")).content.decode()
    assert "Sent emails" not in html and "API keys" not in html
    assert desk.clients["viewer"].get(desk.url("emails/")).status_code == 403
    assert desk.clients["stranger"].get(desk.url("emails/")).status_code == 404


def test_sent_emails_lists_the_brands_emails_newest_first_with_their_bodies(desk, actors):
    actors["owner"].email = "owner@northwind.test"
    actors["owner"].save()
    now = wallclock.wall_now()
    for n, subject in enumerate(("30-day reminder: pay the 2027 tax",
                                 "7-day reminder: pay the 2027 tax")):
        outbox.tell(brand=desk.brand, test_clock_id=desk.test_clock.pk, to=["x@y.test"],
                    subject=subject, body=f"Reminder number {n}.\n\nhttps://t.test/", key=str(n))
        Delivery.objects.filter(idempotency_key=str(n)).update(created=now + timedelta(
            minutes=n))
    sent = Delivery.objects.filter(brand=desk.brand, channel="email").order_by("-created")
    Delivery.objects.filter(pk=sent[0].pk).update(state="succeeded", delivered=now)
    Delivery.objects.create(brand=desk.other, channel="email", idempotency_key="elsewhere",
                            next_attempt=wallclock.wall_now(),
                            payload={"to": ["x@elsewhere.test"], "subject": "Not yours",
                                     "body": "From another brand."})
    page = desk.clients["manager"].get(desk.url("emails/"))
    html = page.content.decode()
    assert page.status_code == 200
    rows = re.findall(r"<summary>([^<]+)</summary>", html)
    assert rows[0] == sent[0].payload["subject"] and len(rows) == sent.count()
    assert sent[0].payload["body"].split("\n")[0] in html
    assert "Not yours" not in html
    assert "sent" in visible_text(html) and "waiting to be sent" in visible_text(html)
    assert engine_words(visible_text(html)) == []
    assert "/console/" in " ".join(read(html).links)


def test_sent_emails_are_paged_with_bounded_queries(desk, django_assert_max_num_queries):
    now = wallclock.wall_now()
    Delivery.objects.bulk_create([
        Delivery(brand=desk.brand, channel="email", idempotency_key=f"many:{n}",
                 next_attempt=now, created=now - timedelta(minutes=n),
                 payload={"to": ["a@b.test"], "subject": f"Email {n}", "body": "Hello."})
        for n in range(60)])
    with django_assert_max_num_queries(12):
        first = desk.clients["owner"].get(desk.url("emails/")).content.decode()
    assert "Email 0<" in first and "Email 30<" not in first and 'rel="next"' in first
    last = desk.clients["owner"].get(desk.url("emails/") + "?page=99").content.decode()
    assert "Page " in last and "Email 59<" in last
