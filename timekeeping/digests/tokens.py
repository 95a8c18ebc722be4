"""The digest's unsubscribe link (issue 27): a token signed with the site's secret
(django.core.signing), so the link works without signing in and a changed token is refused.
It never expires: an old email's link still turns the digest off."""

from __future__ import annotations

from django.conf import settings
from django.core import signing
from django.urls import reverse

SALT = "timekeeping.digests.unsubscribe"


def token_of(digest_id: str) -> str:
    return signing.dumps(digest_id, salt=SALT, compress=False)


def digest_id_of(token: str) -> str | None:
    """The digest the token names, or None for a token we did not sign."""
    try:
        found = signing.loads(token, salt=SALT)
    except signing.BadSignature:
        return None
    return found if isinstance(found, str) else None


def unsubscribe_url(digest_id: str) -> str:
    return settings.SITE_URL + reverse("digest-unsubscribe", args=[token_of(digest_id)])
