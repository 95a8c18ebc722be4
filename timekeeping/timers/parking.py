"""Backoff and parking for timers whose handler fails (issue 31, docs/operating.md).

    delay(attempts, seed=…)            the wait after the `attempts`-th failure (the one
                                       schedule of every kind of work that backs off: timers
                                       here, a connection's timed moves in `moves.parking`,
                                       an interval schedule's runs in `schedules.parking`)
    come(instant)                      what backs off and whose next attempt has come
    kept_error(error)                  a failure's traceback as a row keeps it
    failed_with(last_error)            the last line of a kept error: its type and message
    failed(timer, error=…, instant=…)  a failure written on the timer: its next attempt, or
                                       parked after `brand.park_after` attempts
    retry_now(timer_id, …)             a parked timer armed again: the next tick fires it
    give_up(timer_id, …)               a parked timer ended for good (cancelled)

The waits are 1 minute after the first failure, doubling (2, 4, 8 …), never more than
6 hours, each moved by up to ±10% so a thousand timers that failed together do not all come
back at the same minute. The jitter is fixed by the timer's id and attempt, so the same
failure always waits the same time (and tests can say it exactly).

A parked timer is held (`Timer.State.HELD`, `parked` set): out of the tick's index, so no
phase of the tick tries it again, and still its key's live timer, so a moved date supersedes
it as it would an armed one. Its failures are written on its row, not kept by the tick: what a
tick holds of failing timers is nothing (the engine asks the index, which leaves out a timer
whose next attempt has not come).
"""

from __future__ import annotations

import hashlib
import traceback
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q

from timekeeping.models import Timer
from timekeeping.timers import records

FIRST_WAIT = timedelta(minutes=1)
LONGEST_WAIT = timedelta(hours=6)
JITTER = 0.10  # each wait moved by up to this share, either way
PARKED_BY = "parked: its work failed too many times in a row"


def delay(attempts: int, *, seed: str) -> timedelta:
    """The wait after the `attempts`-th failure in a row (1 min, 2, 4 … at most 6 h), moved
    by a jitter fixed by `seed` and the attempt, in whole seconds."""
    base = min(FIRST_WAIT * 2 ** min(max(attempts, 1) - 1, 30), LONGEST_WAIT)
    digest = hashlib.sha256(f"{seed}:{attempts}".encode()).digest()
    share = int.from_bytes(digest[:8], "big") / 2**64  # in [0, 1)
    return timedelta(seconds=round(base.total_seconds() * (1 + JITTER * (2 * share - 1))))


def come(instant: datetime) -> Q:
    """Rows whose next attempt, if a failure set one, has come by `instant`: for armed timers,
    with `owed__lte=instant`, what the tick takes; for connections, those the job tries."""
    return Q(next_attempt__isnull=True) | Q(next_attempt__lte=instant)


def kept_error(error: BaseException) -> str:
    """The failure's traceback as a row's `last_error` keeps it: its last 4,000 characters,
    with no NUL (which PostgreSQL's text refuses)."""
    return "".join(traceback.format_exception(error))[-4000:].replace("\x00", "\\0")


def failed_with(last_error: str) -> str:
    """The last line of a kept error (the exception's type and message); empty for none."""
    lines = last_error.strip().splitlines()
    return lines[-1] if lines else ""


def failed(timer: Timer, *, error: BaseException, instant: datetime, details: dict) -> bool:
    """Write a failure of `timer` (selected FOR UPDATE by the caller, so its `attempts` is the
    row's): the attempt counted, the error kept, the next attempt set, or the timer parked.
    Writes `timer.failed` (and `timer.parked`). True when it was parked."""
    attempts = timer.attempts + 1
    park = attempts >= timer.brand.park_after
    fields: dict = {
        "attempts": attempts,
        "last_error": kept_error(error),
        "next_attempt": None if park else instant + delay(attempts, seed=timer.id),
    }
    if park:
        fields.update(state=Timer.State.HELD, parked=instant, ended_by=PARKED_BY)
    Timer.objects.filter(pk=timer.pk).update(**fields)
    message = records.error_text(error)
    upcoming = fields["next_attempt"]
    data = {**details, "error": message, "attempts": attempts,
            "next_attempt": upcoming.isoformat() if upcoming else None}
    _write("timer.failed", timer, instant, data)
    if park:
        _write("timer.parked", timer, instant,
               {"timer_kind": timer.kind, "key": timer.key, "owner": timer.owner_id,
                "attempts": attempts, "error": message})
    return park


def _write(kind: str, timer: Timer, instant: datetime, data: dict) -> None:
    records.write(kind, brand=timer.brand, test_clock=timer.test_clock, instant=instant,
                  timer=timer.id, data=data)


class NotParked(Exception):
    """The timer is not parked (it was retried, given up or superseded meanwhile)."""


@transaction.atomic
def retry_now(timer_id: str, *, by: str, now: datetime) -> Timer:
    """Arm a parked timer again with its next attempt now: the next tick of its clock fires
    it. Its attempts stay counted, so one more failure parks it again at once."""
    timer = _parked(timer_id)
    Timer.objects.filter(pk=timer.pk).update(state=Timer.State.ARMED, parked=None,
                                             next_attempt=None, ended_by="")
    _write("timer.retried", timer, now, {"by": by, "attempts": timer.attempts})
    timer.refresh_from_db()
    return timer


@transaction.atomic
def give_up(timer_id: str, *, by: str, now: datetime) -> Timer:
    """End a parked timer for good: cancelled, its work not done, on the record."""
    timer = _parked(timer_id)
    Timer.objects.filter(pk=timer.pk).update(state=Timer.State.CANCELLED, parked=None,
                                             ended_by=f"given up by {by}"[:200])
    _write("timer.given_up", timer, now, {"by": by, "attempts": timer.attempts,
                                          "timer_kind": timer.kind, "key": timer.key})
    timer.refresh_from_db()
    return timer


def _parked(timer_id: str) -> Timer:
    # Locked: a second Retry (or a Give up beside it) waits, then finds it no longer parked.
    timer = (Timer.objects.select_for_update(of=("self",)).select_related("brand", "test_clock")
             .filter(pk=timer_id, state=Timer.State.HELD, parked__isnull=False).first())
    if timer is None:
        raise NotParked(timer_id)
    return timer
