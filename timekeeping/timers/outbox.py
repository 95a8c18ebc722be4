"""The outbox (DESIGN decision 6, J9): deliveries written with what caused them, sent by the
tick's sweep at least once, each with an idempotency key the receiver can dedupe on.

The sweep takes up to 100 of the deliveries that are pending past their next attempt or running
past their lease, brands in turn (issue 31, "Fair shares"): each brand's oldest, then each
brand's second oldest, and so on, live mail before a test clock's (`practice`), so one brand's
burst delays only that brand and a rehearsal never delays real mail. It claims them (FOR UPDATE
SKIP LOCKED, so two sweeps never take one), sends them outside any transaction, and writes the
outcome; given a deadline it goes on claiming while deliveries are due and time is left. A
failure backs off (1, 2, 4 … minutes, at most 6 hours); after 10 attempts the delivery is
failed and stays for an operator. A sweep that dies after sending leaves the delivery running;
when its lease ends it is sent again: at least once.

Each channel has its sender (`send_with`, from the wiring): emails are sent here, one by one;
webhooks by `timekeeping.webhooks.sending`, many at once, which answers a failure with `Later`:
its own next attempt (the webhook schedule), or none.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import make_msgid

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import connection, transaction
from django.db.models import Case, F, IntegerField, Q, Value, When, Window
from django.db.models.functions import RowNumber
from django.template.loader import render_to_string

from timekeeping.basics import wallclock
from timekeeping.models import Brand, Delivery
from timekeeping.timers import firing

SWEEP_LIMIT = 100
LEASE = timedelta(minutes=5)
MAX_ATTEMPTS = 10
# A claim ranks this many times its limit, so a sweep beside another that holds the first of
# the rank still finds its own (`_claim`).
CANDIDATES = 4


class Later(Exception):
    """A sender's answer for a delivery not made: try it again at `at`, or never (None)."""

    def __init__(self, reason: str, at: datetime | None):
        super().__init__(reason)
        self.at = at


# A channel's sender: given the claimed deliveries of its channel and the sweep's instant, it
# sends them and answers, for each delivery's id, None (sent) or the exception that stopped it.
Sender = Callable[[list[Delivery], datetime], dict[str, Exception | None]]


def enqueue_email(*, brand: Brand, to: list[str], subject: str, body: str, key: str,
                  html: str = "", headers: dict[str, str] | None = None) -> None:
    """An email: plain text, and with `html` an HTML part beside it; `headers` are added to
    the sender's own (a digest's List-Unsubscribe)."""
    payload = {"to": to, "subject": subject, "body": body}
    if html:
        payload["html"] = html
    if headers:
        payload["headers"] = headers
    _enqueue(brand, Delivery.Channel.EMAIL, payload, key)


PRACTICE = "Practice run: "  # a test clock's email, in the reader's words (WORDS.md)
# A delivery a test clock's world caused carries its test clock's id under this payload key:
# the sweep takes live mail first (`_claim`). Senders read only their own keys.
WORLD_KEY = "test_clock"


def practice(subject: str, test_clock_id: str | None) -> str:
    """An email's subject line; in a test clock's world it starts "Practice run:"."""
    return f"{PRACTICE}{subject}" if test_clock_id else subject


def tell(*, brand: Brand, test_clock_id: str | None, to: list[str], subject: str, body: str,
         key: str) -> None:
    """Email people about a brand's work. In a test clock's world only the brand's owner hears
    it, its subject line saying it is a practice run: a rehearsal reaches no real person."""
    if test_clock_id:
        to = [brand.owner.email if brand.owner else ""]
        subject = practice(subject, test_clock_id)
    to = sorted({address for address in to if address})
    if to:
        payload = {"to": to, "subject": subject, "body": body}
        _enqueue(brand, Delivery.Channel.EMAIL, payload, key, world=test_clock_id)


def enqueue_event(*, brand: Brand, endpoint_id: str, event: str, key: str,
                  payload: dict | None = None) -> None:
    """A webhook: the event (a record's id; a test event's body is in `payload`) to one of
    the brand's endpoints, once per key."""
    _enqueue(brand, Delivery.Channel.WEBHOOK, payload or {}, key, endpoint_id=endpoint_id,
             event=event)


