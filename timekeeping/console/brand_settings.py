"""A brand's settings in the console (issue 27): one "Settings" entry in the navigation opens a
page listing the pages that set the brand up, each with a line saying what it is for; and the
"Sent emails" page, where the emails the brand's work sent are read (the outbox's email
deliveries of the brand), so the demo's terminal need not print them; and the brand's plan
(S24): what it runs live, and, for the owner, moving to another, a downgrade confirmed after
the page says what keeps the old plan and until when (`recurring.terms`, as the API does)."""

from __future__ import annotations

from dataclasses import dataclass

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from timekeeping.basics import wallclock
from timekeeping.console.access import brand_of, by, may
from timekeeping.console.shown import face_of
from timekeeping.models import Delivery
from timekeeping.recurring import terms
from timekeeping.specs import tiers

PER_PAGE = 25
# What each delivery state is to the reader of the "Sent emails" page.
STATES = {Delivery.State.PENDING: "waiting to be sent", Delivery.State.RUNNING: "being sent",
          Delivery.State.SUCCEEDED: "sent", Delivery.State.FAILED: "could not be sent"}


@dataclass(frozen=True)
class Setting:
    name: str
    url: str
    said: str


def settings_of(request, brand) -> list[Setting]:
    """The brand's settings pages the person may open, each with what it is for."""
    found = [
        Setting("Postponements", reverse("console:postponements", args=[brand.pk]),
                "Relief notices (a storm, a holiday) that move dates for everyone they cover."),
        Setting("Standby", reverse("console:standby", args=[brand.pk]),
                "Who is offered new tasks first, in a busy season."),
        Setting("Test clocks", reverse("console:test-clocks", args=[brand.pk]),
                "Practice worlds with their own time, to try the year out before it happens."),
        Setting("Manifests", reverse("console:manifests", args=[brand.pk]),
                "The services, dates and reminders the brand keeps, as loaded from its "
                "manifest."),
        Setting("Plan", reverse("console:plan", args=[brand.pk]),
                 f"{brand.name} is on {terms.tier(brand.plan)}: what it runs, and moving to "
                 "another."),
        Setting("Your email digest", reverse("console:digest", args=[brand.pk]),
                "A daily or weekly email to you of this brand's dates at risk and what "
                "changed."),
    ]
    if may(request, "manager"):
        found.append(Setting("Sent emails", reverse("console:emails", args=[brand.pk]),
                             "Every email the brand's work sent or is about to send, to whom "
                             "and when."))
    if may(request, "owner"):
        found.append(Setting("API keys", reverse("console:keys", args=[brand.pk]),
                             "Keys that let a program use the brand's API."))
        found.append(Setting("Webhooks", reverse("console:webhooks", args=[brand.pk]),
                             "Tell your own systems what happens here as it happens, and see "
                             "what each was sent."))
        found.append(Setting("Download or delete", reverse("console:leave", args=[brand.pk]),
                             f"All of {brand.name}'s data in one file, and deleting the brand "
                             "(with 30 days to change your mind)."))
    return found


@login_required
def settings_page(request, brand_id: str):
    brand = brand_of(request, brand_id)
    return render(request, "console/settings.html", {
        "brand": brand, "settings": settings_of(request, brand)})


@login_required
def sent_emails(request, brand_id: str):
    """The brand's emails, newest first: to whom, the subject, when, whether it went; the
    body in a disclosure. A brand's owner and managers read them (they name customers)."""
    brand = brand_of(request, brand_id, at_least="manager")
    face = face_of(brand, wallclock.wall_now(), request)
    emails = Delivery.objects.filter(brand=brand, channel=Delivery.Channel.EMAIL).order_by(
        "-created", "-pk").only("payload", "state", "created", "delivered")
    page = Paginator(emails, PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "console/emails.html", {
        "brand": brand, "face": face, "page": page,
        "rows": [{"to": ", ".join(email.payload.get("to", [])),
                  "subject": email.payload.get("subject", ""),
                  "body": email.payload.get("body", ""), "state": STATES[email.state],
                  "at": face.at(email.delivered or email.created)} for email in page]})


# -- the brand's plan (S24) ------------------------------------------------------------------

RUNS = {"free": "dates on a job: deadlines, late prices, steps and the job's own dates",
        "launch": "also dates that outlive their job, periods, facts kept for the next "
                  "period, subscriptions with allowances, and schedules and events that open "
                  "jobs",
        "team": "also dates sold as a promise, whose penalties you credit, and a service that "
                "keeps a client's dates between jobs"}


class PlanForm(forms.Form):
    plan = forms.ChoiceField(label="Move to", choices=[(name, f"{name.capitalize()} plan")
                                                       for name in tiers.PLANS])
    confirm = forms.BooleanField(required=False, widget=forms.HiddenInput)


def _plan_page(request, brand, form: PlanForm, *, preview=None, status: int = 200):
    return render(request, "console/plan.html", {
        "brand": brand, "tier": terms.tier(brand.plan), "form": form, "preview": preview,
        "plans": [{"name": name.capitalize(), "runs": RUNS[name], "current":
                   name == brand.plan} for name in tiers.PLANS],
        "may_change": may(request, "owner")}, status=status)


@login_required
def plan_page(request, brand_id: str):
    brand = brand_of(request, brand_id)
    return _plan_page(request, brand, PlanForm(initial={"plan": brand.plan}))


@login_required
@require_POST
def plan_change(request, brand_id: str):
    """Move the brand to the plan chosen; a smaller plan is first shown with what keeps the
    old one and until when, and moves only once confirmed."""
    brand = brand_of(request, brand_id, at_least="owner")
    form = PlanForm(request.POST)
    if not form.is_valid():
        return _plan_page(request, brand, form, status=400)
    plan = form.cleaned_data["plan"]
    if tiers.RANK[plan] < tiers.RANK[brand.plan] and not form.cleaned_data["confirm"]:
        preview = terms.kept_on(brand, plan)
        return _plan_page(request, brand, form, preview={
            "plan": plan, "tier": terms.tier(plan), "said": terms.said(preview)})
    kept = terms.change_plan(brand=brand, plan=plan, by=by(request))
    moved = "" if kept.plan == kept.was else f"{brand.name} is on {terms.tier(plan)} now. "
    messages.success(request, moved + terms.said(kept))
    return redirect("console:plan", brand_id=brand.pk)
