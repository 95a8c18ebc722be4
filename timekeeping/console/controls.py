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
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from timekeeping import clock, clocks, dates
from timekeeping.console import forms
from timekeeping.console.access import back_to, brand_of, by
from timekeeping.console.shown import face_of
from timekeeping.models import Brand, Clock, Member, Occurrence
from timekeeping.pages import ask_first, confirmed

# The gate's refusal codes, in words (docs/console.md).
REFUSALS = {
    "job_closed": "the job is closed",
    "step_unknown": "the Service has no such step",
    "item_unknown": "the job has no such item",
    "date_passed": "a hard date has passed",
    "needs_grant": "it needs a grant",
    "period_taken": "the period is taken",
}


@dataclass(frozen=True)
class Said:
    text: str
    ok: bool


def refusal_words(code: str) -> str:
    return REFUSALS.get(code, code.replace("_", " "))


def _done(occurrence: Occurrence, data: dict, who: str, brand: Brand) -> Said:
    try:
        clocks.mark_done(occurrence, by=who)
    except clocks.OrderRefused as refused:
        return Said(f"Not marked done: {refused.message}.", False)
    return Said(f"Marked done: {_what(occurrence)}.", True)


def _choose(occurrence: Occurrence, data: dict, who: str, brand: Brand) -> Said:
    try:
        outcome = clocks.choose(occurrence, data["choice"], by=who)
    except clocks.OrderRefused as refused:
        return Said(f"Not chosen: {refused.message}.", False)
    if not outcome.committed:
        return Said(f"'{outcome.step}' was refused: {refusal_words(outcome.code)} "
                    f"({outcome.code}). {outcome.reason[:1].upper()}{outcome.reason[1:]}.", False)
    return Said(f"Chosen: {outcome.describe()}.", True)


def _acknowledge(occurrence: Occurrence, data: dict, who: str, brand: Brand) -> Said:
    clocks.acknowledge(occurrence, by=who)
    return Said(f"Acknowledged: {_what(occurrence)}.", True)


def _assign(occurrence: Occurrence, data: dict, who: str, brand: Brand) -> Said:
    member = Member.objects.select_related("user").filter(brand=brand,
                                                          pk=data["member"]).first()
    if member is None:
        return Said(f"Not assigned: no member {data['member']!r} of {brand.name}.", False)
    clocks.assign(occurrence, member, by=who)
    return Said(f"Assigned to {member.user.get_username()}: {_what(occurrence)}.", True)


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
        said = (act(occurrence, form.cleaned_data, by(request), brand) if occurrence else
                Said(f"Nothing was done: clock {row.pk} has no item "
                     f"{form.cleaned_data['item']!r}.", False))
    return _answer(request, brand, occurrence, said)


def _answer(request, brand: Brand, occurrence: Occurrence | None, said: Said):
    if request.htmx and occurrence is not None:
        return render(request, "console/_date_row.html", row_context(request, brand,
                                                                     occurrence, said))
    (messages.success if said.ok else messages.error)(request, said.text)
    if request.htmx:  # no row to put it in: the whole page, with the message
        return HttpResponseClientRedirect(back_to(request, brand))
    return redirect(back_to(request, brand))


def row_context(request, brand: Brand, occurrence: Occurrence, said: Said) -> dict:
    """The date's row as the page shows it, after the control: still open (its line), or
    settled (then only what was said)."""
    lines = dates.coming_up([occurrence.clock.subject])
    line = next((each for each in lines if each.occurrence.pk == occurrence.pk), None)
    return {"brand": brand, "line": line, "said": said, "occurrence": occurrence,
            "members": members(brand), "face": face_of(brand, clock.wall_now()),
            "next": back_to(request, brand), "can_act": True}


def members(brand: Brand) -> list[Member]:
    """Whom a date can be assigned to: the brand's members (one query)."""
    return list(Member.objects.filter(brand=brand).select_related("user").order_by(
        "user__username"))