def _enqueue(brand: Brand, channel: str, payload: dict, key: str, *,
             endpoint_id: str | None = None, event: str = "", world: str | None = None) -> None:
    batch = firing.current()
    at = batch.instant if batch else wallclock.wall_now()
    world = world or (batch.test_clock.pk if batch and batch.test_clock is not None else None)
    if world:
        payload = {**payload, WORLD_KEY: world}
    # Due at once on the real clock: a delivery is real even when a test clock caused it.
    delivery = Delivery.fresh(brand=brand, channel=channel, payload=payload, idempotency_key=key,
                              next_attempt=min(at, wallclock.wall_now()),
                              created=wallclock.wall_now(), endpoint_id=endpoint_id, event=event)
    if batch is not None:
        batch.deliver(delivery)
    else:
        Delivery.objects.bulk_create([delivery], ignore_conflicts=True)  # a key is sent once


@dataclass
class SweepResult:
    sent: int = 0
    retried: int = 0
    failed: int = 0


_senders: dict[str, Sender] = {}


def send_with(channel: str, sender: Sender) -> None:
    """Make `sender` the one of a channel (the wiring does, for webhooks)."""
    _senders[channel] = sender


def sweep(*, now: datetime | None = None, limit: int = SWEEP_LIMIT,
          deadline: float | None = None) -> SweepResult:
    """Send what is due: one claim of at most `limit`, or with `deadline` (a time.monotonic()
    instant) claim after claim while a full one was due and time is left."""
    now = now or wallclock.wall_now()
    result = SweepResult()
    while True:
        claimed = _claim(now, limit)
        by_channel: dict[str, list[Delivery]] = {}
        for delivery in claimed:
            by_channel.setdefault(delivery.channel, []).append(delivery)
        for channel, deliveries in by_channel.items():
            outcomes = _senders.get(channel, _send_emails)(deliveries, now)
            _settle(deliveries, outcomes, now, result)
        if deadline is None or len(claimed) < limit or time.monotonic() >= deadline:
            return result


def _settle(deliveries: list[Delivery], outcomes: dict[str, Exception | None], now: datetime,
            result: SweepResult) -> None:
    """The sent ones succeed in one UPDATE (one per delivery was half a webhook sweep's
    time); each one that failed is settled on its own, by its own next attempt."""
    sent = []
    for delivery in deliveries:
        error = outcomes.get(delivery.pk)
        if error is None:
            sent.append(delivery.pk)
        else:
            _failed(delivery, error, now, result)
    if sent:
        Delivery.objects.filter(pk__in=sent, state=Delivery.State.RUNNING).update(
            state=Delivery.State.SUCCEEDED, delivered=wallclock.wall_now(), lease_until=None,
            last_error="",
        )
        result.sent += len(sent)


def _send_emails(deliveries: list[Delivery], now: datetime) -> dict[str, Exception | None]:
    outcomes: dict[str, Exception | None] = {}
    for delivery in deliveries:
        try:
            if delivery.channel != Delivery.Channel.EMAIL:
                raise Later(f"no sender for the {delivery.channel} channel", None)
            message(delivery).send(fail_silently=False)
        except Exception as error:  # noqa: BLE001 - any failure to send is recorded and retried
            outcomes[delivery.pk] = error
        else:
            outcomes[delivery.pk] = None
    return outcomes


def sending_past_lease(now: datetime) -> Q:
    """Deliveries whose sweep died after claiming them: sent again by the next sweep."""
    return Q(state=Delivery.State.RUNNING, lease_until__lt=now)


