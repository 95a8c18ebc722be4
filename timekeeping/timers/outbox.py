"""The outbox (DESIGN decision 6, J9): deliveries written with what caused them, sent by the
tick's sweep at least once, each with an idempotency key the receiver can dedupe on.

The sweep takes up to 100 of the oldest deliveries that are pending past their next attempt
or running past their lease, claims them (FOR UPDATE SKIP LOCKED, so two sweeps never take
one), sends each outside any transaction, and writes the outcome. A failure backs off
(1, 2, 4 … minutes, at most 6 hours); after 10 attempts the delivery is failed and stays for
an operator. A sweep that dies after sending leaves the delivery running; when its lease
ends it is sent again: at least once.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import make_msgid

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.db.models import F, Q
from django.template.loader import render_to_string

from timekeeping.basics import wallclock
from timekeeping.models import Brand, Delivery
from timekeeping.timers import firing

SWEEP_LIMIT = 100
LEASE = timedelta(minutes=5)
MAX_ATTEMPTS = 10
WEBHOOK_TIMEOUT_S = 10


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
        enqueue_email(brand=brand, to=to, subject=subject, body=body, key=key)


def enqueue_webhook(*, brand: Brand, url: str, body: dict, key: str) -> None:
    _enqueue(brand, Delivery.Channel.WEBHOOK, {"url": url, "json": body}, key)


def _enqueue(brand: Brand, channel: str, payload: dict, key: str) -> None:
    batch = firing.current()
    at = batch.instant if batch else wallclock.wall_now()
    # Due at once on the real clock: a delivery is real even when a test clock caused it.
    delivery = Delivery(brand=brand, channel=channel, payload=payload, idempotency_key=key,
                        next_attempt=min(at, wallclock.wall_now()), created=wallclock.wall_now())
    if batch is not None:
        batch.deliver(delivery)
    else:
        Delivery.objects.bulk_create([delivery], ignore_conflicts=True)  # a key is sent once


@dataclass
class SweepResult:
    sent: int = 0
    retried: int = 0
    failed: int = 0


def sweep(*, now: datetime | None = None, limit: int = SWEEP_LIMIT) -> SweepResult:
    now = now or wallclock.wall_now()
    result = SweepResult()
    for delivery in _claim(now, limit):
        try:
            _send(delivery)
        except Exception as error:  # noqa: BLE001 - any failure to send is recorded and retried
            _failed(delivery, error, now, result)
        else:
            Delivery.objects.filter(pk=delivery.pk, state=Delivery.State.RUNNING).update(
                state=Delivery.State.SUCCEEDED, delivered=wallclock.wall_now(), lease_until=None,
                last_error="",
            )
            result.sent += 1
    return result


def sending_past_lease(now: datetime) -> Q:
    """Deliveries whose sweep died after claiming them: sent again by the next sweep."""
    return Q(state=Delivery.State.RUNNING, lease_until__lt=now)


def _claim(now: datetime, limit: int) -> list[Delivery]:
    due = Q(state=Delivery.State.PENDING, next_attempt__lte=now) | sending_past_lease(now)
    with transaction.atomic():
        claimed = list(
            Delivery.objects.select_for_update(skip_locked=True).filter(due).order_by("created")[
                :limit
            ]
        )
        Delivery.objects.filter(pk__in=[d.pk for d in claimed]).update(
            state=Delivery.State.RUNNING, lease_until=now + LEASE, attempts=F("attempts") + 1
        )
    for delivery in claimed:
        delivery.attempts += 1
    return claimed


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


def _send(delivery: Delivery) -> None:
    payload = delivery.payload
    if delivery.channel == Delivery.Channel.EMAIL:
        message(delivery).send(fail_silently=False)
        return
    request = urllib.request.Request(
        payload["url"], data=json.dumps(payload["json"]).encode(), method="POST",
        headers={"Content-Type": "application/json",
                 "Idempotency-Key": delivery.idempotency_key},
    )
    with urllib.request.urlopen(request, timeout=WEBHOOK_TIMEOUT_S) as response:  # noqa: S310
        if not 200 <= response.status < 300:
            raise RuntimeError(f"webhook answered {response.status}")


def _failed(delivery: Delivery, error: Exception, now: datetime, result: SweepResult) -> None:
    message = f"{type(error).__name__}: {error}"
    if delivery.attempts >= MAX_ATTEMPTS:
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
