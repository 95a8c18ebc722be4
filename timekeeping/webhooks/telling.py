"""Telling a brand's owner about its endpoints by email (in the words of ../shared/WORDS.md):
one turned off, and an event about a date close at hand that has not reached its receiver."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.urls import reverse

from timekeeping.basics import shown
from timekeeping.models import Delivery, WebhookEndpoint
from timekeeping.timers import outbox

WHY = {
    "gone": "its receiver answered that it is gone (410)",
    "failing": "every attempt to reach it failed for 5 days",
}


def _page(endpoint: WebhookEndpoint) -> str:
    path = reverse("console:webhook", args=[endpoint.brand_id, endpoint.pk])
    return f"{settings.SITE_URL}{path}"


def _owner(endpoint: WebhookEndpoint) -> list[str]:
    owner = endpoint.brand.owner
    return [owner.email] if owner is not None and owner.email else []


def turned_off(endpoint: WebhookEndpoint, why: str) -> None:
    """Its owner is told once per turning off."""
    at = endpoint.disabled_at or endpoint.failing_since
    name = endpoint.description or endpoint.url
    outbox.enqueue_email(
        brand=endpoint.brand, to=_owner(endpoint),
        key=f"webhook.off:{endpoint.pk}:{at.isoformat() if at else why}",
        subject=f"Keeping Time: events to {name} have stopped",
        body=(f"We stopped sending events to {endpoint.url} because {WHY[why]}.\n\n"
              "Events are still kept. When the receiver is working again, turn the endpoint "
              f"back on and send what it missed:\n{_page(endpoint)}"))


def urgent(endpoint: WebhookEndpoint, delivery: Delivery, due: datetime,
           now: datetime) -> None:
    """A failed event about a date due within 48 hours: told now, at most once an hour per
    endpoint."""
    zone = endpoint.brand.calendar_rules().zone_name
    outbox.enqueue_email(
        brand=endpoint.brand, to=_owner(endpoint),
        key=f"webhook.urgent:{endpoint.pk}:{now:%Y-%m-%dT%H}",
        subject="Keeping Time: your system has not heard about a date due soon",
        body=(f"We could not deliver an event to {endpoint.url} about a date due "
              f"{shown.moment(due, zone)}. We keep trying, but the date is close, so you may "
              f"want to act on it yourself.\n\nThe delivery log: {_page(endpoint)}"))
