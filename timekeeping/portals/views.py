"""The customer portal (S25, D3): a customer sees their subjects' dates and acts on their own.
Views stay thin: they scope to the customer's subjects (404 otherwise, 403 for a date the
brand answers for), call the same functions as the API, and render. A control answers htmx
with its row re-rendered in place, and a plain form post with a message and a redirect."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import BadRequest
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from calendars.moments import day_in_zone
from timekeeping import clocks
from timekeeping.access import once
from timekeeping.basics import shown, wallclock
from timekeeping.clocks import stewards as keeping
from timekeeping.clocks import subject_calendar
from timekeeping.models import Ask, Occurrence, Subscription
from timekeeping.portals import controls, paying, record, rows, serving, stewards
from timekeeping.portals.access import (
    action_of,
    customer_only,
    date_of,
    subject_of,
    subjects_of,
    who,
)
from timekeeping.portals.subscribe import feed_of
from timekeeping.recurring import plans
from timekeeping.web.pages import ask_first, confirmed

ROWS_PER_PAGE = 100
# What the person is told before a control that is hard to undo (issue 27).
OLD_LINKS_STOP = ("Every calendar app subscribed to the old link stops getting these dates; "
                  "you will add the new link to each of them again.")
DONE_STOPS = "Its reminders stop and it leaves your open dates."


ASKED_SHOWN = 20


@login_required
def home(request):
    """What the customer's subjects need from them and what is done for them: live first,
    then what lives on a practice clock, under its banner (`serving.home`)."""
    customer_only(request)
    subjects = list(subjects_of(request).select_related("test_clock").order_by("name", "pk"))
    reading = shown.reading_zone(request)
    worlds = serving.home(subjects, reading=reading)
    for world in worlds:
        world.page = Paginator(world.rows, ROWS_PER_PAGE).get_page(
            request.GET.get("practice_page" if world.practice else "page"))
    return render(request, "portal/home.html", {"subjects": subjects, "worlds": worlds,
                                                "reading": reading})


@login_required
def subject(request, subject_id: str):
    found = subject_of(request, subject_id)
    try:
        before = record.parse_before(request.GET.get("before"))
    except ValueError as error:
        raise BadRequest(str(error)) from None
    zone = subject_calendar.zone_of_subject(found)
    today = day_in_zone(wallclock.now(brand=found.brand, test_clock=found.test_clock), zone)
    reading = shown.reading_zone(request)  # the zone the person reads times in, if chosen
    return render(request, "portal/subject.html", {
        "ahead": subject_calendar.ahead(found, today=today), "reading": reading,
        "subject": found, "zone": reading or zone, "subject_zone": zone,
        "rows": rows.coming_up([found], reading=reading),
        # What the brand asks of the subject's people by a link (docs/jobs.md): the link
        # itself reached them by email; the page says what and until when.
        "asked": list(Ask.objects.filter(brand_id=found.brand_id, subject=found,
                                         state=Ask.State.OPEN)
                      .order_by("expires")[:ASKED_SHOWN]),
        "plans": plans.of_subject(found),
        # Its dates between jobs, who keeps each, and the offer to keep them (S16).
        "between": keeping.between_jobs(found), "offer": stewards.offer_of(found),
        "history": record.page(found, before=before, zone=reading or zone),
        "feed": feed_of(found)})


@login_required
def calendar(request, subject_id: str):
    """The feed's .ics as a download: the same file calendar apps fetch."""
    found = subject_of(request, subject_id)
    body = subject_calendar.feed(found, stamp=wallclock.wall_now())
    return HttpResponse(body, content_type="text/calendar; charset=utf-8", headers={
        "Content-Disposition": f'attachment; filename="{found.pk}.ics"'})


def _plan_of(request, subscription_id: str) -> Subscription:
    """A plan of the customer's subjects, or 404 (another's answers as one that is not)."""
    found = Subscription.objects.filter(
        pk=subscription_id, subject__in=subjects_of(request)).select_related(
        "brand", "test_clock", "subject__brand__calendar", "subject__test_clock").first()
    if found is None:
        raise Http404("no such plan")
    return found


def stops_said(plan: Subscription) -> str:
    ends = shown.day(plans.renews_on(plan, (plan.ends_after or plan.cycle) + 1))
    return (f"Your {shown.plan(plan.service)} stops on {ends}; you keep it until then; you can "
            "resume it until then.")


@login_required
@require_POST
def cancel_plan(request, subscription_id: str):
    """Cancel a plan at the end of its cycle, through the function the API calls."""
    found = _plan_of(request, subscription_id)
    if found.ends_after is None and not confirmed(request):
        return ask_first(
            request, question=f"Cancel your {shown.plan(found.service)} at the end of this cycle?",
            consequence=f"It ends on {shown.day(plans.renews_on(found, found.cycle + 1))} and "
                        "does not renew: no new cycle is charged, and the work it would have "
                        "started does not start. You keep it until then, and you can resume "
                        "it until then.", yes="Yes, cancel at the cycle's end",
            back=_back(request, reverse("portal:subject", args=[found.subject_id])))
    if not once.spend(request):
        return _plan_answer(request, found, controls.Said(True, once.ALREADY))
    if found.ends_after is None:
        found = plans.cancel_at_cycle_end(found, by=who(request))
    return _plan_answer(request, found, controls.Said(True, stops_said(found)))


