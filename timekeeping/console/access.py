"""Who reaches which console page (docs/security.md): a brand's people, by role. A brand the
person does not keep answers 404, exactly as one that does not exist; a control above the
person's role answers 403."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from timekeeping.models import Brand, brands_kept_by
from timekeeping.timers import records

RANKS = {"viewer": 0, "manager": 1, "owner": 2}


def brand_of(request, brand_id: str, *, at_least: str = "viewer") -> Brand:
    """The brand named in the address, if the signed-in person keeps it with the role."""
    brand = brands_kept_by(request.user).filter(pk=brand_id).select_related(
        "calendar", "owner").first()
    if brand is None:
        raise Http404("no such brand")
    role = brand.role_of(request.user)
    if RANKS.get(role or "", -1) < RANKS[at_least]:
        article = "an" if at_least[0] in "aeiou" else "a"
        raise PermissionDenied(f"this needs {article} {at_least}'s role at {brand.name}")
    request.role = role
    return brand


def may(request, at_least: str) -> bool:
    """Whether the person `brand_of` let in holds at least this role: what a page shows."""
    return RANKS.get(getattr(request, "role", None) or "", -1) >= RANKS[at_least]


def by(request) -> str:
    """The person as records name them (the API's words for a person)."""
    return records.person(request.user)


def back_to(request, brand: Brand) -> str:
    """Where a control sends the person back: the console page it was posted from (a page of
    this brand only), else the brand's home."""
    target = request.POST.get("next") or ""
    if target.startswith(f"/console/{brand.pk}/") and url_has_allowed_host_and_scheme(
            target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return reverse("console:home", args=[brand.pk])
