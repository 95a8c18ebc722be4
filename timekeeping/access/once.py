"""One-time form tokens (issue 27): every form on a date's row, and every Undo, carries one
(`{% once_field %}`); the post that acts spends it, and a second post with the same token
changes nothing and is told "That was already done."

    token()        a new token, for a form about to be shown
    spend(request) True when the post may act: its token was unspent (now spent) or it sent
                   none (a script, a page from before tokens); False when spent already
"""

from __future__ import annotations

import secrets

from django.db import IntegrityError, transaction

from timekeeping.models import SpentToken

FIELD = "once"
ALREADY = "That was already done."


def token() -> str:
    return secrets.token_urlsafe(18)


def spend(request) -> bool:
    given = request.POST.get(FIELD, "")
    if not given:
        return True
    try:
        # Two posts at once with one token: the primary key lets one insert, the other fails.
        with transaction.atomic():
            SpentToken.objects.create(token=given[:64])
    except IntegrityError:
        return False
    return True
