"""The controls on a date (S25): mark done, choose, acknowledge, assign, each through the same
function as the API (`clocks.mark_done`, `clocks.choose` → the gate, `clocks.acknowledge`,
`clocks.assign`).

Without JavaScript a control posts, and the person is sent back to the page it was on with a
message saying what happened (or why not). With htmx the answer is the date's row, re-rendered
in place with the same message. A refusal is said in words, never a 500; a viewer's post
answers 403 and a stranger's 404.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from timekeeping import clocks
from timekeeping.access import once
from timekeeping.basics import refusals, wallclock
from timekeeping.clocks import dates, undo
from timekeeping.console import forms
from timekeeping.console.access import back_to, brand_of, by
from timekeeping.console.shown import face_of
from timekeeping.jobs import tasks
from timekeeping.models import Brand, Clock, Member, Occurrence, Record
from timekeeping.timers import records
from timekeeping.web.pages import ask_first, confirmed


@dataclass(frozen=True)
class Said:
    text: str
    ok: bool
    undo: undo.Offer | None = None  # the Undo a page offers after it (issue 27)


def _done(occurrence: Occurrence, data: dict, who: str, brand: Brand) -> Said:
    try:
        entry = clocks.mark_done(occurrence, by=who)
    except clocks.OrderRefused as refused:
        return Said(f"Not marked done: {refused.message}.", False)
    return Said(f"Marked done: {_what(occurrence)}.", True, undo.offer(entry))


def _choose(occurrence: Occurrence, data: dict, who: str, brand: Brand) -> Said:
    try:
        outcome = clocks.choose(occurrence, data["choice"], by=who)
    except clocks.OrderRefused as refused:
        return Said(f"Not chosen: {refused.message}.", False)
    if not outcome.committed:
        return Said(refusals.gate(outcome.code).said(f"Couldn't choose {data['choice']}"), False)
    return Said(f"Chosen: {outcome.describe()}.", True,
                undo.offer(Record.objects.filter(pk=outcome.record).first()))


def _acknowledge(occurrence: Occurrence, data: dict, who: str, brand: Brand) -> Said:
    entry = clocks.acknowledge(occurrence, by=who)
    if entry is None:
        return Said(f"Already acknowledged: {_what(occurrence)}.", True)
    return Said(f"Acknowledged: {_what(occurrence)}.", True, undo.offer(entry))


def _assign(occurrence: Occurrence, data: dict, who: str, brand: Brand) -> Said:
    member = assignee(brand, data["member"])
    if member is None and data["member"]:
        return Said("Not assigned: Assign to: choose one of the people of "
                    f"{brand.name}, or nobody.", False)
    name = member.name if member else "nobody"
    if occurrence.assignee_id == (member.pk if member else None):
        return Said(f"Already assigned to {name}: {_what(occurrence)}.", True)
    entry = clocks.assign(occurrence, member, by=who)
    return Said(f"Assigned to {name}: {_what(occurrence)}.", True, undo.offer(entry))


def assignee(brand: Brand, value: str) -> Member | None:
    """Whom an Assign names: a member of the brand, or its owner (`owner`: their membership,
    made now if they have none, as when they take a task); None for nobody or a stranger."""
    if value == OWNER:
        return tasks.member_of(brand.pk, brand.owner) if brand.owner_id else None
    return Member.objects.select_related("user").filter(brand=brand, pk=value).first() \
        if value else None


Act = Callable[[Occurrence, dict, str, Brand], Said]
CONTROLS: dict[str, tuple[type[forms.DateForm], Act]] = {
    "done": (forms.DateForm, _done),
    "choose": (forms.ChooseForm, _choose),
    "acknowledge": (forms.DateForm, _acknowledge),
    "assign": (forms.AssignForm, _assign),
}


# The controls that ask first (issue 27), and what the person is told they do.
ASK_FIRST = {"done": "Its reminders stop, it leaves the dates at risk, and the record says who "
                     "marked it done."}


def _what(occurrence: Occurrence) -> str:
    return occurrence.clock.title + (f", {occurrence.item}" if occurrence.item else "")


def _occurrence(row: Clock, item: str) -> Occurrence | None:
    """The date a control acts on: the clock's latest coming of the item (as the API finds
    it)."""
    return Occurrence.objects.filter(clock=row, item=item).order_by("-seq").select_related(
        "clock", "clock__job", "clock__subject", "clock__brand", "clock__test_clock").first()


@login_required
@require_POST
def control(request, brand_id: str, clock_id: str, *, verb: str):
    brand = brand_of(request, brand_id, at_least="manager")
    row = Clock.objects.filter(brand=brand, pk=clock_id).first()
    if row is None:
        raise Http404("no such clock")
    form_class, act = CONTROLS[verb]
    form = form_class(request.POST)
    occurrence = None
    if not form.is_valid():
        named = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in form.errors.items())
        said = Said(f"Nothing was done: {named.rstrip('.')}.", False)
    else:
        occurrence = _occurrence(row, form.cleaned_data["item"])
        if occurrence is not None and verb in ASK_FIRST and not confirmed(request):
            return ask_first(request, question=f"Mark {_what(occurrence)} done?",
                             consequence=ASK_FIRST[verb], yes="Yes, mark it done",
                             back=back_to(request, brand))
        if occurrence is None:
            said = Said(f"Nothing was done: clock {row.pk} has no item "
                        f"{form.cleaned_data['item']!r}.", False)
        elif not once.spend(request):
            said = Said(once.ALREADY, True)
        else:
            said = act(occurrence, form.cleaned_data, by(request), brand)
    return _answer(request, brand, occurrence, said)


@login_required
@require_POST
def undo_control(request, brand_id: str, record_id: str):
    """The Undo a control offered: the owner and managers undo any action on the brand's
    dates (the API's roles)."""
    brand = brand_of(request, brand_id, at_least="manager")
    entry = Record.objects.filter(brand=brand, pk=record_id).first()
    if entry is None or not undo.undoable(entry):
        raise Http404("no such action")
    occurrence = Occurrence.objects.filter(pk=entry.data["occurrence"]).select_related(
        "clock", "clock__job", "clock__subject", "clock__brand", "clock__test_clock").first()
    return _answer(request, brand, occurrence, undone(request, brand, entry, only_by=None))


def undone(request, brand: Brand, entry: Record, *, only_by: str | None) -> Said:
    """Undo `entry` for a page, in words: what was undone, or why not."""
    if not once.spend(request):
        return Said(once.ALREADY, True)
    try:
        undo.undo(brand, entry.pk, by=records.person(request.user), only_by=only_by)
    except undo.UndoRefused as refused:
        return Said(f"Not undone: {refused.message}.", False)
    return Said(f"Undone: {UNDONE.get(entry.kind, 'the action')} on "
                f"{entry.data.get('name', 'the date')}"
                f"{', ' + entry.data['item'] if entry.data.get('item') else ''}.", True)


UNDONE = {"clock.satisfied": "marking it done", "clock.acknowledged": "the acknowledgement",
          "clock.chosen": "the choice", "clock.assigned": "the assignment"}


def _answer(request, brand: Brand, occurrence: Occurrence | None, said: Said):
    if request.htmx and occurrence is not None:
        return render(request, "console/_date_row.html", row_context(request, brand,
                                                                     occurrence, said))
    (messages.success if said.ok else messages.error)(request, said.text)
    if said.undo is not None:
        offer_undo(request, said.undo, reverse("console:undo", args=[brand.pk,
                                                                       said.undo.record]))
    if request.htmx:  # no row to put it in: the whole page, with the message
        return HttpResponseClientRedirect(back_to(request, brand))
    return redirect(back_to(request, brand))


def row_context(request, brand: Brand, occurrence: Occurrence, said: Said) -> dict:
    """The date's row as the page shows it, after the control: still open (its line), or
    settled (then only what was said)."""
    lines = dates.coming_up([occurrence.clock.subject])
    line = next((each for each in lines if each.occurrence.pk == occurrence.pk), None)
    return {"brand": brand, "line": line, "said": said, "occurrence": occurrence,
            "members": members(brand), "face": face_of(brand, wallclock.wall_now(), request),
            "next": back_to(request, brand), "can_act": True,
            "window": undo.UNDO_WINDOW_WORDS,
            "undo_action": reverse("console:undo", args=[brand.pk, said.undo.record])
            if said.undo else ""}


OWNER = "owner"  # the Assign value that names the brand's owner who is not yet a member


@dataclass(frozen=True)
class Person:
    id: str  # a member's id, or OWNER
    name: str


def members(brand: Brand) -> list[Person]:
    """Whom a date can be assigned to: every member of the brand, and its owner by name
    whether or not they hold a membership yet (one query, the owner read with the brand)."""
    return people([brand])[brand.pk]


def people(brands: list[Brand]) -> dict[str, list[Person]]:
    """`members` for several brands at once, by brand id, in one query (the delivery portal
    lists the dates of all the person's brands; read their owners with them)."""
    found: dict[str, list[Member]] = {brand.pk: [] for brand in brands}
    for member in Member.objects.filter(brand__in=list(found)).select_related("user").order_by(
            "user__username"):
        found[member.brand_id].append(member)
    return {brand.pk: _people(brand, found[brand.pk]) for brand in brands}


def _people(brand: Brand, found: list[Member]) -> list[Person]:
    listed = [Person(member.pk, f"{member.name} ({member.role})") for member in found]
    if brand.owner_id and all(member.user_id != brand.owner_id for member in found):
        listed.insert(0, Person(OWNER, f"{_name(brand.owner)} (owner)"))
    return listed


def _name(user) -> str:
    return user.get_full_name() or user.get_username()


def offer_undo(request, offered: undo.Offer, action: str) -> None:
    """Without JavaScript the Undo rides to the next page (`{% undo_offered %}` shows it
    once); `action` is the area's undo address."""
    request.session[OFFERED] = {"record": offered.record, "action": action}


OFFERED = "undo_offered"
