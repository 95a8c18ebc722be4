"""Operations in the console (S25): schedules, the timed-move connection, postponements and test
clocks, each through the functions the commands and the API use (`schedules.operate`,
`moves.operate`, `clocks.add_postponement`, `test_clocks`). Viewers see; managers and owners
act."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import OuterRef, Subquery
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRefresh

from calendars.models import Postponement
from timekeeping import clocks
from timekeeping.access.calendars import NO_CALENDAR, SHARED, CalendarRefused, notice_calendar
from timekeeping.attention import settling
from timekeeping.basics import refusals, shown, wallclock
from timekeeping.clocks import history
from timekeeping.console import connections, forms, rehearsals, test_mode
from timekeeping.console.access import brand_of, by, may
from timekeeping.console.shown import face_of
from timekeeping.jobs import standby
from timekeeping.models import (
    Brand,
    Connection,
    Schedule,
    ScheduleRun,
    Standby,
    TestClock,
    brands_kept_by,
)
from timekeeping.moves import operate as moves
from timekeeping.moves import parking as moves_parking
from timekeeping.schedules import operate as schedules
from timekeeping.schedules import parking as schedules_parking
from timekeeping.tick import test_clocks, trace

PER_PAGE = 50
PREVIEW_SHOWN = 100
PREVIEW_HOURS = 24


# -- schedules -------------------------------------------------------------------------------

def _with_last_run(rows):
    """Each schedule with its last run's time and outcome, in the same query (schedule runs
    live beside schedules, in the schedules store)."""
    last = ScheduleRun.objects.filter(schedule=OuterRef("pk")).order_by("-tick")
    return rows.annotate(last_tick_run=Subquery(last.values("tick")[:1]),
                         last_outcome=Subquery(last.values("outcome")[:1]),
                         last_reason=Subquery(last.values("reason")[:1]))


def _every(seconds: int, at: str) -> str:
    """How often a schedule runs, as people say it: "every day", "every 15 minutes"."""
    if at:
        return f"at {at}"
    for size, unit in ((86400, "day"), (3600, "hour"), (60, "minute"), (1, "second")):
        if seconds % size == 0:
            count = seconds // size
            return f"every {unit}" if count == 1 else f"every {count} {unit}s"
    return f"every {seconds} seconds"


@login_required
def schedule_list(request, brand_id: str):
    brand = brand_of(request, brand_id)
    now = wallclock.wall_now()
    # Filtered on the brand's column, never joined: SCHEDULES_STORE may be another database.
    rows = _with_last_run(Schedule.objects.filter(brand_id=brand.pk, active=True)
                          .order_by("test_clock_id", "name", "pk"))
    page = Paginator(rows, PER_PAGE).get_page(request.GET.get("page"))
    face = face_of(brand, now, request)
    worlds = dict(TestClock.objects.filter(brand=brand).values_list("pk", "name"))
    return render(request, "console/schedules.html", {
        "brand": brand, "face": face, "can_act": may(request, "manager"), "page": page,
        "rows": [{"row": row, "next": face.at(row.next_due), "last": face.at(row.last_tick_run),
                  "every": _every(row.every_s, row.at), "world": worlds.get(row.test_clock_id),
                  # Backing off or parked after failed runs (issue 31, schedules.parking).
                  "parked": face.at(row.parked),
                  "failed_with": schedules_parking.failed_with(row)}
                 for row in page],
        "parked_actions": settling.ACTIONS["parked schedule"],
        "stopped": schedules.ticks_stopped(now)})


@login_required
@require_POST
def schedule_act(request, brand_id: str):
    brand = brand_of(request, brand_id, at_least="manager")
    form = forms.ScheduleForm(request.POST)
    row = None
    if form.is_valid():
        row = Schedule.objects.filter(brand_id=brand.pk, active=True,
                                      pk=form.cleaned_data["schedule"]).first()
    if row is None:
        messages.error(request, "Nothing was done: name one of the brand's schedules and "
                                "what to do (pause, resume, run now).")
        return redirect("console:schedules", brand_id=brand.pk)
    verb = form.cleaned_data["do"]
    if {"pause": schedules.pause, "resume": schedules.resume, "run": schedules.run_by_hand}[
            verb](row) is False:
        messages.error(request, f"{row.name} was not run: it is parked. Retry it now or give "
                                "it up.")
        return redirect("console:schedules", brand_id=brand.pk)
    messages.success(request, {"pause": f"{row.name} is paused: its runs are skipped until it "
                                         "is resumed.",
                               "resume": f"{row.name} is resumed.",
                               "run": f"{row.name} runs once at the next minute, as well as at "
                                      "its usual times."}[
        verb])
    return redirect("console:schedules", brand_id=brand.pk)


# -- the timed-move connection ---------------------------------------------------------------

def _connection(brand: Brand) -> Connection | None:
    return Connection.objects.select_related("brand").filter(brand=brand).first()


@login_required
def moves_page(request, brand_id: str):
    brand = brand_of(request, brand_id)
    now, link = wallclock.wall_now(), _connection(brand)
    face = face_of(brand, now, request)
    found = {"brand": brand, "face": face, "can_act": may(request, "manager"), "link": link}
    world = test_mode.world_of(request, brand)
    if world is not None:  # test mode: the test world's rows only, at its time
        found |= rehearsals.context(request, brand, world, face, link, found["can_act"])
        return render(request, "console/moves_rehearsal.html", found)
    if link is not None:
        preview = moves.preview(link, now=now, hours=PREVIEW_HOURS)
        aside = Paginator(moves.set_aside(link, now=now), PER_PAGE).get_page(
            request.GET.get("page"))
        backlog = moves.backlog(link, now=now)
        named = {(line.table, line.rule): line.move for line in backlog}
        found |= {"backlog": [{"line": line, "oldest": face.at(line.oldest)}
                              for line in backlog],
                  "aside": aside,
                  "aside_rows": [{"row": row, "until": face.at(row.until),
                                  "said": refusals.set_aside(
                                      row.table, row.row, named.get((row.table, row.rule), ""),
                                      row.code)} for row in aside],
                  "preview": preview[:PREVIEW_SHOWN], "preview_more": len(preview) > PREVIEW_SHOWN,
                  "last_run": face.at(link.last_run), "hours": PREVIEW_HOURS,
                  # Backing off or parked after failed minutes (issue 31, moves.parking).
                  "tried_next": face.at(link.next_attempt), "parked": face.at(link.parked),
                  "failed_with": moves_parking.failed_with(link),
                  "parked_actions": settling.ACTIONS["parked moves"]}
    return render(request, "console/moves.html", found)


@login_required
@require_POST
def moves_act(request, brand_id: str):
    brand = brand_of(request, brand_id, at_least="manager")
    form, link = forms.ConnectionForm(request.POST), _connection(brand)
    if link is None or not form.is_valid():
        messages.error(request, "Nothing was done: the brand has no tables yet, or the form "
                                "asked for neither pause nor resume. Load a manifest with "
                                "tables first, or use the page's button.")
    elif form.cleaned_data["do"] == "pause":
        connections.pause(link)
        messages.success(request, "The connection is paused: no timed move runs until it is "
                                  "resumed.")
    else:
        connections.resume(link)
        messages.success(request, "The connection is resumed: the next minute's job runs.")
    return redirect("console:moves", brand_id=brand.pk)


# -- postponements ---------------------------------------------------------------------------

def _postponements(request, brand: Brand, form: forms.PostponementForm, status: int = 200):
    found = (Postponement.objects.filter(calendar_id=brand.calendar_id)
             .order_by("-from_date", "-pk") if brand.calendar_id else Postponement.objects.none())
    worlds = dict(TestClock.objects.filter(brand=brand).values_list("pk", "name"))
    page = Paginator(found, PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "console/postponements.html", {
        "brand": brand, "can_act": may(request, "manager"), "form": form, "page": page,
        "rows": [{"row": row, "world": worlds.get(row.test_clock)} for row in page]},
        status=status)


@login_required
def postponement_list(request, brand_id: str):
    brand = brand_of(request, brand_id)
    return _postponements(request, brand, forms.PostponementForm(brand=brand))


# The API's fields, as this form names them.
POSTPONEMENT_FIELDS = {"from": "from_date", "through": "through", "to": "to", "where": "where",
                       "notice": "notice", "test_clock": "test_clock"}


@login_required
@require_POST
def postponement_add(request, brand_id: str):
    brand = brand_of(request, brand_id, at_least="manager")
    form = forms.PostponementForm(request.POST, brand=brand)
    if form.is_valid() and _calendar_refusal(request, brand) is None:
        data = form.cleaned_data
        try:
            _, moved = clocks.add_postponement(
                calendar=brand.calendar, from_date=data["from_date"], through=data["through"],
                to=data["to"], where=data["where"], notice=data["notice"],
                test_clock_id=data["test_clock"].pk if data["test_clock"] else "",
                by=by(request))
        except clocks.OrderRefused as refused:
            form.add_error(POSTPONEMENT_FIELDS.get(refused.field), refused.message)
        else:
            dates_moved = "1 date" if len(moved) == 1 else f"{len(moved)} dates"
            reopened = sum(line.endswith(clocks.REOPENED) for line in moved)
            # A late notice (issue 29): say how many of them had been missed and count again.
            again = ("" if not reopened else "; it had been missed and is open again"
                     if len(moved) == 1 else f"; {reopened} of them had been missed and are "
                                             "open again")
            messages.success(request, f"Notice added: {dates_moved} moved to "
                                      f"{shown.day(data['to'])}{again}; each subject's page "
                                      "and its history show which.")
            return redirect("console:postponements", brand_id=brand.pk)
    elif form.is_valid():
        form.add_error(None, _calendar_refusal(request, brand))
    return _postponements(request, brand, form, status=400)


# Why a notice is refused (timekeeping.access.calendars), as the page says it.
CALENDAR_REFUSALS = {
    NO_CALENDAR: "Not added: the brand has no calendar yet. Load a manifest with a calendar "
                 "section on Manifests, then add the notice.",
    SHARED: "Not added: the brand's calendar is shared with brands you do not keep, and a "
            "notice would move their dates too. Ask the operator to add it.",
}


def _calendar_refusal(request, brand: Brand) -> str | None:
    """As the API refuses (`access.calendars.notice_calendar`): no calendar, or one shared
    with brands the person does not keep, since a notice moves the dates of every brand on
    its calendar."""
    try:
        notice_calendar(brand, brands_kept_by(request.user))
    except CalendarRefused as refused:
        return CALENDAR_REFUSALS[refused.code]
    return None


# -- test clocks -----------------------------------------------------------------------------

def _zone(brand: Brand) -> str:
    return brand.calendar_rules().zone_name


def _test_clocks(request, brand: Brand, form: forms.TestClockForm, status: int = 200):
    face = face_of(brand, wallclock.wall_now(), request)
    page = Paginator(TestClock.objects.filter(brand=brand).order_by("name", "pk"),
                     PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "console/test_clocks.html", {
        "brand": brand, "face": face, "can_act": may(request, "manager"), "page": page,
        "rows": [{"row": row, "time": face.at(row.frozen_time)} for row in page],
        "form": form}, status=status)


@login_required
def test_clock_list(request, brand_id: str):
    brand = brand_of(request, brand_id)
    return _test_clocks(request, brand, forms.TestClockForm(zone=_zone(brand)))


@login_required
@require_POST
def test_clock_create(request, brand_id: str):
    brand = brand_of(request, brand_id, at_least="manager")
    form = forms.TestClockForm(request.POST, zone=_zone(brand))
    if not form.is_valid():
        return _test_clocks(request, brand, form, status=400)
    made = test_clocks.create(brand=brand, name=form.cleaned_data["name"],
                              frozen_time=form.cleaned_data["frozen_time"])
    messages.success(request, f"Test world {made.name} made: its time is fixed at "
                              f"{shown.moment(made.frozen_time, _zone(brand))} until you "
                              "advance it.")
    return redirect("console:test-clock", brand_id=brand.pk, clock_id=made.pk)


def _test_clock(brand: Brand, clock_id: str) -> TestClock:
    found = TestClock.objects.select_related("brand").filter(brand=brand, pk=clock_id).first()
    if found is None:
        raise Http404("no such test clock")
    return found


TRACE_SHOWN = 200  # lines of a walk's trace on the page; the API serves it whole


def _walk_view(walk) -> dict | None:
    if walk is None:
        return None
    if walk.state == walk.State.WALKING:
        return {"walk": walk, "percent": round(walk.share * 100),
                "by": history.person(walk.by), "trace": "", "cut": False}
    lines = list(trace.walk_lines(walk, limit=TRACE_SHOWN + 1))  # after a header and columns
    return {"walk": walk, "percent": round(walk.share * 100), "by": history.person(walk.by),
            "trace": "\n".join(lines[:TRACE_SHOWN + 2]), "cut": len(lines) > TRACE_SHOWN + 2}


def _test_clock_page(request, brand: Brand, found: TestClock, form, *, status: int = 200):
    face = face_of(brand, wallclock.wall_now(), request)
    walk = test_clocks.latest(found)
    context = {
        "brand": brand, "face": face, "can_act": may(request, "manager"), "clock": found,
        "time": face.at(found.frozen_time),
        "subjects": found.subjects.filter(brand=brand).count(),
        "form": form, "walk": _walk_view(walk),
        "walk_to": face.at(walk.to) if walk is not None else None}
    if request.htmx and request.GET.get("part") == "walk":
        if walk is None or walk.state != walk.State.WALKING:
            return HttpResponseClientRefresh()  # it ended: the whole page, with its trace
        return render(request, "console/_walk.html", context)
    return render(request, "console/test_clock.html", context, status=status)


def _advance_form(brand: Brand, found: TestClock) -> forms.AdvanceForm:
    """Filled in with the clock's time, as the brand's zone shows it."""
    local = found.frozen_time.astimezone(face_of(brand, found.frozen_time).zone)
    return forms.AdvanceForm(zone=_zone(brand), initial={"to": f"{local:%Y-%m-%dT%H:%M}"})


@login_required
def test_clock_page(request, brand_id: str, clock_id: str):
    """The clock, and its latest advance: while it walks, how far it has come (the part
    reloads itself with htmx; without JavaScript, reload the page), then its trace."""
    brand = brand_of(request, brand_id)
    found = _test_clock(brand, clock_id)
    return _test_clock_page(request, brand, found, _advance_form(brand, found))


@login_required
@require_POST
def test_clock_advance(request, brand_id: str, clock_id: str):
    """Ask for an advance through the function `POST /api/test_clocks/{id}/advance` calls;
    the tick walks it, and the page shows how far it has come."""
    brand = brand_of(request, brand_id, at_least="manager")
    found = _test_clock(brand, clock_id)
    form = forms.AdvanceForm(request.POST, zone=_zone(brand))
    if not form.is_valid():
        return _test_clock_page(request, brand, found, form, status=400)
    try:
        walk = test_clocks.request(found, to=form.cleaned_data["to"], by=by(request))
    except test_clocks.AdvanceRefused as refused:
        form.add_error("to" if refused.field == "to" else None, refused.message)
        return _test_clock_page(request, brand, found, form,
                                status=409 if refused.field == "test_clock" else 400)
    messages.success(request, f"Moving test world {found.name} on to "
                              f"{shown.moment(walk.to, _zone(brand))}: everything due on the "
                              "way happens in order, and this page shows how far it has come.")
    return redirect("console:test-clock", brand_id=brand.pk, clock_id=found.pk)


# -- standby seasons (S20) --------------------------------------------------------------------

def _standby(request, brand: Brand, form: forms.StandbyForm, status: int = 200):
    page = Paginator(Standby.objects.filter(brand=brand).select_related("member__user",
                                                                         "test_clock")
                     .order_by("-first", "pk"), PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "console/standby.html", {
        "brand": brand, "can_act": may(request, "manager"), "page": page,
        "rows": [{"row": row, "retainer": shown.money(row.retainer, row.currency, short=True),
                  "offer": shown.span(row.offer)} for row in page],
        "form": form}, status=status)


@login_required
def standby_list(request, brand_id: str):
    brand = brand_of(request, brand_id)
    return _standby(request, brand, forms.StandbyForm(brand=brand))


@login_required
@require_POST
def standby_add(request, brand_id: str):
    """Put a member on standby through the function `POST /api/brands/{id}/standby` calls; a
    refusal is shown on the field it names."""
    brand = brand_of(request, brand_id, at_least="manager")
    form = forms.StandbyForm(request.POST, brand=brand)
    if form.is_valid():
        data = form.cleaned_data
        try:
            made = standby.start(brand=brand, member=data["member"], first=data["first"],
                                 last=data["last"], retainer=data["retainer_minor"],
                                 currency=data["currency"], offer=data["offer_span"],
                                 test_clock=data["test_clock"], by=by(request))
        except standby.StandbyRefused as refused:
            form.add_error(refused.field if refused.field in form.fields else None,
                           refused.message)
        else:
            retainer = shown.money(made.retainer, made.currency, short=True)
            messages.success(request, f"On standby: {made.member.name} from "
                                      f"{shown.day(made.first)} through {shown.day(made.last)}, "
                                      f"{retainer} a week.")
            return redirect("console:standby", brand_id=brand.pk)
    return _standby(request, brand, form, status=400)
