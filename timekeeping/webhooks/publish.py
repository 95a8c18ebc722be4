"""A record that is an event goes to each of its brand's endpoints that hears it: one outbox
delivery per event and endpoint, in the transaction that writes the record (`hear`, a hearer
of `timekeeping.timers.records`, added by the wiring).

Inside a firing the brand's enabled endpoints are read once per batch, so a batch of a
thousand reminders costs one query more, and none when no record of it is an event.
"""

from __future__ import annotations

from datetime import datetime

from timekeeping.basics import compiled
from timekeeping.models import Brand, TestClock, WebhookEndpoint
from timekeeping.timers import in_progress, outbox
from timekeeping.timers.records import Entry
from timekeeping.webhooks import catalogue


def key(endpoint_id: str, event: str) -> str:
    """A delivery's idempotency key: one per event and endpoint."""
    return f"whk:{endpoint_id}:{event}"


def hears(endpoint: WebhookEndpoint, type_name: str, test_clock_id: str | None) -> bool:
    """Whether an endpoint hears an event of a type, on the real clock or a test clock."""
    if test_clock_id and not endpoint.test_clocks:
        return False
    return not endpoint.types or type_name in endpoint.types


def hear(brand: Brand, test_clock: TestClock | None, instant: datetime, entry: Entry) -> None:
    type_name = catalogue.type_of(entry.kind)
    if type_name is None:
        return
    test_clock_id = test_clock.pk if test_clock is not None else None
    for endpoint in _enabled(brand):
        if hears(endpoint, type_name, test_clock_id):
            outbox.enqueue_event(brand=brand, endpoint_id=endpoint.pk, event=entry.id,
                                 key=key(endpoint.pk, entry.id))


def _enabled(brand: Brand) -> list[WebhookEndpoint]:
    return in_progress.read_once(brand.pk, "webhook_endpoints", lambda: _read(brand))


# Compiled once (`compiled.Read`): a batch whose timers are late asks it for its `timer.late`
# record, so every batch of a catch-up tick did, each compiled anew.
ENABLED = compiled.Read(lambda brand: WebhookEndpoint.objects.filter(brand_id=brand, enabled=True),
                        model=WebhookEndpoint)


def _read(brand: Brand) -> list[WebhookEndpoint]:
    return ENABLED(brand=brand.pk)
