"""Who reaches which console page (docs/security.md): a brand's people, by role. A brand the
person does not keep answers 404, exactly as one that does not exist; a control above the
person's role answers 403."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from timekeeping.models import Brand, brands_kept_by

RANKS = {"viewer": 0, "manager": 1, "owner": 2}


def brand_of(request, brand_id: str, *, at_least: str = "viewer") -> Brand:
    """The brand named in the address, if the signed-in person keeps it with the role."""
    brand = brands_kept_by(request.user).filter(pk=brand_id).select_related(
        "calendar", "owner").first()
    if brand is None:
        raise Http404("no such brand")
    role = brand.role_of(request.user)
    if RANKS.get(role or "", -1) < RANKS[at_least]:
        raise PermissionDenied(f"this needs a {at_least}'s role at {brand.name}")
    request.role = role
    return brand
