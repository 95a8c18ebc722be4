"""Who may see what through the API (docs/security.md).

A caller is a signed-in person (a browser session) or a program holding an API key. A
person reaches the brands they own or work for (superusers: all); a key reaches its one
brand. Every query of the API starts from `brands(request)`: a row of any other brand answers
404, exactly as a row that does not exist.
"""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import (
    AuthenticationFailed,
    NotFound,
    PermissionDenied,
    Throttled,
    ValidationError,
)
from rest_framework.permissions import SAFE_METHODS

from timekeeping.access import keys
from timekeeping.basics import wallclock
from timekeeping.models import ApiKey, Brand, brands_kept_by
from timekeeping.timers import records
from timekeeping.web.throttle import Rate


class KeyHolder:
    """The caller of a request made with an API key: a program, not a person."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False
    pk = None

    def __init__(self, key: ApiKey):
        self.key = key

    def get_username(self) -> str:
        return f"key {self.key.id}"

    def __str__(self) -> str:
        return self.get_username()


class ApiKeyAuthentication(BaseAuthentication):
    """`Authorization: Bearer kt_…`. A wrong, revoked or malformed key answers 401, and counts
    against its address's anonymous rate: past it, 429 (no guessing keys at full speed)."""

    def authenticate(self, request):
        words = get_authorization_header(request).split()
        if not words or words[0].lower() != b"bearer":
            return None
        try:
            secret = words[1].decode("ascii") if len(words) == 2 else ""
        except UnicodeDecodeError:
            secret = ""
        key = keys.find(secret, now=wallclock.wall_now()) if secret else None
        if key is None:
            wait = Rate("anon").allowed(request)
            if wait is not None:
                raise Throttled(wait)
            raise AuthenticationFailed("the API key is wrong or revoked")
        return KeyHolder(key), key

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="keeping-time"'


class ApiKeyScheme(OpenApiAuthenticationExtension):
    """How the OpenAPI schema describes the key: an HTTP bearer token."""

    target_class = "timekeeping.api.access.ApiKeyAuthentication"
    name = "apiKey"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "A brand's API key (kt_…), made by its owner."}


def key_of(request) -> ApiKey | None:
    return request.auth if isinstance(request.auth, ApiKey) else None


def brands(request):
    """The brands the caller may see: the scope of every brand query in the API."""
    key = key_of(request)
    if key is not None:
        return Brand.objects.filter(pk=key.brand_id)
    return brands_kept_by(request.user)


def who(request) -> str:
    """The caller as records and audits name them."""
    key = key_of(request)
    if key is not None:
        return f"key {key.id} ({key.name})"
    return records.person(request.user)


def role(request, brand: Brand) -> str | None:
    """The caller's role at `brand`: a key acts as a manager; a person as their membership."""
    if key_of(request) is not None:
        return "manager" if key_of(request).brand_id == brand.pk else None
    return brand.role_of(request.user)


def may_write(request, brand: Brand) -> Brand:
    """`brand`, when the caller may change things there; a viewer reads only (403)."""
    if request.method not in SAFE_METHODS and role(request, brand) == "viewer":
        raise PermissionDenied("a viewer reads; a manager or the owner makes changes")
    return brand


def brand_for(request, brand_id: str | None) -> Brand:
    """The brand a request acts for: the one named, or the caller's only brand."""
    scope = brands(request)
    if brand_id:
        brand = scope.filter(pk=brand_id).first()
        if brand is None:
            raise ValidationError({"brand": [f"no brand {brand_id!r} that you keep"]})
        return may_write(request, brand)
    kept_brands = list(scope[:2])
    if len(kept_brands) != 1:
        raise ValidationError({"brand": ["say which brand: you keep "
                                         f"{'none' if not kept_brands else 'several'}"]})
    return may_write(request, kept_brands[0])


def kept_brand(request, brand_id: str) -> Brand:
    """A brand the caller keeps, named in the address, else 404."""
    brand = brands(request).filter(pk=brand_id).first()
    if brand is None:
        raise NotFound(f"brand: no brand {brand_id!r} that you keep")
    return may_write(request, brand)


def kept(request, queryset, pk: str, what: str):
    """One row of `queryset` whose brand the caller keeps, else 404 (as if it did not exist)."""
    found = queryset.filter(pk=pk, brand__in=brands(request)).select_related("brand").first()
    if found is None:
        raise NotFound(f"{what}: no {what.replace('_', ' ')} {pk!r} that you keep")
    may_write(request, found.brand)
    return found


def owned(request, brand_id: str) -> Brand:
    """A brand the caller keeps (else 404) and owns (else 403): what only an owner does, such
    as making and revoking API keys. A key owns nothing."""
    brand = brands(request).filter(pk=brand_id).select_related("owner").first()
    if brand is None:
        raise NotFound(f"brand: no brand {brand_id!r} that you keep")
    return owner_only(request, brand)


def owner_only(request, brand: Brand) -> Brand:
    """`brand`, a brand the caller keeps, when the caller owns it; else 403. A key owns
    nothing."""
    if key_of(request) is not None or role(request, brand) != "owner":
        raise PermissionDenied("only the brand's owner does this")
    return brand
