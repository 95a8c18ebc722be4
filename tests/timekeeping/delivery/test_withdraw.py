"""Withdrawing from a subject: the page lists the subjects where the member answers for an open
date or holds a task, each with the brand's other owners and managers to hand them to; the
post hands them over through `lifecycle.withdraw`; a refusal names its field."""

from html import unescape

from timekeeping import clocks
from timekeeping.jobs import tasks
from timekeeping.models import Member, Occurrence, Record, Task


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
