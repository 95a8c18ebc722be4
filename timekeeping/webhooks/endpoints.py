"""A brand's webhook endpoints, as its owner keeps them: the one set of operations the API, the
console and the demo call (issue 30, `docs/webhooks.md`).

    make(brand, url=…, …)         a new endpoint and its secret (shown once)
    change(endpoint, …)           its URL, types, description, test clocks, on or off
    rotate(endpoint, now)         a new secret; the old one signs beside it for 24 hours
    enable(endpoint, now)         on again after it was turned off, and what it missed replayed
    replay(endpoint, since, until) the events between two instants sent again
    resend(endpoint, event)       one event sent again
    send_test(endpoint)           a test event
    remove(endpoint)              gone, with its log

A bad value raises `Invalid`, naming the field and the rule, and changes nothing.
"""

from __future__ import annotations

import base64
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction

from timekeeping.basics import wallclock
from timekeeping.basics.public_ids import new_id
from timekeeping.models import Brand, Delivery, Record, WebhookEndpoint
from timekeeping.timers import outbox
from timekeeping.webhooks import catalogue, guard, publish

ROTATION_OVERLAP = timedelta(hours=24)
MOST_ENDPOINTS = 20  # per brand
DESCRIPTION_LONGEST = 200
URL_LONGEST = 2000
REPLAY_MOST = 10_000  # events one replay sends again
REPLAY_SPAN = timedelta(days=31)  # the longest time one replay covers
MISSED_REACH = timedelta(days=1)  # how far before a failing spell `enable` looks


class Invalid(ValueError):
    """A value refused: `field` names it, `code` the rule, the message says it in words."""

    def __init__(self, field: str, code: str, message: str):
        super().__init__(message)
        self.field = field
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Made:
    endpoint: WebhookEndpoint
    secret: str  # shown once, to whoever made or rotated it


def new_secret() -> str:
    """A signing secret in the Standard Webhooks form: `whsec_` and 24 random bytes in
    base64."""
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


def make(brand: Brand, *, url: str, description: str = "", types: list[str] | None = None,
         test_clocks: bool = False, enabled: bool = True) -> Made:
    fields = _checked(url=url, description=description, types=types or [])
    if WebhookEndpoint.objects.filter(brand=brand).count() >= MOST_ENDPOINTS:
        raise Invalid("url", "webhooks.too_many",
                      f"A brand keeps at most {MOST_ENDPOINTS} endpoints; remove one first.")
    secret = new_secret()
    endpoint = WebhookEndpoint.objects.create(
        brand=brand, secret=secret, test_clocks=test_clocks, enabled=enabled,
        disabled="" if enabled else WebhookEndpoint.Disabled.BY_OWNER,
        disabled_at=None if enabled else wallclock.wall_now(), **fields)
    return Made(endpoint, secret)


def change(endpoint: WebhookEndpoint, *, url: str | None = None,
           description: str | None = None, types: list[str] | None = None,
           test_clocks: bool | None = None, enabled: bool | None = None) -> WebhookEndpoint:
    """Change what is given; turning it on again replays nothing (`enable` does)."""
    fields = _checked(url=endpoint.url if url is None else url,
                      description=endpoint.description if description is None else description,
                      types=endpoint.types if types is None else types)
    for name, value in fields.items():
        setattr(endpoint, name, value)
    if test_clocks is not None:
        endpoint.test_clocks = test_clocks
    if enabled is not None and enabled != endpoint.enabled:
        _turn(endpoint, enabled, WebhookEndpoint.Disabled.BY_OWNER)
    endpoint.save()
    return endpoint


def _turn(endpoint: WebhookEndpoint, on: bool, why: str) -> None:
    endpoint.enabled = on
    endpoint.disabled = "" if on else why
    endpoint.disabled_at = None if on else wallclock.wall_now()
    if on:
        endpoint.failing_since = None


def turn_off(endpoint_id: str, why: str) -> bool:
    """Turn an endpoint off for a reason of the sender's (410, five days failing); False when
    it was already off (so its owner is told once)."""
    return bool(WebhookEndpoint.objects.filter(pk=endpoint_id, enabled=True).update(
        enabled=False, disabled=why, disabled_at=wallclock.wall_now()))


def rotate(endpoint: WebhookEndpoint) -> Made:
    """A new secret; the one it replaces still signs beside it for 24 hours, so a receiver
    can change over without missing a delivery."""
    secret = new_secret()
    endpoint.previous_secret = endpoint.secret
    endpoint.previous_until = wallclock.wall_now() + ROTATION_OVERLAP
    endpoint.secret = secret
    endpoint.save(update_fields=["secret", "previous_secret", "previous_until"])
    return Made(endpoint, secret)


def signing_secrets(endpoint: WebhookEndpoint, now: datetime) -> list[str]:
    """The secrets that sign a delivery now: the current one, and the one it replaced while
    the rotation's 24 hours last."""
    kept = [endpoint.secret]
    if endpoint.previous_secret and endpoint.previous_until and endpoint.previous_until > now:
        kept.append(endpoint.previous_secret)
    return kept


