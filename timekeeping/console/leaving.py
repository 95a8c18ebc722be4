"""A brand's data as a whole, for its owner (issue 31): download all of it as one file, delete
the brand (it asks first, by the brand's name), and bring a deleted brand back within 30 days.
The same functions `manage.py brand` calls (`timekeeping.brands`)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from timekeeping.basics import wallclock
from timekeeping.basics.shown import ZONE_KEY, zone_named
from timekeeping.brands import archives, exporting
from timekeeping.console.access import brand_of
from timekeeping.console.shown import face_of


class DeleteForm(forms.Form):
    name = forms.CharField(label="Type the brand's name to delete it", max_length=200,
                           strip=True)

    def __init__(self, *args, brand, **kwargs):
        super().__init__(*args, **kwargs)
        self.brand = brand

    def clean_name(self):
        name = self.cleaned_data["name"]
        if name != self.brand.name:
            raise forms.ValidationError(f"That is not the brand's name. Type {self.brand.name} "
                                        f"exactly, to show you mean this brand.")
        return name


@login_required
def leave_page(request, brand_id: str):
    brand = brand_of(request, brand_id, at_least="owner")
    return _page(request, brand, DeleteForm(brand=brand))


def _page(request, brand, form, status: int = 200):
    now = wallclock.wall_now()
    return render(request, "console/leave.html", {
        "brand": brand, "form": form,
        "until": face_of(brand, now, request).at(now + archives.KEPT)}, status=status)


@login_required
def export(request, brand_id: str):
    """The brand's whole data as one JSON file, streamed as it is read."""
    brand = brand_of(request, brand_id, at_least="owner")
    day = wallclock.wall_now().date().isoformat()
    response = StreamingHttpResponse(
        (piece.encode() for piece in exporting.pieces(brand)),
        content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{brand.slug}-{day}.json"'
    return response


@login_required
@require_POST
def delete(request, brand_id: str):
    brand = brand_of(request, brand_id, at_least="owner")
    form = DeleteForm(request.POST, brand=brand)
    if not form.is_valid():
        return _page(request, brand, form, status=400)
    archive = archives.delete(brand, by=request.user, now=wallclock.wall_now())
    messages.success(request, f"{archive.name} is deleted. You can bring it back here until "
                              f"the date shown.")
    return redirect("console:deleted")


@login_required
def deleted(request):
    """The brands this person deleted, or owned when someone did, that can still come back."""
    now = wallclock.wall_now()
    zone = zone_named(request.session.get(ZONE_KEY, "")) or "UTC"
    return render(request, "console/deleted.html", {
        "archives": archives.undoable_by(request.user, now), "zone": zone})


@login_required
@require_POST
def undo(request, archive_id: str):
    now = wallclock.wall_now()
    archive = next((each for each in archives.undoable_by(request.user, now)
                    if each.pk == archive_id), None)
    if archive is None:
        raise Http404("no such deleted brand")
    try:
        loaded = archives.undo(archive, now=now)
    except archives.UndoRefused as refused:
        messages.error(request, f"{archive.name} could not be brought back: {refused}.")
        return redirect("console:deleted")
    messages.success(request, f"{loaded.brand.name} is back. Work that fell due while it was "
                              f"deleted runs on the next tick.")
    return redirect("console:home", brand_id=loaded.brand.pk)
