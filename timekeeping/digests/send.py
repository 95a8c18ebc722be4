"""The tick's digests phase (issue 27): each digest due at the tick's instant written to the
outbox once for its period; the outbox's sweep then sends it.

    run_due(now=, deadline=, guard=)   the due digests, up to PAGE a tick, oldest due first
    send_one(digest, now=)             one digest: claimed, then written, or skipped

For each digest due (its `next_due` at or before now, asked of the index `digest_due`):

1. Name the period it is due for: the latest send instant at or before now in its zone
   (`periods.due_at`). After downtime that is the latest period only: one email, not one per
   period missed.
2. Claim it with one UPDATE guarded on the `next_due` it was read with, moving it to the next
   send after now. Two ticks at once: only one UPDATE finds the row unchanged; the other counts
   0 and leaves it (exactly once does not rest on the tick's leases).
3. Build what it says (`content.content_of`) since the last one sent, and write one email to
   the outbox, in the same transaction as the claim, keyed by the digest and the period: the
   key is unique, so a period is written at most once even if a claim is redone by hand.
   An empty digest (nothing at risk and nothing changed; for a member, no date and no task) is
   claimed and not written.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from timekeeping.basics import wallclock
from timekeeping.digests import periods
from timekeeping.digests.choose import zone_of
from timekeeping.digests.content import content_of, render
from timekeeping.digests.tokens import unsubscribe_url
from timekeeping.models import Digest
from timekeeping.timers import outbox

PAGE = 500  # digests a tick takes; the rest are the next tick's


@dataclass
class Sent:
    """What the phase did: emails written, digests with nothing to say, claims another tick
    took first."""

    written: int = 0
    empty: int = 0
    taken: int = 0


def due(now: datetime):
    return Digest.objects.filter(next_due__lte=now).select_related(
        "brand__calendar", "brand__owner", "user").order_by("next_due", "pk")


def run_due(*, now: datetime, deadline: float | None = None,
            guard: Callable[[Digest], AbstractContextManager] | None = None) -> Sent:
    sent = Sent()
    # One time for the whole phase: the dates' "in 3 days" read the tick's instant.
    with wallclock.fixed(now):
        for digest in due(now)[:PAGE]:
            if deadline is not None and time.monotonic() > deadline:
                break  # its period is still due: the next tick takes it
            if guard is None:
                _count(sent, send_one(digest, now=now))
                continue
            with guard(digest):
                _count(sent, send_one(digest, now=now))
    return sent


def _count(sent: Sent, outcome: str) -> None:
    setattr(sent, outcome, getattr(sent, outcome) + 1)


def send_one(digest: Digest, *, now: datetime) -> str:
    """"written", "empty" or "taken" (another tick claimed it, or it was turned off)."""
    zone = zone_of(digest)
    if digest.period == Digest.Period.OFF:
        return "taken"
    choice = {"period": digest.period, "zone": zone, "hour": digest.hour,
              "weekday": digest.weekday}
    due_at, key = periods.due_at(now, **choice)
    since = digest.last_sent or due_at - periods.STEP[digest.period]
    with transaction.atomic():
        # The race of two ticks: the UPDATE is guarded on what this tick read.
        claimed = Digest.objects.filter(pk=digest.pk, next_due=digest.next_due,
                                        period=digest.period).update(
            next_due=periods.next_after(now, **choice), last_key=key, last_sent=now)
        if claimed != 1:
            return "taken"
        if key == digest.last_key or not digest.user.email:
            return "empty"  # sent for this period already (its hour was moved later)
        content = content_of(digest, now=now, since=since)
        if content.empty:
            return "empty"
        subject, text, html = render(content)
        link = unsubscribe_url(digest.pk)
        outbox.enqueue_email(
            brand=digest.brand, to=[digest.user.email], subject=subject, body=text, html=html,
            headers={"List-Unsubscribe": f"<{link}>",
                     "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
            key=f"digest:{digest.pk}:{key}")
    return "written"
