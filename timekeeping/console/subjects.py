"""Subjects in the console (S25): the list (`roster`: next date, at risk, open jobs, who
answers; sorted, filtered, 50 a page, one world at a time) and a subject's page: its
calendar (the API's lines), its jobs and clocks with their open dates and controls, its history,
its feed link (rotatable), the invitation of its contact as a customer, and erasing its
personal data (its owner only; issue 31)."""

from __future__ import annotations

import re

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from timekeeping import clocks
from timekeeping.access import invitations
from timekeeping.attention import lists
from timekeeping.basics import instants, shown, wallclock
from timekeeping.clocks import dates, history, stewards, subject_calendar
from timekeeping.clocks.exposure import minor_units
from timekeeping.console import forms, roster, test_mode
from timekeeping.console.access import brand_of, may
from timekeeping.console.controls import members
from timekeeping.console.shown import face_of
from timekeeping.jobs import lifecycle
from timekeeping.models import Brand, Clock, Invitation, Job, Subject, Subscription
from timekeeping.recurring import dunning, plans
from timekeeping.subjects import erasing
from timekeeping.timers import records
from timekeeping.web.pages import ask_first, confirmed

PER_PAGE = 50
KINDS_SHOWN = 50
HISTORY_PAGE = 50


@login_required
def subject_list(request, brand_id: str):
    brand = brand_of(request, brand_id)
    world = test_mode.world_of(request, brand)
    now, ask = wallclock.wall_now(), roster.Ask.of(request.GET)
    listed = roster.Roster(brand, now=now, world=world, ask=ask)
    page, rows = listed.page(request.GET.get("page"))
    face = face_of(brand, now, request)
    kinds = (Subject.objects.filter(brand=brand, test_clock=world).order_by("kind")
             .values_list("kind", flat=True).distinct()[:KINDS_SHOWN])
    return render(request, "console/subjects.html", {
        "brand": brand, "face": face, "ask": ask, "world": world, "kinds": list(kinds),
        "members": members(brand), "sorts": roster.SORTS, "statuses": roster.STATUSES,
        "page": page, "filtered": bool(ask.q or ask.kind or ask.status or ask.owner),
        "rows": [{"row": row, "next": face.at(row.next_due, now=listed.now)} for row in rows]})


def _subject(brand: Brand, subject_id: str) -> Subject:
    found = Subject.objects.select_related("brand__calendar", "test_clock").filter(
        brand=brand, pk=subject_id).first()
    if found is None:
        raise Http404("no such subject")
    return found


# The calendar's lines are the API's (docs/api.md); the page says them in the owner's words.
CALENDAR_KINDS = {"hard": "fixed date", "clock": "date"}
CALENDAR_WORDS = ((re.compile(r"\blapsed\b"), "missed"), (re.compile(r"\bkept\b"), "done"),
                  (re.compile(r"\d{4}-\d{2}-\d{2}"), lambda found: shown.day_of(found[0])))


def _said(line: subject_calendar.Line, brand: Brand) -> dict:
    status = line.status
    for pattern, words in CALENDAR_WORDS:
        status = pattern.sub(words, status)
    answers = line.answers_for
    return {"date": line.date, "what": line.what, "status": status,
            "kind": CALENDAR_KINDS.get(line.kind, line.kind.replace("_", " ")),
            "answers_for": brand.name if answers in ("of record", "the brand") else answers}


def _jobs(brand: Brand, subject: Subject) -> list[Job]:
    """The subject's latest jobs with their clocks; a date that outlives its job says who
    keeps it now (`kept_said`, S16)."""
    jobs = list(Job.objects.filter(brand=brand, subject=subject).prefetch_related(
        Prefetch("clocks", Clock.objects.filter(brand=brand))).order_by("-opened")[:PER_PAGE])
    kept = {each.clock.pk: _kept_said(each, subject) for each in stewards.between_jobs(subject)}
    for job in jobs:
        for row in job.clocks.all():
            row.kept_said = kept.get(row.pk, "")
    return jobs


def _kept_said(between: stewards.Between, subject: Subject) -> str:
    if between.kept_by == "steward":
        return (f"kept for the client between jobs by {between.keeper} "
                f"({shown.service(between.service)})")
    owner = (subject.owner_name or subject.name) if between.clock.owner == "buyer" \
        else subject.brand.name
    return f"kept by its owner, {owner}; no one keeps it for the client between jobs"