@login_required
@require_POST
def resume_plan(request, subscription_id: str):
    """Undo a cancel at the cycle's end, before the cycle ends (`plans.resume`, as the API)."""
    found = _plan_of(request, subscription_id)
    if not once.spend(request):
        return _plan_answer(request, found, controls.Said(True, once.ALREADY))
    try:
        found = plans.resume(found, by=who(request))
    except clocks.OrderRefused as refused:
        said = controls.Said(False, f"Not resumed: {refused.message}.")
        return _plan_answer(request, found, said)
    return _plan_answer(request, found, controls.Said(True, resumed_said(found)))


def resumed_said(plan: Subscription) -> str:
    spec = plans.plan_of(plan)
    renews = shown.day(plans.renews_on(plan, plan.cycle + 1))
    charge = (f"; the next charge is {shown.money(spec.amount, spec.currency)} on {renews}"
              if spec.amount else "")
    return f"Resumed: your {shown.plan(plan.service)} renews on {renews}{charge}."


def _plan_answer(request, plan: Subscription, said: controls.Said):
    if request.htmx:
        found = paying.plans_of([plan.subject]).get(plan.subject_id, [])
        return render(request, "portal/_plan.html", {
            "plan": next((each for each in found if each.subscription.pk == plan.pk), None),
            "gone": plan, "said": said})
    (messages.success if said.ok else messages.error)(request, said.text)
    return redirect(_back(request, reverse("portal:subject", args=[plan.subject_id])))


def _back(request, default: str) -> str:
    """The portal page a form came from (`next`), when it is one; else `default`. Only a
    portal path: any other text ("x") would be read by `redirect` as a view's name, and a
    page elsewhere is none of a customer's."""
    back = request.POST.get("next", "")
    if back.startswith("/portal/") and url_has_allowed_host_and_scheme(
            back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return back
    return default


@login_required
@require_POST
def feed_token(request, subject_id: str):
    found = subject_of(request, subject_id)
    if not confirmed(request):
        return ask_first(request, question="Make a new calendar link?",
                         consequence=OLD_LINKS_STOP, yes="Yes, make a new link",
                         back=reverse("portal:subject", args=[found.pk]) + "#subscribe")
    said = NEW_LINK
    if once.spend(request):
        subject_calendar.rotate_token(found)
    else:
        said = once.ALREADY
    if request.htmx:
        return render(request, "portal/_subscribe.html", {"subject": found, "said": said,
                                                          "feed": feed_of(found)})
    messages.success(request, said)
    return redirect("portal:subject", subject_id=found.pk)


NEW_LINK = "A new calendar link: the old one no longer works."


@login_required
@require_POST
def keep_with_us(request, subject_id: str):
    """Order the brand's steward service for the subject (S16), once the customer said yes
    to its price; as the API orders a job (`clocks.order`)."""
    found = subject_of(request, subject_id)
    offer = stewards.offer_of(found)
    if offer is not None and not confirmed(request):
        cost = f"It costs {offer.price}, once. " if offer.price else "It costs nothing. "
        return ask_first(
            request, question=f"Keep {found.name}'s dates with {found.brand.name}?",
            consequence=f"{cost}{found.brand.name} then keeps the dates that outlive the work "
                        "for you, and hears of each one before it comes.",
            yes="Yes, keep them with you",
            back=reverse("portal:subject", args=[found.pk]) + "#between")
    said = (stewards.keep_with_us(found, by=who(request)) if once.spend(request)
            else controls.Said(True, once.ALREADY))
    (messages.success if said.ok else messages.error)(request, said.text)
    return redirect(reverse("portal:subject", args=[found.pk]) + "#between")


@login_required
@require_POST
def acknowledge(request, clock_id: str):
    occurrence = date_of(request, clock_id, request.POST.get("item", ""))
    if not once.spend(request):
        return _answer(request, occurrence, controls.Said(True, once.ALREADY))
    return _answer(request, occurrence, controls.acknowledge(occurrence, by=who(request)))


@login_required
@require_POST
def done(request, clock_id: str):
    occurrence = date_of(request, clock_id, request.POST.get("item", ""))
    if not confirmed(request):
        return ask_first(request, question=f"Mark {occurrence.clock.title} done?",
                         consequence=DONE_STOPS, yes="Yes, mark it done",
                         back=reverse("portal:subject", args=[occurrence.clock.subject_id]))
    if not once.spend(request):
        return _answer(request, occurrence, controls.Said(True, once.ALREADY))
    return _answer(request, occurrence, controls.mark_done(occurrence, by=who(request)))


@login_required
@require_POST
def choose(request, clock_id: str):
    occurrence = date_of(request, clock_id, request.POST.get("item", ""))
    if not once.spend(request):
        return _answer(request, occurrence, controls.Said(True, once.ALREADY))
    said = controls.choose(occurrence, request.POST.get("choice", ""), by=who(request))
    return _answer(request, occurrence, said)


@login_required
@require_POST
def undo(request, record_id: str):
    """The Undo an action offered: the customer's own action on their own date, for
    `undo.UNDO_WINDOW` (docs/portal.md)."""
    entry, found, occurrence = action_of(request, record_id)
    return _answer(request, occurrence, controls.undone(request, found.brand, entry,
                                                        by=who(request)))


UNDO = "portal:undo"


def _answer(request, occurrence: Occurrence, said: controls.Said):
    back = _back(request, reverse("portal:subject", args=[occurrence.clock.subject_id]))
    if request.htmx:
        return render(request, "portal/_row.html", {
            "row": rows.row_of(occurrence), "gone": occurrence, "said": said,
            **controls.undo_context(request, said, UNDO, back)})
    (messages.success if said.ok else messages.error)(request, said.text)
    controls.offer(request, said, UNDO)
    return redirect(back)
