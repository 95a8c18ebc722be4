"""Rehearsing timed moves in the console (issue 29): the timed-moves page in test mode shows
the test world's rows, what moved there, when and why, and what waits to move; a manager
copies a span of live rows into the test world, or removes them, through the functions the
API calls (`moves.rehearse`, `moves.moved`, `moves.operate`). Live rows are never changed
here."""

from __future__ import annotations

from datetime import timedelta

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from timekeeping.basics import shown
from timekeeping.console.access import brand_of, by
from timekeeping.console.forms import InstantField
from timekeeping.console.shown import Face
from timekeeping.models import Brand, Connection, TestClock
from timekeeping.moves import moved, rehearse
from timekeeping.moves import operate as moves
from timekeeping.moves.rows import Venue

PER_PAGE = 50
PREVIEW_HOURS = 24
MOST_DAYS = 31


class RehearseForm(forms.Form):
    """Copy the live rows of a table whose moment falls in a span of days."""

    test_clock = forms.CharField(max_length=40)
    table = forms.CharField(max_length=41, label="Rows of")
    days = forms.IntegerField(min_value=1, max_value=MOST_DAYS, initial=7,
                              label="For how many days")

    def __init__(self, *args, zone: str, tables: list[str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["start"] = InstantField(zone=zone,
                                            label=f"From ({shown.zone_name(zone)})")
        if tables:
            self.fields["table"] = forms.ChoiceField(choices=[(t, t) for t in tables],
                                                     label="Rows of")


class RemoveForm(forms.Form):
    test_clock = forms.CharField(max_length=40)


def moving_tables(venue: Venue) -> list[str]:
    return sorted(name for name, table in venue.tables.items()
                  if table.states and table.states.timed)


def context(request, brand: Brand, world: TestClock, face: Face, link: Connection | None,
            can_act: bool) -> dict:
    """What the timed-moves page shows in a test world."""
    now = world.frozen_time
    found = {"world": world, "world_now": face.at(now, now=now), "rehearsal": None,
             "tables": [], "form": None}
    if link is None:
        return found
    live = Venue.of(link)
    rehearsal = rehearse.of(world)
    if can_act:
        found["form"] = RehearseForm(zone=face.home.key if face.home else face.zone.key,
                                     tables=moving_tables(live),
                                     initial={"test_clock": world.pk, "days": 7,
                                              "start": now.astimezone(face.zone)
                                              .strftime("%Y-%m-%dT%H:%M")})
    if rehearsal is None:
        return found
    venue = rehearse.venue_of(rehearsal)
    lines = Paginator(moved.lines(world, venue), PER_PAGE).get_page(request.GET.get("page"))
    backlog = moves.backlog(link, now=now, venue=venue)
    return found | {
        "rehearsal": rehearsal, "held": rehearse.rows_held(world), "moved": lines,
        "backlog": [{"line": line, "oldest": face.at(line.oldest, now=now)}
                    for line in backlog],
        "preview": moves.preview(link, now=now, hours=PREVIEW_HOURS, venue=venue)[:100],
        "hours": PREVIEW_HOURS}


def _world(brand: Brand, clock_id: str) -> TestClock | None:
    return TestClock.objects.filter(brand=brand, pk=clock_id).first()


@login_required
@require_POST
def copy(request, brand_id: str):
    brand = brand_of(request, brand_id, at_least="manager")
    form = RehearseForm(request.POST, zone=brand.calendar_rules().zone_name)
    world = _world(brand, form.data.get("test_clock", "")) if form.is_valid() else None
    if world is None:
        messages.error(request, "Nothing was copied: the form was not complete. Choose the "
                                "rows, the day they start and how many days, then copy.")
        return redirect("console:moves", brand_id=brand.pk)
    start = form.cleaned_data["start"]
    try:
        done = rehearse.copy(world, form.cleaned_data["table"], start=start,
                             end=start + timedelta(days=form.cleaned_data["days"]),
                             who=by(request))
    except rehearse.RehearsalRefused as refused:
        messages.error(request, f"Nothing was copied: {refused.message}.")
    else:
        messages.success(request, _copied_said(done, world))
    return redirect(f"/console/{brand.pk}/moves/?test={world.pk}")


def _copied_said(done: rehearse.Copied, world: TestClock) -> str:
    said = (f"{len(done.copied)} row{'s' if len(done.copied) != 1 else ''} of {done.table} "
            f"copied into the test world \u201c{world.name}\u201d")
    if done.linked:
        said += f", with {done.linked} linked row{'s' if done.linked != 1 else ''}"
    if done.kept:
        said += f"; {len(done.kept)} were there already and were left as they are"
    return said + ". Move the test clock on to see them move; the live rows stay as they are."


@login_required
@require_POST
def remove(request, brand_id: str):
    brand = brand_of(request, brand_id, at_least="manager")
    form = RemoveForm(request.POST)
    world = _world(brand, form.data.get("test_clock", "")) if form.is_valid() else None
    if world is None:
        messages.error(request, "Nothing was removed: say which test world's rows to remove, "
                                "with the page's button.")
        return redirect("console:moves", brand_id=brand.pk)
    held = rehearse.remove(world)
    messages.success(request, f"{held} row{'s' if held != 1 else ''} removed from the test "
                              f"world \u201c{world.name}\u201d. The live rows stay as they "
                              "are.")
    return redirect(f"/console/{brand.pk}/moves/?test={world.pk}")
