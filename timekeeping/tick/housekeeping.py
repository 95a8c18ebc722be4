"""Housekeeping (SPEC J9): the tick's last phase deletes what is no longer needed.

At most once an hour per database, under its own lease (one process at a time), 1,000 rows
at a time and at most ten deletes a tick:

- schedule run records 30 days old;
- delivered outbox rows 24 hours after delivery (a failed delivery stays for an operator);
- browser sessions that have ended;
- one-time form tokens spent more than a day ago (`timekeeping.access.once`: a page's form is
  posted again within moments, not a day later);
- on PostgreSQL, the records' months: this one and the next two made, and with
  `RECORDS_KEEP_MONTHS` set, the months past it dropped whole (`timekeeping.tick.partitions`);

and it marks abandoned the tick runs a killed tick left unfinished on a clock that no live
tick holds (a clock that ticks again marks its own at once, `tick.clock.abandon_runs`).

A pass that hit its cap, failed or was interrupted runs again on the next tick; only a pass
that finished waits an hour. (The product keeps no idempotency keys of its own yet.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.sessions.models import Session
from django.db.models import F, Q

from timekeeping.models import Delivery, Heartbeat, ScheduleRun, SpentToken, TickRun
from timekeeping.tick import partitions
from timekeeping.timers import leases

EVERY = timedelta(hours=1)
STALE = timedelta(hours=1)
ABANDONED = "abandoned: its tick process ended before the run finished"
BATCH = 1000
MAX_DELETES = 10
NAME = "housekeeping"
TOKENS_KEPT = timedelta(days=1)


@dataclass
class Pass:
    ran: bool = False
    finished: bool = False
    deleted: dict[str, int] = field(default_factory=dict)
    abandoned: int = 0
    months_made: list[str] = field(default_factory=list)
    months_dropped: list[str] = field(default_factory=list)


def targets(now: datetime):
    return [
        ("schedule runs", ScheduleRun.objects.filter(tick__lt=now - timedelta(days=30))
         .exclude(outcome=ScheduleRun.Outcome.RUNNING)),
        ("delivered outbox rows", Delivery.objects.filter(
            state=Delivery.State.SUCCEEDED, delivered__lt=now - timedelta(hours=24))),
        ("ended sessions", Session.objects.filter(expire_date__lt=now)),
        ("spent form tokens", SpentToken.objects.filter(spent__lt=now - TOKENS_KEPT)),
    ]


def run(*, now: datetime, holder: str) -> Pass:
    result = Pass()
    Heartbeat.objects.get_or_create(name=NAME)  # retries the read if another tick made it
    if Heartbeat.objects.filter(name=NAME, at__gt=now - EVERY).exists():
        return result
    if not leases.take(Heartbeat, NAME, holder=holder, now=now, until=now + timedelta(
            minutes=5)):
        return result
    result.ran = True
    try:
        deletes = 0
        for label, queryset in targets(now):
            while deletes < MAX_DELETES:
                keys = list(queryset.values_list("pk", flat=True)[:BATCH])
                if not keys:
                    break
                deletes += 1
                result.deleted[label] = result.deleted.get(label, 0) + len(keys)
                queryset.model.objects.filter(pk__in=keys).delete()
        result.abandoned = abandon_stale_runs(now)
        result.months_made, result.months_dropped = partitions.keep(
            settings.RECORDS_KEEP_MONTHS)
        result.finished = all(not queryset.exists() for _, queryset in targets(now))
    finally:
        extra = {"at": now} if result.finished else {}
        leases.give_back(Heartbeat, NAME, holder=holder, extra=extra)
    return result


def stale_runs(now: datetime):
    """Tick runs unfinished for an hour whose clock's lease their tick no longer holds."""
    live = (Q(test_clock__isnull=True, brand__lease_holder=F("holder"),
              brand__lease_until__gt=now)
            | Q(test_clock__isnull=False, test_clock__lease_holder=F("holder"),
                test_clock__lease_until__gt=now))
    return TickRun.objects.filter(finished__isnull=True, started__lt=now - STALE).exclude(live)


def abandon_stale_runs(now: datetime) -> int:
    return stale_runs(now).update(finished=now, error=ABANDONED)
