"""The delivery portal (issue 12): a brand's member sees the open and held tasks of their
brands and the dates assigned to them, and acts on them. Views stay thin: they scope to the
person's memberships (404 otherwise, 403 for a viewer's control), call the engine, and render.
A control answers htmx with its row re-rendered in place, and a plain form post with a message
and a redirect back to /delivery/. Each form carries a one-time token (a second post changes
nothing); a date's Mark done, Acknowledge, Choose and Assign offer their Undo (docs/delivery.md).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from timekeeping.access import once
from timekeeping.basics import shown
from timekeeping.delivery import controls, rows
from timekeeping.delivery.access import (
    acting,
    action_of,
    date_of,
    may_act,
    members_of,
    subject_of,
    task_of,
    who,
)
from timekeeping.jobs import lifecycle, standby
from timekeeping.models import Member, Occurrence
from timekeeping.portals import controls as date_controls
from timekeeping.portals.controls import Said
from timekeeping.web.pages import ask_first, confirmed


@login_required
def home(request):
    members = members_of(request)
    worlds, reading = rows.nows(members), shown.reading_zone(request)
    return render(request, "delivery/home.html", {
        **rows.apart(rows.tasks(members, worlds), rows.dates(members, worlds),
                     reading=reading), "reading": reading,
        "leaving": rows.leaving(members, request.user), "limit": rows.LIMIT,
        "seasons": standby.seasons_of(members),
        "acts": any(may_act(member) for member in members.values())})


@login_required
@require_POST
def task_control(request, task_id: str, *, verb: str):
    members = members_of(request)
    task = task_of(members, task_id)
    member = acting(members, task.brand_id)
    if once.spend(request):
        said = controls.act(verb, task, member, zone=rows.zone_of(task.subject))
    else:
        said = Said(True, once.ALREADY)
    if request.htmx:
        fresh = task_of(members, task.pk)
        return render(request, "delivery/_task.html", {"row": rows.task_row(fresh, member),
                                                       "gone": fresh, "said": said})
    return _back(request, said)


DATE_VERBS = {
    "acknowledge": lambda occurrence, post, by: date_controls.acknowledge(occurrence, by=by),
    "done": lambda occurrence, post, by: date_controls.mark_done(occurrence, by=by),
    "choose": lambda occurrence, post, by: date_controls.choose(
        occurrence, post.get("choice", ""), by=by),
    "assign": lambda occurrence, post, by: controls.assign(
        occurrence, post.get("member", "")[:48], by=by),
}
UNDO = "delivery:undo"


@login_required
@require_POST
def date_control(request, date_id: int, *, verb: str):
    members = members_of(request)
    occurrence = date_of(members, date_id)
    member = acting(members, occurrence.brand_id)
    if verb == "done" and not confirmed(request):  # hard to restore: asked first (issue 27)
        return ask_first(request, question=f"Mark {_what(occurrence)} done?",
                         consequence="Its reminders stop and it leaves your dates; you can "
                                     "undo it for 15 minutes.",
                         yes="Yes, mark it done", back=reverse("delivery:home"))
    if occurrence.assignee_id != member.pk:
        said = Said(False, f"Nothing was done: {_what(occurrence)} is no longer assigned to "
                           "you.")
    elif not once.spend(request):
        said = Said(True, once.ALREADY)
    else:
        said = DATE_VERBS[verb](occurrence, request.POST, who(request))
    return _date_answer(request, members, member, occurrence, said)


@login_required
@require_POST
def undo(request, record_id: str):
    """The Undo a date's control offered: the person's own action, at a brand they act at
    (a viewer hears 403), for `undo.UNDO_WINDOW`."""
    members = members_of(request)
    entry, member, occurrence = action_of(members, record_id)
    said = date_controls.undone(request, occurrence.clock.brand, entry, by=who(request))
    return _date_answer(request, members, member, occurrence, said)


def _date_answer(request, members, member: Member, occurrence: Occurrence, said: Said):
    if request.htmx:
        return render(request, "delivery/_date.html", {
            "row": rows.date_row(date_of(members, occurrence.pk), member), "gone": occurrence,
            "said": said, **date_controls.undo_context(request, said, UNDO,
                                                      reverse("delivery:home"))})
    date_controls.offer(request, said, UNDO)
    return _back(request, said)


NO_SUCCESSOR = "none"  # the successor chosen when no one takes over: the seat lapses (S23)


@login_required
@require_POST
def withdraw(request):
    """Hand the person's open dates and held tasks on a subject to a successor, or with no
    one to take over (`NO_SUCCESSOR`), back to the brand, the lapse on the record."""
    members = members_of(request)
    subject_id = request.POST.get("subject", "")
    if not subject_id:
        if not any(may_act(member) for member in members.values()):
            raise PermissionDenied("a viewer reads; a manager or the owner withdraws")
        return _back(request, Said(False, "Not withdrawn: subject: choose the subject to "
                                          "withdraw from."))
    subject = subject_of(members, subject_id)
    member = acting(members, subject.brand_id)
    asked = request.POST.get("successor", "")
    successor = Member.objects.filter(brand_id__in=list(members), pk=asked).select_related(
        "user").first() if asked != NO_SUCCESSOR else None
    if successor is None and asked != NO_SUCCESSOR:
        return _back(request, Said(False, f"Not withdrawn from {subject.name}: successor: "
                                          f"choose a manager or the owner of "
                                          f"{subject.brand.name} to take over."))
    if not once.spend(request):
        return _back(request, Said(True, once.ALREADY))
    try:
        moved = lifecycle.withdraw(member, subject, successor, by=who(request))
    except lifecycle.WithdrawRefused as refused:
        return _back(request, Said(False, f"Not withdrawn from {subject.name}: "
                                          f"{refused.field}: {refused.message}."))
    handed = (f"{_count(moved['dates'], 'date')} and {_count(moved['tasks'], 'task')}")
    if successor is None:
        return _back(request, Said(True, f"Withdrawn from {subject.name}: {handed} went back "
                                         f"to {subject.brand.name}, whose owner has been "
                                         "told."))
    return _back(request, Said(True, f"Withdrawn from {subject.name}: {handed} passed to "
                                     f"{successor.user.get_username()}."))


def _back(request, said: Said):
    (messages.success if said.ok else messages.error)(request, said.text)
    return redirect("delivery:home")


def _what(occurrence: Occurrence) -> str:
    return occurrence.clock.title + (f", {occurrence.item}" if occurrence.item else "")


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