def _claim(now: datetime, limit: int) -> list[Delivery]:
    """At most `limit` due deliveries, brands in turn: ranked within their brand and world
    (live or a test clock's) oldest first, the claim takes live mail before practice, then
    the lowest ranks (each brand's first, then each brand's second…), oldest first among
    equals.

    In one transaction: the ranking reads the first CANDIDATES times `limit` in that order
    (PostgreSQL refuses FOR UPDATE beside a window function), then locks those of them still
    due, SKIP LOCKED, and keeps the first `limit` of the rank. Two sweeps at once rank the same
    rows (neither sees the other's claim before it commits): the second skips what the first
    holds and takes the next in turn, so it neither waits nor sends a delivery twice, and a
    row claimed and settled since the ranking is no longer due and is left."""
    due = Q(state=Delivery.State.PENDING, next_attempt__lte=now) | sending_past_lease(now)
    practice = Case(When(payload__has_key=WORLD_KEY, then=Value(1)), default=Value(0),
                    output_field=IntegerField())
    with transaction.atomic():
        _sort_in_memory()
        ranked = list(Delivery.objects.filter(due).alias(practice=practice).annotate(
            turn=Window(RowNumber(), partition_by=[F("brand_id"), practice],
                        order_by=[F("created").asc(), F("id").asc()]))
            .order_by("practice", "turn", "created", "id")
            .values_list("id", flat=True)[:limit * CANDIDATES])
        free = set(Delivery.objects.select_for_update(skip_locked=True)
                   .filter(due, id__in=ranked).values_list("id", flat=True))
        chosen = [pk for pk in ranked if pk in free][:limit]
        Delivery.objects.filter(pk__in=chosen).update(
            state=Delivery.State.RUNNING, lease_until=now + LEASE, attempts=F("attempts") + 1
        )
        # Read whole once claimed (locked by this transaction): only the ids of the rest.
        found = Delivery.objects.in_bulk(chosen)
    return [found[pk] for pk in chosen]


def _sort_in_memory() -> None:
    """On PostgreSQL, room for the ranking's sort in memory for this transaction: with tens of
    thousands due, the default 4 MB spills it to disk (bench/outbox_claim.py)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL work_mem = '32MB'")


def message(delivery: Delivery) -> EmailMultiAlternatives:
    """An email delivery as it is sent: its plain text, and an HTML part: the one written
    with it (a digest's), else one drawn from the text (its paragraphs, and each address in
    it a link), so the two always say the same; with the headers written with it (a digest's
    List-Unsubscribe)."""
    payload = delivery.payload
    found = EmailMultiAlternatives(
        subject=payload["subject"], body=payload["body"], to=payload["to"],
        from_email=settings.DEFAULT_FROM_EMAIL,
        headers={**payload.get("headers", {}),
                 "Idempotency-Key": delivery.idempotency_key,
                 "Message-ID": make_msgid(idstring=delivery.pk, domain="keeping-time")},
    )
    found.attach_alternative(payload.get("html") or render_to_string("emails/message.html", {
        "subject": payload["subject"], "body": payload["body"]}), "text/html")
    return found


def _failed(delivery: Delivery, error: Exception, now: datetime, result: SweepResult) -> None:
    message = str(error) if isinstance(error, Later) else f"{type(error).__name__}: {error}"
    message = message.replace("\x00", "\\0")[:2000]
    if isinstance(error, Later) and error.at is not None:
        changes = {"state": Delivery.State.PENDING, "lease_until": None,
                   "next_attempt": error.at}
        result.retried += 1
    elif isinstance(error, Later) or delivery.attempts >= MAX_ATTEMPTS:
        changes = {"state": Delivery.State.FAILED, "lease_until": None}
        result.failed += 1
    else:
        backoff = min(timedelta(minutes=2 ** (delivery.attempts - 1)), timedelta(hours=6))
        changes = {"state": Delivery.State.PENDING, "lease_until": None,
                   "next_attempt": now + backoff}
        result.retried += 1
    Delivery.objects.filter(pk=delivery.pk).update(last_error=message, **changes)


def retry(delivery_ids: Iterable[str], *, now: datetime) -> int:
    """Send failed deliveries again: each goes back to pending, due `now`, its attempts reset
    (its last error stays until the next attempt). Returns how many went back.

    Only deliveries still failed move, in one guarded UPDATE: a delivery that is pending,
    being sent by a sweep at this moment, or sent, is left as it is."""
    return Delivery.objects.filter(pk__in=list(delivery_ids),
                                   state=Delivery.State.FAILED).update(
        state=Delivery.State.PENDING, attempts=0, next_attempt=now, lease_until=None)
