"""Withdrawing from a subject: the page lists the subjects where the member answers for an open
date or holds a task, each with the brand's other owners and managers to hand them to; the
post hands them over through `lifecycle.withdraw`; a refusal names its field."""

from html import unescape

from timekeeping import clocks
from timekeeping.jobs import tasks
from timekeeping.models import Delivery, Member, Occurrence, Record, Task


def withdraw(delivery, who="staff", **fields):
    return delivery.client(who).post("/delivery/withdraw", fields)


def told(delivery, who="staff") -> str:
    return unescape(delivery.client(who).get("/delivery/").content.decode())


def test_the_page_offers_the_subjects_with_the_brands_other_managers(delivery, actors):
    Member.objects.create(brand=delivery.stranger.brand, user=actors["buyer"], role="manager")
    text = told(delivery).split('id="withdraw"')[1]  # the dates' Assign lists everyone
    assert f'name="subject" value="{delivery.subject.pk}"' in text
    assert f'<option value="{delivery.owner.pk}">owner (owner)</option>' in text
    assert f'value="{delivery.manager.pk}"' not in text  # not themselves
    assert f'value="{delivery.viewer.pk}"' not in text  # a viewer cannot take over
    assert "buyer" not in text  # another brand's manager


def test_withdrawing_hands_dates_and_held_tasks_to_the_successor(delivery):
    tasks.take(delivery.task, delivery.manager)
    answer = withdraw(delivery, subject=delivery.subject.pk, successor=delivery.owner.pk)
    assert answer.status_code == 302 and answer["Location"] == "/delivery/"
    text = told(delivery)
    assert "Withdrawn from Harbor: 1 date and 1 task passed to owner." in text
    assert Occurrence.objects.get(pk=delivery.date.pk).assignee == delivery.owner
    assert Task.objects.get(pk=delivery.task.pk).holder == delivery.owner
    assert f'id="date-{delivery.date.pk}"' not in text
    assert "held by owner until" in text
    assert "You answer for no open date and hold no task" in text
    withdrew = Record.objects.get(kind="member.withdrew")
    assert withdrew.data["member"] == delivery.manager.pk
    assert withdrew.data["by"].endswith("(staff)")
    owners = told(delivery, "owner")
    assert f'id="date-{delivery.date.pk}"' in owners and "held by you until" in owners


def test_a_refusal_names_its_field(delivery):
    withdraw(delivery, subject=delivery.subject.pk, successor=delivery.manager.pk)
    assert "Not withdrawn from Harbor: successor: a successor is someone else." in \
        told(delivery)
    withdraw(delivery, subject=delivery.subject.pk, successor=delivery.viewer.pk)
    assert "Not withdrawn from Harbor: successor: a viewer reads; the successor must be a " \
           "manager or the owner." in told(delivery)
    withdraw(delivery, subject=delivery.subject.pk, successor="mbr_Missing0000000000")
    assert "Not withdrawn from Harbor: successor: choose a manager or the owner of Northwind " \
           "Filing to take over." in told(delivery)
    withdraw(delivery, subject=delivery.subject.pk,
             successor=Member.objects.get(brand=delivery.stranger.brand).pk)
    assert "Not withdrawn from Harbor: successor: choose a manager" in told(delivery)
    withdraw(delivery)
    assert "Not withdrawn: subject: choose the subject to withdraw from." in told(delivery)
    assert Occurrence.objects.get(pk=delivery.date.pk).assignee == delivery.manager
    assert not Record.objects.filter(kind="member.withdrew").exists()


def test_another_brands_subject_answers_404_and_a_viewer_403(delivery):
    theirs = withdraw(delivery, subject=delivery.stranger.subject_id,
                      successor=delivery.owner.pk)
    missing = withdraw(delivery, subject="sbj_Missing0000000000", successor=delivery.owner.pk)
    assert theirs.status_code == missing.status_code == 404
    clocks.assign(delivery.date, delivery.viewer, by="owner")
    assert withdraw(delivery, "member", subject=delivery.subject.pk,
                    successor=delivery.owner.pk).status_code == 403
    assert withdraw(delivery, "member").status_code == 403
    assert not Record.objects.filter(kind="member.withdrew").exists()


def test_withdrawing_with_no_successor_lapses_the_seat_on_the_record(delivery, actors):
    """S23: the member of record leaves with no one to take over. Their date goes back to
    the brand and their hold to the pool, and the lapse is on the record saying who hears, in
    the owner's needs attention and on the subject's page. In the test world only the owner
    is emailed, a practice run."""
    actors["owner"].email, actors["staff"].email = "owner@northwind.test", "staff@northwind.test"
    for user in (actors["owner"], actors["staff"]):
        user.save()
    tasks.take(delivery.task, delivery.manager)
    assert 'value="none">No one: back to Northwind Filing' in told(delivery)
    withdraw(delivery, subject=delivery.subject.pk, successor="none")
    assert "Withdrawn from Harbor: 1 date and 1 task went back to Northwind Filing, whose " \
           "owner has been told." in told(delivery)
    assert Occurrence.objects.get(pk=delivery.date.pk).assignee is None
    assert Task.objects.get(pk=delivery.task.pk).state == Task.State.OPEN
    assert Record.objects.get(kind="member.withdrew").data["successor"] is None
    lapsed = Record.objects.get(kind="subject.of_record_lapsed")
    assert lapsed.subject == delivery.subject.pk and lapsed.test_clock_id == delivery.spring.pk
    assert (lapsed.data["member"], lapsed.data["dates"], lapsed.data["tasks"]) == (
        delivery.manager.pk, 1, 1)
    assert lapsed.data["told"] == [{"who": "owner", "name": "owner", "emailed": True},
                                   {"who": "member", "name": "staff", "emailed": False}]
    said = ("staff left Harbor with no one named to take over: 1 date and 1 task are back with "
            "your practice; assign them to someone. Told: owner (the owner, by email), staff "
            "(who had it, not emailed)")
    console = delivery.client("owner")
    home = unescape(console.get(f"/console/{delivery.brand.pk}/?test="
                                f"{delivery.spring.pk}", follow=True).content.decode())
    assert said in home
    page = unescape(console.get(f"/console/{delivery.brand.pk}/subjects/"
                                f"{delivery.subject.pk}/", follow=True).content.decode())
    assert said in page.split('id="attention"')[1]
    assert "staff left with no one named to take over" in page.split('id="history"')[1]
    [email] = [each for each in Delivery.objects.all()
               if "No one answers for Harbor" in each.payload["subject"]]
    assert email.payload["to"] == ["owner@northwind.test"]
    assert email.payload["subject"] == "Practice run: No one answers for Harbor now: staff " \
                                       "withdrew"
