"""Who reaches the delivery portal (issue 12): a brand's members (its owner included), each
on the brands they are a Member of. A task, date or subject of any other brand answers 404,
exactly as one that does not exist; a person who is no brand's member gets 404 from every
page. A viewer reads, and a control they post answers 403."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from timekeeping.clocks import undo
from timekeeping.jobs.tasks import member_of
from timekeeping.models import Brand, Member, Occurrence, Record, Subject, Task
from timekeeping.timers import records

ACTS = (Member.Role.OWNER, Member.Role.MANAGER)


def members_of(request) -> dict[str, Member]:
    """The signed-in person's memberships, by brand id; 404 for no member. A brand's owner is
    its member: the first time they come, their membership is made (an owner holds tasks as
    any member does, `tasks.member_of`)."""
    for brand_id in Brand.objects.filter(owner=request.user).exclude(
            members__user=request.user).values_list("pk", flat=True):
        member_of(brand_id, request.user)
    found = {member.brand_id: member for member in Member.objects.filter(
        user=request.user).select_related("brand__calendar", "brand__owner", "user")}
    if not found:
        raise Http404("you are no brand's member")
    return found


def may_act(member: Member | None) -> bool:
    return member is not None and member.role in ACTS


def acting(members: dict[str, Member], brand_id: str) -> Member:
    """The person's membership of a brand they may act at: a viewer hears 403."""
    member = members[brand_id]
    if not may_act(member):
        raise PermissionDenied(f"a viewer reads; a manager or the owner of {member.brand.name} "
                               "acts here")
    return member


def tasks_of(members: dict[str, Member]):
    return Task.objects.filter(brand_id__in=list(members)).select_related(
        "subject__brand__calendar", "job", "holder__user", "test_clock")


def task_of(members: dict[str, Member], task_id: str) -> Task:
    task = tasks_of(members).filter(pk=task_id).first()
    if task is None:
        raise Http404("no such task")
    return task


def dates_of(members: dict[str, Member]):
    return Occurrence.objects.filter(brand_id__in=list(members)).select_related(
        "clock__subject__brand__calendar", "clock__job", "clock__brand__owner",
        "clock__test_clock", "assignee__user")


def date_of(members: dict[str, Member], date_id: int) -> Occurrence:
    occurrence = dates_of(members).filter(pk=date_id).first()
    if occurrence is None:
        raise Http404("no such date")
    return occurrence


def subject_of(members: dict[str, Member], subject_id: str) -> Subject:
    subject = Subject.objects.filter(brand_id__in=list(members), pk=subject_id).select_related(
        "brand", "test_clock").first()
    if subject is None:
        raise Http404("no such subject")
    return subject


def action_of(members: dict[str, Member], record_id: str) -> tuple[Record, Member, Occurrence]:
    """An action (an undoable record) on a date of the person's brands, their membership
    there (a viewer hears 403) and its date; 404 for any other record. Whether it was the
    person's own is `undo`'s to say (`only_by`), in words."""
    entry = Record.objects.filter(brand_id__in=list(members), pk=record_id).first()
    if entry is None:
        raise Http404("no such action")
    member = acting(members, entry.brand_id)
    if not undo.undoable(entry):
        raise Http404("no such action")
    return entry, member, date_of(members, entry.data["occurrence"])


def who(request) -> str:
    """The person as records name them (as the API names a person)."""
    return records.person(request.user)
