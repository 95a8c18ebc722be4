"""Sending webhooks: the outbox's sender for its webhook channel (issue 30, `docs/webhooks.md`).

A sweep hands over its claimed webhook deliveries. Each is signed by the Standard Webhooks
library (`webhook-id`, `webhook-timestamp`, `webhook-signature`: both secrets during a
rotation), posted through the SSRF guard (`transport.post`: the address checked is the one
connected to, no redirect followed, 5 s to connect and 15 s in all, 64 KB read), and logged as
a `WebhookAttempt`. The posts run side by side in a pool of threads that touch no database;
reading and writing stay on the sweep's own connection.

The answer decides what comes next:
- a 2xx is sent; the endpoint is failing no more;
- a 410 turns the endpoint off (its owner is told); the event is failed for it;
- anything else (an error, a timeout, a refused address, another status) is tried again on
  the schedule below, each wait counted from the try before it, with a tenth of jitter; a
  429 or 503 with `Retry-After` waits what it asks (at most 24 hours); after the last try
  the event is failed for that endpoint;
- an endpoint that has failed every attempt for 5 days is turned off, and its owner told;
- a failed event about a date due within 48 hours tells the owner at once (at most hourly per
  endpoint), not after the retries run out.
"""

from __future__ import annotations

import json
import random
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

from django.conf import settings
from django.utils.dateparse import parse_date, parse_datetime
from standardwebhooks.webhooks import Webhook

from timekeeping.basics import wallclock
from timekeeping.models import Delivery, Record, WebhookAttempt, WebhookEndpoint
from timekeeping.timers.outbox import Later
from timekeeping.webhooks import catalogue, endpoints, guard, telling, transport

# Svix's published schedule: each wait after the try before, about 28 hours in all.
SCHEDULE = (timedelta(seconds=5), timedelta(minutes=5), timedelta(minutes=30),
            timedelta(hours=2), timedelta(hours=5), timedelta(hours=10), timedelta(hours=10))
ATTEMPTS = len(SCHEDULE) + 1
JITTER = 0.1
FAILING_FOR = timedelta(days=5)
URGENT_WITHIN = timedelta(hours=48)
RESPONSE_KEPT = 2048  # bytes of an answer the log keeps
LONGEST_WAIT = timedelta(hours=24)


@dataclass
class Outgoing:
    delivery: Delivery
    endpoint: WebhookEndpoint
    body: bytes
    headers: dict[str, str]
    due: datetime | None  # the date the event is about, when it is one
    answer: transport.Response | None = None
    error: Exception | None = None


def send(deliveries: list[Delivery], now: datetime) -> dict[str, Exception | None]:
    outcomes: dict[str, Exception | None] = {}
    outgoing: list[Outgoing] = []
    for delivery, prepared in _prepare(deliveries):
        if isinstance(prepared, Exception):
            outcomes[delivery.pk] = prepared
        else:
            outgoing.append(prepared)
    if outgoing:
        workers = min(len(outgoing), settings.WEBHOOK_WORKERS)
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="webhook") as pool:
            list(pool.map(_post, outgoing))
    WebhookAttempt.objects.bulk_create([_attempt(item, now) for item in outgoing])
    for item in outgoing:
        outcomes[item.delivery.pk] = _judge(item, now)
    _keep_failing(outgoing, now)
    return outcomes


def _prepare(deliveries: list[Delivery]):
    """Each delivery with what goes out (body and signed headers), or why nothing does."""
    found = WebhookEndpoint.objects.in_bulk({d.endpoint_id for d in deliveries if d.endpoint_id})
    events = Record.objects.in_bulk([d.event for d in deliveries
                                     if d.event and "test" not in d.payload])
    signed_at = wallclock.wall_now()
    for delivery in deliveries:
        endpoint = found.get(delivery.endpoint_id)
        if endpoint is None:
            yield delivery, Later("its endpoint was removed", None)
        elif not endpoint.enabled and "test" not in delivery.payload:
            yield delivery, Later("its endpoint is turned off", None)
        elif "test" in delivery.payload:
            yield delivery, _outgoing(delivery, endpoint, delivery.payload["test"], signed_at)
        elif delivery.event in events:
            body = catalogue.event(events[delivery.event])
            yield delivery, _outgoing(delivery, endpoint, body, signed_at)
        else:
            yield delivery, Later("its event is no longer kept", None)


def _outgoing(delivery: Delivery, endpoint: WebhookEndpoint, event: dict,
              signed_at: datetime) -> Outgoing:
    body = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()
    signatures = [Webhook(secret).sign(delivery.event, signed_at, body)
                  for secret in endpoints.signing_secrets(endpoint, signed_at)]
    headers = {"webhook-id": delivery.event,
               "webhook-timestamp": str(int(signed_at.timestamp())),
               "webhook-signature": " ".join(signatures),
               "Content-Type": "application/json"}
    return Outgoing(delivery, endpoint, body, headers, _due(event))


