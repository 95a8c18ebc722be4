"""Making, finding and revoking API keys (docs/security.md).

A key's secret is `kt_` and 43 characters of base64 (256 random bits). Only its SHA-256
digest is stored: finding a key is one lookup of the digest on a unique index, and a secret
that is not a key's learns nothing from the time the lookup takes.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from timekeeping.models import ApiKey, Brand

PREFIX = "kt_"
# last_used is written at most once a minute per key: a program calling many times a second
# must not turn every read into a write.
TOUCH_EVERY = timedelta(minutes=1)


@dataclass(frozen=True)
class Made:
    key: ApiKey
    secret: str  # shown once, never stored


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def make(*, brand: Brand, name: str, by, now: datetime) -> Made:
    secret = PREFIX + secrets.token_urlsafe(32)
    key = ApiKey.objects.create(brand=brand, name=name, digest=_digest(secret), created_by=by,
                                created=now)
    return Made(key, secret)


def find(secret: str, *, now: datetime) -> ApiKey | None:
    """The live key with this secret, its last use noted; None for anything else."""
    if not secret.startswith(PREFIX) or len(secret) > 100:
        return None
    key = ApiKey.objects.select_related("brand").filter(digest=_digest(secret),
                                                         revoked__isnull=True).first()
    if key is not None and (key.last_used is None or key.last_used < now - TOUCH_EVERY):
        ApiKey.objects.filter(pk=key.pk).update(last_used=now)
        key.last_used = now
    return key


def revoke(key: ApiKey, *, now: datetime) -> ApiKey:
    """Revoke a key at once; revoking it again changes nothing."""
    ApiKey.objects.filter(pk=key.pk, revoked__isnull=True).update(revoked=now)
    key.refresh_from_db(fields=["revoked"])
    return key
