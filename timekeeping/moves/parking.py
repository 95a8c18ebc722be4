"""Backoff and parking for a connection whose minute of timed moves fails (issue 31,
docs/operating.md "Failures, backoff and parking").

    failed(link, error=…, instant=…)   a failed minute written on the connection: its next
                                       attempt, or parked after `brand.park_after` in a row
    succeeded(link)                    the fields a minute that worked resets
    failed_with(link)                  the last line of its last failure's error
    retry_now(link_id, …)              a parked connection tried again at the next tick
    give_up(link_id, …)                a parked connection paused: no timed move runs until
                                       someone resumes it

A failure is of the connection's whole minute: its database alias unreachable, a table
missing, a reminder or a hold's give-back raising. A refused row is not one: it is set aside
for an hour (A8) and the minute goes on. The waits are the timers' own (`timers.parking.delay`:
1 minute, doubling, at most 6 hours, ±10% fixed by the connection's id and the attempt). The
job asks only for connections whose next attempt has come and that are not parked
(`job.due_connections`), so a connection backing off costs the tick nothing.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from timekeeping.models import Connection
from timekeeping.timers import parking, records

RESET = {"attempts": 0, "next_attempt": None, "last_error": ""}


@transaction.atomic
def failed(link: Connection, *, error: BaseException, instant: datetime) -> bool:
    """Write a failed minute of `link`: the attempt counted, the error kept, the next attempt
    set, or the connection parked. Writes `connection.failed` (and `connection.parked`).
    True when it was parked."""
    # Locked: of two ticks that ran the same minute (the second took the lease the first gave
    # back before writing its failure), one counts it; the other finds the next attempt set
    # past its own instant, a try that was not due, and counts nothing.
    found = (Connection.objects.select_for_update(of=("self",)).select_related("brand")
             .filter(pk=link.pk, parked__isnull=True).first())
    if found is None or (found.next_attempt is not None and found.next_attempt > instant):
        return False
    attempts = found.attempts + 1
    park = attempts >= found.brand.park_after
    upcoming = None if park else instant + parking.delay(attempts, seed=found.pk)
    Connection.objects.filter(pk=found.pk).update(
        attempts=attempts, last_error=parking.kept_error(error), next_attempt=upcoming,
        parked=instant if park else None)
    message = records.error_text(error)
    _write("connection.failed", found, instant, {
        "connection": found.pk, "attempts": attempts, "error": message,
        "next_attempt": upcoming.isoformat() if upcoming else None})
    if park:
        _write("connection.parked", found, instant, {
            "connection": found.pk, "attempts": attempts, "error": message})
    return park


def succeeded(link: Connection) -> dict:
    """What a minute that worked writes on its connection: after failures, the count back to
    nought (the next failure waits a minute again); nothing when none failed."""
    return dict(RESET) if link.attempts or link.next_attempt else {}


def failed_with(link: Connection) -> str:
    """The last line of its last failed minute's error (the exception's type and message);
    empty when none failed since the last that worked."""
    return parking.failed_with(link.last_error)


def _write(kind: str, link: Connection, instant: datetime, data: dict) -> None:
    records.write(kind, brand=link.brand, instant=instant, data=data)


class NotParked(Exception):
    """The connection is not parked (it was retried or given up meanwhile)."""


@transaction.atomic
def retry_now(link_id: str, *, by: str, now: datetime) -> Connection:
    """Try a parked connection again: the next tick runs its minute. Its attempts stay
    counted, so one more failure parks it again at once."""
    link = _parked(link_id)
    Connection.objects.filter(pk=link.pk).update(parked=None, next_attempt=None)
    _write("connection.retried", link, now, {"connection": link.pk, "by": by,
                                             "attempts": link.attempts})
    link.refresh_from_db()
    return link


@transaction.atomic
def give_up(link_id: str, *, by: str, now: datetime) -> Connection:
    """Stop trying a parked connection: it is paused (no timed move runs until someone
    resumes it, on the Timed moves page or in the admin), its failures forgotten, so once
    resumed it starts again from a minute's wait."""
    link = _parked(link_id)
    Connection.objects.filter(pk=link.pk).update(paused=True, parked=None, **RESET)
    _write("connection.given_up", link, now, {"connection": link.pk, "by": by,
                                              "attempts": link.attempts})
    link.refresh_from_db()
    return link


def _parked(link_id: str) -> Connection:
    # Locked: a second Retry (or a Give up beside it) waits, then finds it no longer parked.
    link = (Connection.objects.select_for_update(of=("self",)).select_related("brand")
            .filter(pk=link_id, parked__isnull=False).first())
    if link is None:
        raise NotParked(link_id)
    return link
