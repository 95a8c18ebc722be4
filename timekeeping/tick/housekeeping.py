"""Housekeeping (SPEC J9): the tick's last phase deletes what is no longer needed.

At most once an hour per database, under its own lease (one process at a time), 1,000 rows
at a time and at most ten deletes a tick:

- schedule run records 30 days old;
- delivered emails 24 hours after delivery (a failed one stays until it is dismissed);
- a webhook's deliveries, sent or failed, and their attempts 30 days after they were made
  (the events stay on the record, and can be sent again);
- failed deliveries 30 days after a brand's people dismissed them (`attention.settling`), with
  their dismissals; a dismissal whose delivery is gone goes too, one whose delivery is being
  sent again stays until it is sent or fails;
- browser sessions that have ended (what `manage.py clearsessions` does, in batches);
- one-time form tokens spent more than a day ago (`timekeeping.access.once`: a page's form is
  posted again within moments, not a day later);
- API keys 30 days after they were revoked;
- portal invitations 30 days after they were accepted or expired;
- deleted brands' archives 30 days after the deletion, with the sign-in accounts of people no
  other brand has (`timekeeping.brands.archives`);
- on PostgreSQL, the records' months: this one and the next two made, and with
  `RECORDS_KEEP_MONTHS` set, the months past it dropped whole (`timekeeping.tick.partitions`);

and it marks abandoned the tick runs a killed tick left unfinished on a clock that no live
tick holds (a clock that ticks again marks its own at once, `tick.clock.abandon_runs`).

A pass that hit its cap, failed or was interrupted runs again on the next tick; only a pass
that finished waits an hour. Every age is measured from the tick's instant, its clock, not
the wall clock. (The product keeps no idempotency keys of its own yet.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q, QuerySet

from timekeeping.attention import settling
from timekeeping.brands import archives
from timekeeping.models import (
    ApiKey,
    Delivery,
    Dismissal,
    Heartbeat,
    Invitation,
    ScheduleRun,
    SpentToken,
    TickRun,
)
from timekeeping.tick import partitions
from timekeeping.timers import leases

EVERY = timedelta(hours=1)
STALE = timedelta(hours=1)
ABANDONED = "abandoned: its tick process ended before the run finished"
BATCH = 1000
MAX_DELETES = 10
NAME = "housekeeping"
TOKENS_KEPT = timedelta(days=1)
REVOKED_KEYS_KEPT = timedelta(days=30)
INVITATIONS_KEPT = timedelta(days=30)
WEBHOOK_LOG_KEPT = timedelta(days=30)
# A delivery on its way (pending, or claimed by a sweep) is not deleted, dismissed or not.
ON_ITS_WAY = (Delivery.State.PENDING, Delivery.State.RUNNING)


@dataclass
class Pass:
    ran: bool = False
    finished: bool = False
    deleted: dict[str, int] = field(default_factory=dict)
    abandoned: int = 0
    months_made: list[str] = field(default_factory=list)
    months_dropped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Store:
    """One kind of row housekeeping deletes: what is due for deletion, and how a batch of
    their keys is deleted (by key, unless the store says more)."""

    label: str
    due: QuerySet
    delete: Callable[[list], None] | None = None

    def remove(self, keys: list) -> None:
        if self.delete is not None:
            self.delete(keys)
        else:
            self.due.model.objects.filter(pk__in=keys).delete()


def targets(now: datetime) -> list[Store]:
    """Every store, in the order a pass deletes from them, with the age each row must reach."""
    return [
        Store("schedule runs", ScheduleRun.objects.filter(tick__lt=now - timedelta(days=30))
              .exclude(outcome=ScheduleRun.Outcome.RUNNING)),
        Store("delivered outbox rows", Delivery.objects.filter(
            state=Delivery.State.SUCCEEDED, channel=Delivery.Channel.EMAIL,
            delivered__lt=now - timedelta(hours=24))),
        Store("webhook deliveries and their log", Delivery.objects.filter(
            channel=Delivery.Channel.WEBHOOK, created__lt=now - WEBHOOK_LOG_KEPT,
            state__in=[Delivery.State.SUCCEEDED, Delivery.State.FAILED])),
        Store("dismissed deliveries", dismissed_deliveries(now), _delete_dismissed),
        Store("ended sessions", Session.objects.filter(expire_date__lt=now)),
        Store("spent form tokens", SpentToken.objects.filter(spent__lt=now - TOKENS_KEPT)),
        Store("revoked API keys", ApiKey.objects.filter(
            revoked__lt=now - REVOKED_KEYS_KEPT)),
        Store("used or expired invitations", Invitation.objects.filter(
            Q(accepted__lt=now - INVITATIONS_KEPT) | Q(expires__lt=now - INVITATIONS_KEPT))),
        Store("deleted brands past their 30 days", archives.past(now), archives.forget),
    ]


def dismissed_deliveries(now: datetime) -> QuerySet:
    """Dismissals of deliveries made more than 30 days before `now`, except those whose
    delivery is on its way again (such a dismissal waits until it is sent or fails)."""
    on_its_way = Delivery.objects.filter(pk=OuterRef("row"), brand=OuterRef("brand"),
                                         state__in=ON_ITS_WAY)
    return Dismissal.objects.filter(
        kind="undelivered", at__lt=now - settling.DISMISSED_DELIVERY_KEPT).exclude(
        Exists(on_its_way))


def _delete_dismissed(keys: list) -> None:
    """The deliveries of these dismissals, then the dismissals, together. A delivery sent
    again since the batch was read (a retry between the read and this) is left alone."""
    with transaction.atomic():
        rows = list(Dismissal.objects.filter(pk__in=keys).values_list("row", flat=True))
        Delivery.objects.filter(pk__in=rows).exclude(state__in=ON_ITS_WAY).delete()
        Dismissal.objects.filter(pk__in=keys).delete()


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
        for store in targets(now):
            while deletes < MAX_DELETES:
                # Unordered: a batch is any 1,000 of them, read without a sort.
                keys = list(store.due.order_by().values_list("pk", flat=True)[:BATCH])
                if not keys:
                    break
                deletes += 1
                result.deleted[store.label] = result.deleted.get(store.label, 0) + len(keys)
                store.remove(keys)
        result.abandoned = abandon_stale_runs(now)
        result.months_made, result.months_dropped = partitions.keep(
            settings.RECORDS_KEEP_MONTHS)
        result.finished = all(not store.due.exists() for store in targets(now))
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
