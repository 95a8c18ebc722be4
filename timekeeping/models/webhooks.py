"""A brand's webhook endpoints and each attempt to deliver an event to one (issue 30)."""

from django.db import models
from django.db.models import Q

from timekeeping.basics import wallclock
from timekeeping.basics.public_ids import PublicIdField
from timekeeping.models.base import Model
from timekeeping.models.brand import Brand


class WebhookEndpoint(Model):
    """A URL of a brand's own systems that hears its events, signed with its own secret.

    `secret` signs every delivery (`whsec_` and base64, the Standard Webhooks form); after a
    rotation the `previous_secret` signs beside it until `previous_until`. The secrets are kept
    as written, because signing needs them: the API and the console show a secret only when it
    is made."""

    class Disabled(models.TextChoices):
        NOT = "", "enabled"
        BY_OWNER = "owner", "turned off by its owner"
        GONE = "gone", "the receiver answered 410 Gone"
        FAILING = "failing", "every attempt failed for 5 days"

    id = PublicIdField(prefix="whe")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="webhook_endpoints")
    url = models.CharField(max_length=2000)
    description = models.CharField(max_length=200, blank=True, default="")
    # The event types it hears; empty hears every type.
    types = models.JSONField(default=list, blank=True)
    # Whether it hears the events of the brand's test clocks too (a practice world's).
    test_clocks = models.BooleanField(default=False)
    enabled = models.BooleanField(default=True)
    disabled = models.CharField(max_length=10, choices=Disabled.choices, blank=True, default="")
    disabled_at = models.DateTimeField(null=True, blank=True)
    secret = models.CharField(max_length=100)
    previous_secret = models.CharField(max_length=100, blank=True, default="")
    previous_until = models.DateTimeField(null=True, blank=True)
    # The first failed attempt since the last success: five days of failures disable it.
    failing_since = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(default=wallclock.wall_now)

    class Meta:
        ordering = ["created", "id"]
        indexes = [models.Index(fields=["brand"], condition=Q(enabled=True),
                                name="webhook_endpoint_enabled")]

    def __str__(self) -> str:
        return self.description or self.url


class WebhookAttempt(Model):
    """One try to deliver one event to one endpoint: what the receiver answered, or why no
    request was made."""

    id = PublicIdField(prefix="wha")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="+")
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE,
                                 related_name="tries")
    delivery = models.ForeignKey("timekeeping.Delivery", on_delete=models.CASCADE,
                                 related_name="tries")
    at = models.DateTimeField()
    status = models.PositiveIntegerField(null=True, blank=True)  # None: no answer
    duration_ms = models.PositiveIntegerField(default=0)
    response = models.TextField(blank=True, default="")  # the first 2 KB of the answer
    error = models.CharField(max_length=500, blank=True, default="")
    refused = models.BooleanField(default=False)  # the address was refused (SSRF rules)

    class Meta:
        ordering = ["-at", "id"]
        indexes = [models.Index(fields=["endpoint", "-at"], name="webhook_attempt_log")]

    def __str__(self) -> str:
        return f"{self.delivery_id} at {self.at:%Y-%m-%d %H:%M:%SZ}: {self.status}"


class ReceivedWebhook(Model):
    """What the demo's own receiver was sent (`timekeeping.demo_receiver`, DEBUG only): a
    delivery whose signature it checked, so a newcomer sees events arrive. The newest
    `KEPT` of a brand are kept."""

    KEPT = 500

    id = PublicIdField(prefix="whr")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="+")
    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE,
                                 related_name="received")
    webhook_id = models.CharField(max_length=100)  # the `webhook-id` header: the event's id
    type = models.CharField(max_length=100)
    summary = models.TextField(blank=True, default="")
    body = models.TextField()
    received = models.DateTimeField()
    again = models.BooleanField(default=False)  # its webhook-id had arrived before

    class Meta:
        ordering = ["-received", "-id"]
        indexes = [models.Index(fields=["brand", "-received"], name="webhook_received")]

    def __str__(self) -> str:
        return f"{self.type} at {self.received:%Y-%m-%d %H:%M:%SZ}"
