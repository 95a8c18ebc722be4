"""The owner console (S25, D3): the brand's own people see what is at risk and settle it.
Views stay thin: they find the brand (404 for a stranger), call the same functions as the
API, and render."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render

from timekeeping import dates
from timekeeping.console.access import brand_of
from timekeeping.models import brands_kept_by


@login_required
def index(request):
    """The first brand the person keeps (the header switches between them)."""
    first = brands_kept_by(request.user).order_by("name").first()
    if first is None:
        raise Http404("you keep no brand")
    return redirect("console:home", brand_id=first.pk)


@login_required
def home(request, brand_id: str):
    brand = brand_of(request, brand_id)
    return render(request, "console/home.html", {"brand": brand,
                                                 "at_risk": dates.at_risk(brand)})