def enable(endpoint: WebhookEndpoint, *, replay_missed: bool = True) -> int:
    """On again; with `replay_missed`, what it missed is sent again: each event it hears,
    written from a day before its failing spell began (or before it was turned off), that
    it does not have (its delivery failed, or none was made while it was off). The day
    reaches back past the retries of the first event that failed. Returns how many go."""
    since = endpoint.failing_since or endpoint.disabled_at
    with transaction.atomic():
        _turn(endpoint, True, "")
        endpoint.save()
        if not replay_missed or since is None:
            return 0
        return _send_again(endpoint, _events(endpoint, since - MISSED_REACH, None))


def replay(endpoint: WebhookEndpoint, *, since: datetime, until: datetime) -> int:
    """The events it hears written between two instants that it does not have (failed, or
    never made) sent again, at most REPLAY_MOST, the oldest first. Returns how many."""
    if until <= since:
        raise Invalid("until", "replay.order", "The end of a replay must come after its start.")
    if until - since > REPLAY_SPAN:
        raise Invalid("until", "replay.span", f"A replay covers at most {REPLAY_SPAN.days} "
                                              "days; replay a longer time in parts.")
    with transaction.atomic():
        return _send_again(endpoint, _events(endpoint, since, until))


def _events(endpoint: WebhookEndpoint, since: datetime, until: datetime | None) -> list[str]:
    records = Record.objects.filter(brand_id=endpoint.brand_id, written__gte=since,
                                    kind__in=catalogue.kinds_of(endpoint.types))
    if until is not None:
        records = records.filter(written__lt=until)
    if not endpoint.test_clocks:
        records = records.filter(test_clock__isnull=True)
    return list(records.order_by("written", "id").values_list("id", flat=True)[:REPLAY_MOST])


def _send_again(endpoint: WebhookEndpoint, events: list[str]) -> int:
    """A failed delivery goes back to pending; an event with none gets one; one sent, or on
    its way, is left as it is."""
    keys = {publish.key(endpoint.pk, event): event for event in events}
    made = dict(Delivery.objects.filter(idempotency_key__in=list(keys))
                .values_list("idempotency_key", "state"))
    failed = Delivery.objects.filter(idempotency_key__in=[
        key for key, state in made.items() if state == Delivery.State.FAILED])
    again = outbox.retry(failed.values_list("pk", flat=True), now=wallclock.wall_now())
    for key, event in keys.items():
        if key not in made:
            outbox.enqueue_event(brand=endpoint.brand, endpoint_id=endpoint.pk, event=event,
                                 key=key)
            again += 1
    return again


def resend(endpoint: WebhookEndpoint, event: str) -> Delivery:
    """One event sent again, as a new delivery with the same `webhook-id` (the event's), so a
    receiver that already has it can tell."""
    record = Record.objects.filter(brand_id=endpoint.brand_id, pk=event,
                                   kind__in=catalogue.KINDS).first()
    if record is None:
        raise Invalid("event", "event.unknown", "No such event of this brand.")
    key = f"{publish.key(endpoint.pk, event)}:again:{new_id('rsd')}"
    outbox.enqueue_event(brand=endpoint.brand, endpoint_id=endpoint.pk, event=event, key=key)
    return Delivery.objects.get(idempotency_key=key)


def send_test(endpoint: WebhookEndpoint) -> Delivery:
    """A test event, whatever types it hears and even when it is off: its body says so."""
    now = wallclock.wall_now()
    event = new_id("evt")
    body = catalogue.envelope(
        id=event, type=catalogue.TEST_TYPE, created=now, occurs_at=now,
        brand_id=endpoint.brand_id, test_clock=None, subject="", objects={},
        summary="A test event from Keeping Time: your endpoint is reached and can check "
                "the signature.", data={})
    key = publish.key(endpoint.pk, event)
    outbox.enqueue_event(brand=endpoint.brand, endpoint_id=endpoint.pk, event=event, key=key,
                         payload={"test": body})
    return Delivery.objects.get(idempotency_key=key)


def remove(endpoint: WebhookEndpoint) -> None:
    """Gone, with its deliveries and its log."""
    endpoint.delete()


def _checked(*, url: str, description: str, types: list[str]) -> dict:
    if not isinstance(url, str) or not url.strip():
        raise Invalid("url", "url.required", "Give the address to send events to.")
    if len(url) > URL_LONGEST:
        raise Invalid("url", "url.too_long", f"An address is at most {URL_LONGEST} characters.")
    allow_http, allow_hosts = guard.settings_allow()
    try:
        guard.check_url(url.strip(), allow_http=allow_http, allow_hosts=allow_hosts)
    except guard.Refused as refused:
        raise Invalid("url", refused.code, refused.message) from refused
    if len(description) > DESCRIPTION_LONGEST:
        raise Invalid("description", "description.too_long",
                      f"A description is at most {DESCRIPTION_LONGEST} characters.")
    if "\x00" in description:
        raise Invalid("description", "description.invalid", "A description holds no NUL.")
    unknown = [name for name in types if name not in catalogue.BY_NAME]
    if unknown:
        raise Invalid("types", "types.unknown",
                      f"No such event type: {unknown[0]!r}. The types are listed in the docs.")
    return {"url": url.strip(), "description": description,
            "types": sorted(set(types))}
