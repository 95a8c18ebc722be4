"""A date's emails go to whoever owns it (S12): a clock a member owns (`owner: "mbr_…"`) tells
that member of its reminders and its miss, and copies them on its escalation; once the member
has gone, its brand's owner hears instead and is told why. On the real clock, in New York."""

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model

from timekeeping import clocks, manifests
from timekeeping.basics import wallclock
from timekeeping.models import Delivery, Member, Subject
from timekeeping.tick import phases


def manifest(owner: str) -> dict:
    return {"calendar": {"zone": "America/New_York", "weekends": [], "rings_at": "09:00"},
            "services": {"notice-response": {
                "subject": {"kind": "taxpayer", "key": "ein", "period": {"of": "none"}},
                "steps": {"reply": {}},
                "clocks": {"reply": {
                    "title": "reply to the notice", "due": {"input": "reply_by"},
                    "owner": owner, "rungs": ["notice 10d", "escalate 3d"],
                    "satisfied_by": ["reply"], "choices": ["reply"]}}}}}


@pytest.fixture
def owned(brand, actors):
    actors["owner"].email = "owner@example.test"
    actors["owner"].save()
    user = get_user_model().objects.create_user("sam", email="sam@example.test",
                                                first_name="Sam", last_name="Reyes")
    sam = Member.objects.create(brand=brand, user=user, role=Member.Role.MANAGER)
    manifests.load(brand, manifest(sam.pk))
    subject = Subject.objects.create(brand=brand, kind="taxpayer", key="12-3456789",
                                     name="Oriel Studio", zone="America/New_York")
    with wallclock.fixed(datetime(2028, 5, 1, 15, tzinfo=UTC)):
        job = clocks.order(brand=brand, service="notice-response", subject=subject,
                           input={"reply_by": "2028-06-14"})
    return sam, job.clocks.get(name="reply").occurrences.get()


def tick_to(instant: datetime) -> None:
    with wallclock.fixed(instant):
        phases.run_once(now=instant, sweep=False, phases=False)


def mail(key: str) -> Delivery:
    return Delivery.objects.get(idempotency_key__startswith=key)


def test_a_member_owned_clocks_notice_reaches_the_member_not_the_owner(owned):
    sam, reply = owned
    tick_to(datetime(2028, 6, 4, 13, 1, tzinfo=UTC))  # notice 10d: 4 June, 09:00 EDT
    notice = mail(f"{reply.label}:notice 10d")
    assert notice.payload["to"] == ["sam@example.test"]
    assert notice.payload["subject"] == ("10-day reminder: reply to the notice for Oriel "
                                         "Studio is due Wed 14 Jun 2028")
    tick_to(datetime(2028, 6, 11, 13, 1, tzinfo=UTC))  # escalate 3d: above Sam, Sam copied
    assert mail(f"{reply.label}:escalate 3d").payload["to"] == ["owner@example.test",
                                                                "sam@example.test"]
    tick_to(reply.late_from + timedelta(minutes=1))  # missed: the choice is Sam's
    missed = mail(f"{reply.label}:lapsed")
    assert missed.payload["to"] == ["sam@example.test"]
    assert "Choose what to do next:\n- reply" in missed.payload["body"]


def test_once_the_member_has_gone_the_owner_hears_and_is_told_why(owned, brand):
    sam, reply = owned
    sam.delete()
    tick_to(datetime(2028, 6, 4, 13, 1, tzinfo=UTC))
    notice = mail(f"{reply.label}:notice 10d")
    assert notice.payload["to"] == ["owner@example.test"]
    assert notice.payload["body"].startswith(
        "The member who answered for this date is no longer with Northwind Filing, so it "
        "comes to you. Assign it to someone on its page.")
    assert "mbr_" not in notice.payload["body"]


def test_a_date_assigned_to_a_member_tells_them_over_the_clocks_owner(owned, brand, actors):
    sam, reply = owned
    other = Member.objects.create(brand=brand, user=actors["member"])
    actors["member"].email = "kim@example.test"
    actors["member"].save()
    clocks.assign(reply, other, by="owner")
    tick_to(datetime(2028, 6, 4, 13, 1, tzinfo=UTC))
    assert mail(f"{reply.label}:notice 10d").payload["to"] == ["kim@example.test"]


def test_the_subjects_calendar_names_the_member_who_owns_the_date(owned, client, actors):
    sam, reply = owned
    client.force_login(actors["owner"])
    dates = client.get(f"/api/subjects/{reply.clock.subject_id}/calendar?from=2028-05-01")
    (line,) = [each for each in dates.json()["dates"] if each["what"].startswith("reply")]
    assert line["answers_for"] == "Sam Reyes"
