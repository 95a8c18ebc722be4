"""A job's own time where people look: the subject's calendar and its feed list each link's
expiry (`ask`), deadline and task due date; the console's "needs attention" says what lapsed,
what is at risk and which links are about to expire."""

import html
import re
from datetime import UTC, datetime, timedelta

from django.test import Client

from timekeeping.clocks import subject_calendar
from timekeeping.models import Ask, Job
from timekeeping.tick import test_clocks

from .test_work import START, world  # noqa: F401 - the fixture


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


def test_the_calendar_and_feed_list_the_link_the_deadline_and_the_task(world):  # noqa: F811
    clock, job = world(deliver={"organizer": {"title": "the organizer", "ask": "owner",
                                              "expires": "180d"},
                                "prepare": {"title": "prepare it", "task": True,
                                            "within": "10d"}},
                       price={"within": "5d before file"})
    lines = {line.kind: line for line in subject_calendar.lines(job.subject)}
    assert lines["ask"].what == "the link for the organizer expires"
    assert lines["ask"].date.isoformat() == "2028-08-28" and lines["ask"].answers_for == "Grace"
    assert lines["deadline"].date.isoformat() == "2028-06-26"
    assert lines["deadline"].status == "open · held while a party is asked"
    assert lines["task"].what == "prepare it" and lines["task"].status == "open in the pool"
    feed = subject_calendar.feed(job.subject, stamp=START).decode()
    assert "SUMMARY:the link for the organizer expires" in feed
    assert "SUMMARY:prepare it" in feed


def test_needs_attention_says_a_job_lapsed_and_a_link_expires_soon(world, actors):  # noqa: F811
    clock, job = world(deliver={"organizer": {"title": "the organizer", "ask": "owner",
                                              "expires": "2d"}})
    owner = Client()
    owner.force_login(actors["owner"])
    soon = _text(owner.get(f"/console/{job.brand_id}/", {"test": clock.pk}))  # its world
    assert "Grace has not answered the link for the organizer, and it expires soon" in soon
    assert job.pk not in soon.split("Details")[0]  # named, not by id
    assert soon.index("The work") < soon.index("expires soon") < soon.index("Needs attention")
    ask = Ask.objects.get(job=job)
    test_clocks.advance(clock, to=ask.expires)
    clock.refresh_from_db()
    test_clocks.advance(clock, to=ask.expires + timedelta(days=2))
    assert Job.objects.get(pk=job.pk).state == Job.State.LAPSED
    page = _text(owner.get(f"/console/{job.brand_id}/", {"test": clock.pk}))
    assert "work: it was missed: a link expired twice without an answer" in page
    assert f"job.lapsed · job {job.pk} (test world {clock.pk})" in page  # its Details
    assert datetime(2028, 3, 5, 14, tzinfo=UTC) == Ask.objects.get(pk=ask.pk).expires
    story = _text(owner.get(f"/console/{job.brand_id}/subjects/{job.subject_id}/",
                            {"test": clock.pk}))
    assert "The work was missed: a link expired twice without an answer; the hold " \
           "returns." in story
    assert "A party's link expired once and works again until Sun 5 Mar 2028." in story
    assert "Grace was asked by a link for organizer, working until Fri 3 Mar 2028." in story


def test_the_why_box_tells_a_jobs_own_time(world, actors):  # noqa: F811
    clock, job = world(deliver={"organizer": {"title": "the organizer", "ask": "owner",
                                              "expires": "180d"}},
                       price={"within": "30d"})
    owner = Client()
    owner.force_login(actors["owner"])
    said = _text(owner.get(f"/console/{job.brand_id}/why?q={job.pk}"))
    assert f"Job {job.pk} (work) is open, on test clock {clock.pk}." in said
    assert "Deadline on the job (within 30d): open, held by ask_" in said
    assert "Link for the organizer, asked of Grace: open, works until Mon 28 Aug 2028, 09:00 " \
        "EDT" in said
    assert "is held by at risk · 22d 11h" in said


def test_a_date_that_passes_unkept_is_a_lapse_in_needs_attention(world, actors):  # noqa: F811
    clock, job = world()
    test_clocks.advance(clock, to=datetime(2028, 7, 1, 4, tzinfo=UTC))  # 00:00 EDT, late
    owner = Client()
    owner.force_login(actors["owner"])
    page = _text(owner.get(f"/console/{job.brand_id}/", {"test": clock.pk}))
    attention = page[page.index("Needs attention"):]
    assert "work: the file date of Fri 30 Jun 2028 was missed." in attention
    assert f"clock.lapsed · job {job.pk} (test world {clock.pk})" in attention


def test_the_portal_says_what_is_asked_of_the_customer_and_until_when(
        world, brand, actors):  # noqa: F811
    from timekeeping.models import Customer

    clock, job = world(deliver={"organizer": {"title": "the organizer", "ask": "owner",
                                              "expires": "180d"}})
    Customer.objects.create(brand=brand, user=actors["buyer"]).subjects.add(
        job.subject, through_defaults={"brand": brand})
    buyer = Client()
    buyer.force_login(actors["buyer"])
    page = _text(buyer.get(f"/portal/subjects/{job.subject_id}/"))
    asked = page[page.index("Asked of you"):page.index("Subscribe")]
    assert "Northwind Filing asks Grace for the organizer" in asked
    assert "the link in the email works until Mon 28 Aug 2028, 09:00 EDT" in asked
