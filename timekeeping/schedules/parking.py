"""Backoff and parking for a schedule whose runs fail (issue 31, docs/operating.md "Failures,
backoff and parking").

    failed(row, run=…, reason=…, error=…)  a failed run written on its schedule: its next due
                                           time moved past the wait, or parked after
                                           `brand.park_after` failed runs in a row
    succeeded(row)                         a run that worked: the count back to nought
    failed_with(row)                       the last line of its last failure's error
    retry_now(schedule_id, …)              a parked schedule run by hand at the next tick, its
                                           grid going on
    give_up(schedule_id, …)                a parked schedule paused: no run until someone
                                           resumes it

A failure is a run recorded `failed`: its action raised, it outlasted its limit
(`deadline_exceeded`) or it was lost with its process (`lease_expired`). Each run is counted
once: only what ends a run still running records it (`engine._finish`). The waits are the
timers' own (`timers.parking.delay`: 1 minute, doubling, at most 6 hours, ±10% fixed by the
schedule's id and the attempt), counted from the run's tick, which is its clock (a test
clock's time on a walk). The schedule's next due time becomes the first time of its grid (or
its next wall time) at or after the wait's end, never earlier than it already was: a schedule
whose interval is longer than the wait runs at its next time as before. The tick takes no
parked schedule (`engine.claim_due`, and a test clock's walk), writes no skip for it, and
holds nothing of failures: they are on the schedule's row.

A schedule of the product's own (no brand) parks after PARK_AFTER failed runs and writes no
record (its failures are the operator's: the admin and `manage.py schedules`).
"""

from __future__ import annotations

from contextlib import contextmanager
from datetime import datetime, timedelta

from django.db import router, transaction

from timekeeping.models import PARK_AFTER, Brand, Schedule, ScheduleRun, TestClock
from timekeeping.schedules.declare import next_due_after
from timekeeping.timers import parking, records

# "At or after" the wait's end, asked as "strictly after" a microsecond before it.
JUST_BEFORE = timedelta(microseconds=1)
RESET = {"attempts": 0, "last_error": ""}


@contextmanager
def _both():
    """One transaction on the default database (records) and the schedules' store: the same
    one when the store is the default."""
    with transaction.atomic(), transaction.atomic(using=router.db_for_write(Schedule)):
        yield


def failed(row: Schedule, *, run: ScheduleRun, reason: str,
           error: BaseException | None = None) -> bool:
    """Write a failed run of `row`: the attempt counted, the error kept, the next due time
    moved past the wait, or the schedule parked. Writes `schedule.failed` (and
    `schedule.parked`) for a brand's schedule. True when it was parked."""
    instant = run.tick
    with _both():
        # Locked: a Retry now or Give up beside it waits, then reads this count. The
        # schedule's lease keeps a second run of it from failing at the same time.
        found = Schedule.objects.select_for_update().filter(pk=row.pk).first()
        if found is None:
            return False
        attempts = found.attempts + 1
        park = found.parked is None and attempts >= _park_after(row)
        fields: dict = {"attempts": attempts,
                        "last_error": parking.kept_error(error) if error else reason}
        if park:
            fields["parked"] = instant
        elif found.parked is None:
            fields["next_due"] = _after_wait(found, instant + parking.delay(attempts,
                                                                            seed=found.pk))
        Schedule.objects.filter(pk=found.pk).update(**fields)
        upcoming = fields.get("next_due")
        said = reason.replace("\x00", "\\0")[:500]
        _write("schedule.failed", row, instant, {
            "schedule": row.name, "run": run.pk, "reason": said, "attempts": attempts,
            "next_due": upcoming.isoformat() if upcoming else None})
        if park:
            _write("schedule.parked", row, instant, {
                "schedule": row.name, "schedule_id": row.pk, "run": run.pk,
                "attempts": attempts, "error": said})
    return park


def _park_after(row: Schedule) -> int:
    brand = _brand_of(row)
    return brand.park_after if brand is not None else PARK_AFTER


def _brand_of(row: Schedule) -> Brand | None:
    """Its brand, or None: the product's own, or one whose brand was deleted in the default
    database while its row stayed in another store (SCHEDULES_STORE, J6)."""
    try:
        return row.brand
    except Brand.DoesNotExist:
        return None


def _after_wait(found: Schedule, over: datetime) -> datetime:
    """The first due time at or after the wait is `over`, and not before the one it has."""
    kept = found.next_due or over
    return max(kept, next_due_after(at=found.at, every_s=found.every_s, due=kept,
                                    after=over - JUST_BEFORE))


def succeeded(row: Schedule) -> None:
    """A run that worked: after failures, the count back to nought (the next failure waits a
    minute again). `row` was read by the tick that claimed it; the schedule's lease kept any
    other run of it from counting since, so one that never failed costs no write."""
    if row.attempts:
        Schedule.objects.filter(pk=row.pk).update(**RESET)


def failed_with(row: Schedule) -> str:
    """The last line of its last failed run's error; empty when none failed since the last
    that worked."""
    return parking.failed_with(row.last_error)


def _write(kind: str, row: Schedule, instant: datetime, data: dict) -> None:
    brand = _brand_of(row)
    if brand is not None:  # the product's own schedules are the operator's
        records.write(kind, brand=brand, test_clock=row.test_clock, instant=instant, data=data)


class NotParked(Exception):
    """The schedule is not parked (it was retried or given up meanwhile)."""


def retry_now(schedule_id: str, *, by: str, now: datetime) -> Schedule:
    """Run a parked schedule by hand at the next tick, beside its grid, which goes on from its
    first time after now (on its own clock: a test clock's time). Its attempts stay counted,
    so one more failure parks it again at once."""
    with _both():
        row = _parked(schedule_id)
        at = _now_on(row, now)
        Schedule.objects.filter(pk=row.pk).update(
            parked=None, run_requested=True,
            next_due=next_due_after(at=row.at, every_s=row.every_s, due=row.next_due or at,
                                    after=at))
        _write("schedule.retried", row, at, {"schedule": row.name, "by": by,
                                             "attempts": row.attempts})
    row.refresh_from_db()
    return row


def give_up(schedule_id: str, *, by: str, now: datetime) -> Schedule:
    """Stop trying a parked schedule: it is paused (each due time recorded skipped until
    someone resumes it, as a pause does), its failures forgotten, so once resumed a failure
    waits a minute again."""
    with _both():
        row = _parked(schedule_id)
        Schedule.objects.filter(pk=row.pk).update(paused=True, parked=None,
                                                  run_requested=False, **RESET)
        _write("schedule.given_up", row, _now_on(row, now), {
            "schedule": row.name, "by": by, "attempts": row.attempts})
    row.refresh_from_db()
    return row


def _parked(schedule_id: str) -> Schedule:
    # Locked: a second Retry (or a Give up beside it) waits, then finds it no longer parked.
    row = Schedule.objects.select_for_update().filter(pk=schedule_id,
                                                      parked__isnull=False).first()
    if row is None:
        raise NotParked(schedule_id)
    return row


def _now_on(row: Schedule, now: datetime) -> datetime:
    """Now on the schedule's clock: its test clock's time (in the default database, asked by
    id: the store may be another), else `now`."""
    if row.test_clock_id is None:
        return now
    frozen = TestClock.objects.filter(pk=row.test_clock_id).values_list("frozen_time",
                                                                         flat=True).first()
    return frozen or now
