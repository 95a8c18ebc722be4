"""A party's link page (S8, T1): it says until when it works, in the subject's zone; past its
moment it refuses with the moment (410), even before any tick has fired the expiry; an
answer commits the step through the gate and lets the job's deadline run again."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from timekeeping import clocks, manifests
from timekeeping.basics import wallclock
from timekeeping.models import Ask, Deadline, Delivery, Record, Subject

from .test_work import manifest

START = datetime(2028, 3, 10, 15, tzinfo=UTC)  # 10:00 EST, two days before the change


@pytest.fixture
def asked(brand, actors):
    actors["owner"].email = "owner@northwind.test"
    actors["owner"].save()
    manifests.load(brand, manifest(deliver={"organizer": {"title": "the organizer",
                                                          "ask": "owner", "expires": "3d"}},
                                   price={"within": "30d"}))
    subject = Subject.objects.create(brand=brand, kind="client", key="1", name="Harbor",
                                     zone="America/New_York", owner_name="Grace",
                                     contact_email="grace@harbor.test")
    with wallclock.fixed(START):
        job = clocks.order(brand=brand, service="work", subject=subject,
                           input={"due": "2028-06-30"})
    email = Delivery.objects.get(payload__to=["grace@harbor.test"])
    token = re.search(r"/ask/([\w-]+)/", email.payload["body"])[1]
    return job, token


def _text(answer) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode()))


def test_the_page_says_until_when_the_link_works_in_the_subjects_zone(asked):
    job, token = asked
    with wallclock.fixed(START + timedelta(days=1)):
        page = Client().get(f"/ask/{token}/")
    assert page.status_code == 200
    # Three days from 10:00 EST on 10 March is 10:00 EDT on the 13th, across the change.
    assert "This link works until Mon 13 Mar 2028, 10:00 EDT (America/New_York)" in _text(page)
    assert Ask.objects.get(job=job).expires == datetime(2028, 3, 13, 14, tzinfo=UTC)


def test_past_its_moment_it_refuses_with_the_moment_before_any_tick(asked):
    job, token = asked
    expires = Ask.objects.get(job=job).expires
    with wallclock.fixed(expires):
        page = Client().get(f"/ask/{token}/")
        answer = Client().post(f"/ask/{token}/")
    assert page.status_code == answer.status_code == 410
    assert "This link stopped working at Mon 13 Mar 2028, 10:00 EDT" in _text(answer)
    assert not Record.objects.filter(job=job.pk, kind="step.committed").exists()
    with wallclock.fixed(expires - timedelta(seconds=1)):
        assert Client().get(f"/ask/{token}/").status_code == 200


def test_an_answer_commits_the_step_and_the_deadline_runs_again(asked):
    job, token = asked
    answered_at = START + timedelta(days=2)
    with wallclock.fixed(answered_at):
        answer = Client().post(f"/ask/{token}/")
    assert answer.status_code == 200 and "your answer is recorded" in _text(answer)
    committed = Record.objects.get(job=job.pk, kind="step.committed")
    assert committed.data["step"] == "organizer" and committed.data["by"] == "party Grace"
    deadline = Deadline.objects.get(job=job)
    assert deadline.running_since == answered_at and deadline.used == timedelta(0)
    with wallclock.fixed(answered_at + timedelta(minutes=5)):
        again = Client().post(f"/ask/{token}/")
    assert "Answered" in _text(again)
    assert Record.objects.filter(job=job.pk, kind="step.committed").count() == 1


def test_an_unknown_link_is_not_found(db):
    assert Client().get("/ask/NoSuchLink0000000000000000000000/").status_code == 404


def test_guessing_links_from_one_address_is_slowed_to_the_link_rate(asked, settings):
    # An ask link answered 20,582 requests in a row (issue 31): now each address has its rate.
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "link": "3/min"}
    job, token = asked
    guesser = Client(REMOTE_ADDR="203.0.113.5")
    with wallclock.fixed(START + timedelta(days=1)):
        tries = [guesser.get(f"/ask/guess{n:012d}/").status_code for n in range(3)]
        refused = guesser.get(f"/ask/{token}/")  # even the right link, from that address
        party = Client(REMOTE_ADDR="192.0.2.5").post(f"/ask/{token}/")
    assert tries == [404, 404, 404]
    assert refused.status_code == 429 and refused["Retry-After"] == "60"
    assert "Too many tries" in _text(refused) and "Wait 1 minute, then try again." in _text(refused)
    assert party.status_code == 200  # the party, elsewhere, answers
    assert Ask.objects.get(job=job).state == "answered"
    with wallclock.fixed(START + timedelta(days=1, minutes=1)):
        assert guesser.get(f"/ask/{token}/").status_code == 200
