"""The owner console (S25, D3): the brand's own people see what is at risk and settle it.
Views stay thin: they find the brand (404 for a stranger, 403 below the role), parse, call the
same functions as the API and the commands, and render. docs/console.md says what each page
shows and who may use it."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render

from timekeeping.attention import lists
from timekeeping.basics import wallclock
from timekeeping.brands import archives
from timekeeping.clocks import costs, dates
from timekeeping.console import ahead, overview, test_mode, why
from timekeeping.console.access import brand_of, may
from timekeeping.console.chart import chart
from timekeeping.console.controls import members
from timekeeping.console.shown import face_of
from timekeeping.models import brands_kept_by
from timekeeping.schedules import operate

AT_RISK_PAGE = 25
STATES = ("lapsed", "late", "near", "ahead")


@login_required
def index(request):
    """One brand: its home. Several: each at a glance, with a link in (issue 27)."""
    kept = list(brands_kept_by(request.user).select_related("calendar")
                .order_by("name")[:overview.SHOWN + 1])
    if not kept:
        if archives.undoable_by(request.user, wallclock.wall_now()):
            return redirect("console:deleted")
        raise Http404("you keep no brand")
    if len(kept) == 1:
        return redirect("console:home", brand_id=kept[0].pk)
    now = wallclock.wall_now()
    return render(request, "console/overview.html", {
        "glances": [overview.glance(brand, now=now) for brand in kept[:overview.SHOWN]],
        "more": len(kept) > overview.SHOWN,
        "deleted": len(archives.undoable_by(request.user, now))})


@login_required
def home(request, brand_id: str):
    brand = brand_of(request, brand_id)
    now, world = wallclock.wall_now(), test_mode.world_of(request, brand)
    here = world.frozen_time if world is not None else now  # the world's own now
    state, assignee = request.GET.get("state", ""), request.GET.get("assignee", "")
    coming, face = ahead.ahead(brand, now=now, test_clock=world), face_of(brand, here, request)
    needs = lists.attention(brand, now=now, world=world)
    work = lists.work_at_risk(brand, now=now, world=world)
    listed = dates.AtRisk(brand, state=state if state in STATES else "", assignee=assignee,
                          world=world)
    everything = dates.AtRisk(brand, world=world)
    return render(request, "console/home.html", {
        "brand": brand, "face": face, "can_act": may(request, "manager"),
        "can_own": may(request, "owner"), "stopped": operate.ticks_stopped(now),
        "at_risk": listed.page(_number(request.GET.get("risk")), AT_RISK_PAGE),
        "totals": listed.totals(),
        "states": [(each, dates.STATES_SAID[each]) for each in STATES],
        "state": state, "assignee": assignee, "members": members(brand),
        "attention": [{"item": item, "at": face.at(item.at)} for item in needs.items],
        "attention_more": needs.more,
        "work": [{"item": item, "at": face.at(item.at)} for item in work.items],
        "work_more": work.more,
        "money": costs.at_risk(brand, now=now, test_clock=world),
        "ahead": coming, "chart": chart(coming), "world": world,
        # The tab's title counts what needs the reader, whatever the filters (issue 27).
        "risk_count": everything.count(),
        "next": request.get_full_path()})


def _number(text: str | None) -> int:
    """A page number from the address; anything else is the first page."""
    return int(text) if text and text.isdigit() and len(text) < 7 else 1


@login_required
def why_page(request, brand_id: str):
    brand = brand_of(request, brand_id)
    asked = request.GET.get("q", "").strip()[:300]
    return render(request, "console/why.html", {
        "brand": brand, "asked": asked,
        "answer": why.why(brand, asked, now=wallclock.wall_now()) if asked else []})


@login_required
def help_money(request, brand_id: str):
    """How the cost of a miss is worked out: the page each figure's breakdown links to."""
    return render(request, "console/help_money.html", {"brand": brand_of(request, brand_id)})