def _before(request):
    """The history's page: records before this instant (the last one shown), or the newest."""
    try:
        return instants.parse_instant(request.GET["before"], field="before")
    except (KeyError, ValueError):
        return None


def _page(request, brand: Brand, subject: Subject, invite: forms.InviteForm,
          status: int = 200):
    now = wallclock.wall_now()
    said = history.history(subject, limit=HISTORY_PAGE, before=_before(request))
    token, face = subject.feed_token, face_of(brand, now, request)
    world = subject.test_clock.frozen_time if subject.test_clock_id else now
    feed = f"{settings.SITE_URL}{subject_calendar.feed_path(subject)}?token={token}"
    sent = Invitation.objects.filter(brand=brand, subject=subject).order_by("-created")[:10]
    return render(request, "console/subject.html", {
        "brand": brand, "subject": subject, "face": face,
        "can_act": may(request, "manager"),
        "calendar": [_said(line, brand) for line in subject_calendar.lines(subject)],
        "zone": subject_calendar.zone_of_subject(subject),
        "world": face.at(world, now=world) if subject.test_clock_id else None,
        "jobs": _jobs(brand, subject),
        "open_dates": dates.coming_up([subject]), "members": members(brand),
        "plans": plans.of_subject(subject),
        "attention": [{"item": item, "at": face.at(item.at, now=world)}
                      for item in lists.of_subject(subject, now=now)],
        # A test clock's records are told against its own now.
        "history": [{"said": each, "at": face.at(each.at, now=world)} for each in said],
        "older": said[-1].at if len(said) == HISTORY_PAGE else None,
        "feed": feed, "webcal": "webcal://" + feed.split("://", 1)[-1],
        "invitations": [{"email": each.email, "accepted": each.accepted,
                         "accepted_at": face.at(each.accepted),
                         "expires_at": face.at(each.expires)} for each in sent],
        "invite": invite, "next": request.get_full_path(), "can_erase": may(request, "owner"),
        "erased": face.at(subject.erased),
        "erased_day": shown.day(subject.erased.astimezone(face.zone)) if subject.erased
        else ""}, status=status)


@login_required
def subject_page(request, brand_id: str, subject_id: str):
    brand = brand_of(request, brand_id)
    subject = _subject(brand, subject_id)
    return _page(request, brand, subject,
                 forms.InviteForm(initial={"email": subject.contact_email}))


@login_required
@require_POST
def rotate_feed(request, brand_id: str, subject_id: str):
    brand = brand_of(request, brand_id, at_least="manager")
    subject = _subject(brand, subject_id)
    if not confirmed(request):
        return ask_first(
            request, question=f"Make a new calendar link for {subject.name}?",
            consequence="Every calendar app subscribed to the old link stops getting these "
                        "dates; whoever uses it must add the new link again.",
            yes="Yes, make a new link",
            back=reverse("console:subject", args=[brand.pk, subject.pk]) + "#feed")
    try:
        subject_calendar.rotate_token(subject)
    except clocks.OrderRefused as refused:
        messages.error(request, f"No new link: {refused.said}.")
    else:
        messages.success(request, "The feed has a new link; the old link no longer works.")
    return redirect("console:subject", brand_id=brand.pk, subject_id=subject.pk)


ERASE_SAID = (
    "This cannot be undone. {name}'s name, key, contact and facts are deleted, with its "
    "invitations and its customers' access to it, and taken out of its history and of the "
    "emails about it. Its open jobs are cancelled and its plans end now: no reminder goes out "
    "for it again, and nothing new can be ordered for it. What stays is an anonymous record: "
    "its jobs, dates and history, under the name \u201cErased subject\u201d.")


@login_required
@require_POST
def erase(request, brand_id: str, subject_id: str):
    """Erase the subject's personal data, through the function the API's `POST
    /api/subjects/{id}/erase` calls: the brand's owner only, asked first in plain words (it
    cannot be undone); then the page says what was done."""
    brand = brand_of(request, brand_id, at_least="owner")
    subject = _subject(brand, subject_id)
    back = reverse("console:subject", args=[brand.pk, subject.pk])
    if subject.erased is None and not confirmed(request):
        return ask_first(request, question=f"Erase {subject.name}'s personal data for good?",
                         consequence=ERASE_SAID.format(name=subject.name),
                         yes=f"Yes, erase {subject.name}", back=back + "#erase")
    try:
        done = erasing.erase(subject, by=records.person(request.user))
    except erasing.SubjectErased as already:
        messages.error(request, f"Not erased: {already.said}")
    else:
        messages.success(request, _erased_said(done))
    return redirect(back)