def _due(event: dict) -> datetime | None:
    """The moment a date event is about: its `due`, an instant, or a day (read as the end of
    that day in UTC, so a date due today is still ahead all day)."""
    due = event.get("data", {}).get("due")
    if not isinstance(due, str) or not event["type"].startswith("date."):
        return None
    try:
        instant = parse_datetime(due)
        if instant is None:
            day = parse_date(due)
            instant = day and datetime.combine(day, time.max, tzinfo=UTC)
    except ValueError:
        return None
    return instant if instant is None or instant.tzinfo else instant.replace(tzinfo=UTC)


def _post(item: Outgoing) -> None:
    """In a pool thread: no database here."""
    try:
        item.answer = transport.post(item.endpoint.url, item.body, item.headers)
    except Exception as error:  # noqa: BLE001 - every failure is logged and retried
        item.error = error


def _attempt(item: Outgoing, now: datetime) -> WebhookAttempt:
    answer, error = item.answer, item.error
    return WebhookAttempt(
        brand_id=item.endpoint.brand_id, endpoint=item.endpoint, delivery=item.delivery,
        at=wallclock.wall_now(), status=answer.status if answer else None,
        duration_ms=answer.duration_ms if answer else 0,
        response=_text(answer.body[:RESPONSE_KEPT]) if answer else "",
        error=_said(error)[:500] if error else "", refused=isinstance(error, guard.Refused))


def _text(body: bytes) -> str:
    return body.decode("utf-8", errors="replace").replace("\x00", "\\0")


def _said(error: Exception) -> str:
    if isinstance(error, guard.Refused):
        return str(error)
    if isinstance(error, TimeoutError):
        return "The receiver did not answer within 15 seconds."
    return f"{type(error).__name__}: {error}".replace("\x00", "\\0")


def _judge(item: Outgoing, now: datetime) -> Exception | None:
    """None when sent; else a `Later` with its next try, or none."""
    answer, attempts = item.answer, item.delivery.attempts
    if answer is not None and 200 <= answer.status < 300:
        return None
    if answer is not None and answer.status == 410:
        if endpoints.turn_off(item.endpoint.pk, WebhookEndpoint.Disabled.GONE):
            telling.turned_off(item.endpoint, "gone")
        return Later("The receiver answered 410 Gone, so the endpoint was turned off.", None)
    reason = _said(item.error) if item.error else f"The receiver answered {answer.status}."
    if attempts >= ATTEMPTS:
        return Later(reason, None)
    wait = SCHEDULE[attempts - 1] * (1 + random.uniform(-JITTER, JITTER))  # noqa: S311
    if answer is not None and answer.status in (429, 503):
        asked = answer.retry_after(now)
        if asked is not None:
            wait = max(min(asked, LONGEST_WAIT), SCHEDULE[0])
    return Later(reason, now + wait)


def _keep_failing(outgoing: list[Outgoing], now: datetime) -> None:
    """Success clears an endpoint's failing spell; a failure starts one, and five days of
    them turn it off. A failed event about a date due within 48 hours tells the owner now."""
    sent = {item.endpoint.pk for item in outgoing if item.answer and item.answer.status < 300
            and item.answer.status >= 200}
    failed = {item.endpoint.pk: item.endpoint for item in outgoing
              if item.endpoint.pk not in sent}
    if sent:
        WebhookEndpoint.objects.filter(pk__in=sent).update(failing_since=None)
    if not failed:
        return
    WebhookEndpoint.objects.filter(pk__in=list(failed), failing_since__isnull=True).update(
        failing_since=now)
    for endpoint in WebhookEndpoint.objects.filter(
            pk__in=list(failed), enabled=True, failing_since__lte=now - FAILING_FOR):
        if endpoints.turn_off(endpoint.pk, WebhookEndpoint.Disabled.FAILING):
            telling.turned_off(endpoint, "failing")
    urgent = [item for item in outgoing if item.endpoint.pk in failed and item.due
              and now - timedelta(hours=1) <= item.due <= now + URGENT_WITHIN]
    for item in urgent:
        telling.urgent(item.endpoint, item.delivery, item.due, now)


def planned(delivery: Delivery) -> list[datetime]:
    """A pending delivery's next tries as they stand (without jitter): its next attempt, then
    the schedule's waits after it."""
    if delivery.state not in (Delivery.State.PENDING, Delivery.State.RUNNING):
        return []
    at = delivery.next_attempt
    found = [at]
    for wait in SCHEDULE[delivery.attempts:]:
        at = at + wait
        found.append(at)
    return found
