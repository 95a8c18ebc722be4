"""Events that mint (`on.event`): a notice a subject received mints the notice response, whose
`reply` date is the notice's `reply_by`, counted against the plan's allowance; the same notice
twice mints once; an event no plan takes is refused naming the field."""

from datetime import UTC, date, datetime

import pytest
from django.test import Client

from timekeeping import manifests
from timekeeping.basics import wallclock
from timekeeping.models import Job, Occurrence, Record, Subject
from timekeeping.recurring import plans


def document() -> dict:
    response = {"subject": {"kind": "client"}, "steps": {"reply": {}},
                "clocks": {"reply": {"title": "reply to the notice", "due": {"input": "reply_by"},
                                     "owner": "brand", "satisfied_by": ["reply"]}}}
    plan = {"subject": {"kind": "client"},
            "price": {"every": "1y", "includes": {"notice-response": 2}},
            "on": {"event": {"notice.received": {"order": "notice-response"}}}}
    return {"calendar": {"zone": "America/New_York", "weekends": ["sat", "sun"]},
            "services": {"notice-response": response, "plan": plan}}


@pytest.fixture
def subscribed(brand, actors):
    manifests.load(brand, document())
    subject = Subject.objects.create(brand=brand, kind="client", key="1", name="Harbor",
                                     zone="America/New_York")
    with wallclock.fixed(datetime(2027, 1, 20, 15, tzinfo=UTC)):
        subscription = plans.subscribe(subject=subject, service="plan")
    owner = Client()
    owner.force_login(actors["owner"])
    return subject, subscription, owner


def _receive(owner, subject, key, reply_by="2027-12-14"):
    with wallclock.fixed(datetime(2027, 11, 14, 15, tzinfo=UTC)):
        return owner.post(f"/api/subjects/{subject.pk}/events", {
            "event": "notice.received", "key": key, "input": {"reply_by": reply_by}},
            content_type="application/json")


def test_a_notice_mints_its_response_due_on_its_reply_by_date_inside_the_allowance(
        subscribed):
    subject, subscription, owner = subscribed
    answer = _receive(owner, subject, "CP161")
    assert answer.status_code == 201
    job = Job.objects.get(pk=answer.json()["minted"][0])
    assert (job.service, job.period) == ("notice-response", "CP161")
    reply = Occurrence.objects.get(clock__job=job)
    assert reply.due == date(2027, 12, 14)  # a Tuesday: no roll
    minted = Record.objects.get(kind="event.minted")
    assert minted.data["inside"] is True and minted.data["used"] == 1
    assert _receive(owner, subject, "CP2000").status_code == 201
    third = _receive(owner, subject, "LT11")
    assert third.status_code == 201
    beyond = Record.objects.get(kind="event.minted", job=third.json()["minted"][0])
    assert (beyond.data["used"], beyond.data["included"], beyond.data["inside"]) == (3, 2, False)
    assert [row["used"] for row in plans.allowances(
        subscription, at=datetime(2027, 11, 15, tzinfo=UTC))] == [3]


def test_the_same_notice_twice_mints_once_and_an_unknown_event_is_named(subscribed):
    subject, _, owner = subscribed
    assert _receive(owner, subject, "CP161").status_code == 201
    again = _receive(owner, subject, "CP161")
    assert again.status_code == 400 and "received already" in again.json()["key"][0]
    assert Job.objects.filter(service="notice-response").count() == 1
    with wallclock.fixed(datetime(2027, 11, 14, 15, tzinfo=UTC)):
        unknown = owner.post(f"/api/subjects/{subject.pk}/events",
                             {"event": "audit.opened", "key": "A1"},
                             content_type="application/json")
    assert unknown.status_code == 400 and "takes 'audit.opened'" in unknown.json()["event"][0]