def _erased_said(done: erasing.Erased) -> str:
    """What an erasure did, in the owner's words."""
    ended = [said for count, one, many in (
        (done.jobs, "open job cancelled", "open jobs cancelled"),
        (done.plans, "plan ended", "plans ended"),
        (done.dates, "date closed with its reminders", "dates closed with their reminders"),
        (done.emails, "unsent email dropped", "unsent emails dropped"),
        (done.invitations, "invitation deleted", "invitations deleted"),
        (done.customers, "customer no longer sees it", "customers no longer see it"),
        (done.accounts, "customer account with nothing else deleted",
         "customer accounts with nothing else deleted")) if count
        for said in [f"{count} {one if count == 1 else many}"]]
    history = (f" {done.records} entries of its history no longer name anyone."
               if done.records else "")
    return ("Erased: its name, key, contact and facts are gone"
            + (f"; {', '.join(ended)}" if ended else "") + "." + history
            + " Its jobs, dates and history stay, without personal data.")


@login_required
@require_POST
def invite(request, brand_id: str, subject_id: str):
    brand = brand_of(request, brand_id, at_least="manager")
    subject = _subject(brand, subject_id)
    form = forms.InviteForm(request.POST)
    if form.is_valid():
        try:
            made = invitations.invite(subject=subject, email=form.cleaned_data["email"],
                                      by=request.user, now=wallclock.wall_now())
        except invitations.InvitationRefused as refused:
            form.add_error("email" if refused.field == "email" else None, refused.message)
        else:
            to = ("the brand's owner (the subject lives in a test world)"
                  if subject.test_clock_id else made.email)
            messages.success(request, f"Invitation for {made.email} sent to {to}; its link "
                                      "works for 7 days, once.")
            return redirect("console:subject", brand_id=brand.pk, subject_id=subject.pk)
    return _page(request, brand, subject, form, status=400)


def _on_subject(model, subject: Subject, pk: str, what: str):
    """A job or a plan of `subject`, else 404."""
    found = model.objects.filter(subject=subject, pk=pk).select_related(
        "brand", "subject", "test_clock").first()
    if found is None:
        raise Http404(f"no such {what}")
    return found


@login_required
@require_POST
def end_job(request, brand_id: str, subject_id: str, job_id: str):
    """End a job (S16), through the function the API's `POST /api/jobs/{id}/end` calls: its
    dates that live on the subject stay open in their owner's hands."""
    brand = brand_of(request, brand_id, at_least="manager")
    subject = _subject(brand, subject_id)
    job = _on_subject(Job, subject, job_id, "job")
    try:
        lifecycle.end(job, by=records.person(request.user))
    except clocks.OrderRefused as refused:
        messages.error(request, f"Not ended: {refused.message}. Reload the page to see the "
                                "job as it stands now.")
    else:
        messages.success(request, f"Ended: {shown.service(job.service)} {job.period}. Its dates "
                                  "that live on the subject stay open.")
    return redirect("console:subject", brand_id=brand.pk, subject_id=subject.pk)


@login_required
@require_POST
def record_payment(request, brand_id: str, subject_id: str, subscription_id: str):
    """Record a payment received toward a plan's charges, through the function the API's
    `POST /api/subscriptions/{id}/payments` calls. The amount is typed as money ("198.00"),
    read exactly into minor units."""
    brand = brand_of(request, brand_id, at_least="manager")
    subject = _subject(brand, subject_id)
    found = _on_subject(Subscription, subject, subscription_id, "plan")
    currency = dunning.currency_of(found)
    amount = minor_units(request.POST.get("amount", ""), currency)
    try:
        if amount is None:
            raise dunning.PaymentRefused("amount", f"write the amount received in {currency}, "
                                                   "such as 198.00")
        paid = dunning.pay(found, amount=amount, currency=currency,
                           by=records.person(request.user))
    except dunning.PaymentRefused as refused:
        messages.error(request, f"Not recorded: {refused.message}.")
    else:
        left = ("; it is paid up" if not dunning.owed(paid) else
                f"; {dunning.shown_owed(paid)} still owed")
        messages.success(request, f"Recorded: {shown.money(amount, currency)} on the "
                                  f"{shown.plan(found.service)}{left}.")
    return redirect("console:subject", brand_id=brand.pk, subject_id=subject.pk)
