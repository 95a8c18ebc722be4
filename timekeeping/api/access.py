"""Who may see what through the API: everything is scoped to the brands the caller keeps."""

from rest_framework.exceptions import NotFound, ValidationError

from timekeeping.models import Brand, brands_kept_by


def brand_for(request, brand_id: str | None) -> Brand:
    """The brand a request acts for: the one named, or the caller's only brand."""
    brands = brands_kept_by(request.user)
    if brand_id:
        brand = brands.filter(pk=brand_id).first()
        if brand is None:
            raise ValidationError({"brand": [f"no brand {brand_id!r} that you keep"]})
        return brand
    kept = list(brands[:2])
    if len(kept) != 1:
        raise ValidationError({"brand": ["say which brand: you keep "
                                         f"{'none' if not kept else 'several'}"]})
    return kept[0]


def kept(request, queryset, pk: str, what: str):
    """One row of `queryset` whose brand the caller keeps, else 404 (as if it did not exist)."""
    found = queryset.filter(pk=pk, brand__in=brands_kept_by(request.user)).first()
    if found is None:
        raise NotFound(f"{what}: no {what.replace('_', ' ')} {pk!r} that you keep")
    return found
