"""What only a brand's owner does in the console (docs/security.md): API keys (list, make
with the secret shown once, revoke: `timekeeping.access.keys`) and loading a manifest
(`manifests.apply`). Managers may check a manifest and plan its load (`manifests.plan`)
without loading it; viewers see the versions.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from timekeeping import manifests
from timekeeping.access import keys
from timekeeping.basics import refusals, wallclock
from timekeeping.console import forms
from timekeeping.console.access import brand_of, may
from timekeeping.console.shown import face_of
from timekeeping.models import ApiKey, Brand, Manifest
from timekeeping.timers import records

PER_PAGE = 50


# -- API keys --------------------------------------------------------------------------------

def _keys(request, brand: Brand, form: forms.KeyForm, status: int = 200):
    face = face_of(brand, wallclock.wall_now(), request)
    page = Paginator(ApiKey.objects.filter(brand=brand).order_by("-created", "pk"),
                     PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "console/keys.html", {
        "brand": brand, "face": face, "page": page, "form": form,
        "rows": [{"key": key, "created": face.at(key.created), "used": face.at(key.last_used),
                  "revoked": face.at(key.revoked)} for key in page]}, status=status)


@login_required
def key_list(request, brand_id: str):
    brand = brand_of(request, brand_id, at_least="owner")
    return _keys(request, brand, forms.KeyForm())


@login_required
@require_POST
def key_make(request, brand_id: str):
    brand = brand_of(request, brand_id, at_least="owner")
    form = forms.KeyForm(request.POST)
    if not form.is_valid():
        return _keys(request, brand, form, status=400)
    made = keys.make(brand=brand, name=form.cleaned_data["name"], by=request.user,
                     now=wallclock.wall_now())
    # The secret is on this answer only: never stored, never cached, never shown again.
    answer = render(request, "console/key_made.html", {"brand": brand, "made": made})
    answer["Cache-Control"] = "no-store"
    return answer


@login_required
@require_POST
def key_revoke(request, brand_id: str, key_id: str):
    brand = brand_of(request, brand_id, at_least="owner")
    key = ApiKey.objects.filter(brand=brand, pk=key_id).first()
    if key is None:
        raise Http404("no such key")
    keys.revoke(key, now=wallclock.wall_now())
    messages.success(request, f"Key {key.name} is revoked: the program that used it can no "
                              "longer reach the API.")
    return redirect("console:keys", brand_id=brand.pk)


# -- manifests -------------------------------------------------------------------------------

def _manifests(request, brand: Brand, form: forms.ManifestForm, *, problems=None,
               checked: bool = False, planned: manifests.Plan | None = None,
               status: int = 200):
    face = face_of(brand, wallclock.wall_now(), request)
    current = Manifest.objects.filter(brand=brand).order_by("-version").first()
    versions = Manifest.objects.filter(brand=brand).only(
        "id", "version", "bundle", "created").order_by("-version")
    page = Paginator(versions, PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "console/manifests.html", {
        "brand": brand, "face": face, "page": page, "form": form,
        "problems": [{"problem": each, "where": refusals.manifest_where(each.code)}
                     for each in problems or []],
        "checked": checked, "plan": planned, "can_check": may(request, "manager"),
        "can_load": may(request, "owner"),
        "rows": [{"version": version, "created": face.at(version.created)} for version in page],
        "current": current,
        "current_text": json.dumps(current.document, indent=2, ensure_ascii=False)
        if current else ""}, status=status)


@login_required
def manifest_list(request, brand_id: str):
    brand = brand_of(request, brand_id)
    return _manifests(request, brand, forms.ManifestForm())


@login_required
@require_POST
def manifest_check(request, brand_id: str):
    brand = brand_of(request, brand_id, at_least="manager")
    form = forms.ManifestForm(request.POST)
    if not form.is_valid():
        return _manifests(request, brand, form, status=400)
    planned = manifests.plan(brand, form.cleaned_data["document"])
    return _manifests(request, brand, form, checked=True, problems=planned.problems,
                      planned=planned)


@login_required
@require_POST
def manifest_load(request, brand_id: str):
    brand = brand_of(request, brand_id, at_least="owner")
    form = forms.ManifestForm(request.POST)
    if not form.is_valid():
        return _manifests(request, brand, form, status=400)
    try:
        applied = manifests.apply(brand, form.cleaned_data["document"],
                                  by=records.person(request.user))
    except manifests.ManifestInvalid as invalid:
        return _manifests(request, brand, form, checked=True, problems=invalid.problems,
                          status=400)
    version, removed = applied.version, len(applied.plan.removals)
    changes = len(applied.plan.changes)
    messages.success(request, f"Loaded: version {version.version} is the brand's manifest, "
                              f"with {changes} change{'s' if changes != 1 else ''}"
                              + (f", {removed} of them removals" if removed else "") + ".")
    return redirect("console:manifests", brand_id=brand.pk)
