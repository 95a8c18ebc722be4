from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.db.models import Q

from timekeeping.basics import wallclock
from timekeeping.basics.public_ids import PublicIdField
from timekeeping.models.base import Model
from timekeeping.models.brand import Brand


class Delivery(Model):
    """A side effect outside the database (DESIGN decision 6): an email or a webhook written
    in the same transaction as what caused it, and sent by the tick's sweep at least once."""

    class Channel(models.TextChoices):
        EMAIL = "email", "email"
        WEBHOOK = "webhook", "webhook"

    class State(models.TextChoices):
        PENDING = "pending", "pending"
        RUNNING = "running", "running"
        SUCCEEDED = "succeeded", "succeeded"
        FAILED = "failed", "failed"

    id = PublicIdField(prefix="dlv")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="deliveries")
    channel = models.CharField(max_length=10, choices=Channel.choices)
    payload = models.JSONField(encoder=DjangoJSONEncoder)
    idempotency_key = models.CharField(max_length=255, unique=True)
    state = models.CharField(max_length=10, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt = models.DateTimeField()
    lease_until = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    created = models.DateTimeField(default=wallclock.wall_now)
    delivered = models.DateTimeField(null=True, blank=True)
    # A webhook's: the endpoint it goes to and the event (a record's id, or a test event's).
    endpoint = models.ForeignKey("timekeeping.WebhookEndpoint", null=True, blank=True,
                                 on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=48, blank=True, default="")

    class Meta:
        ordering = ["created"]
        verbose_name_plural = "deliveries"
        indexes = [
            models.Index(fields=["next_attempt"], condition=Q(state="pending"),
                         name="delivery_pending"),
            models.Index(fields=["lease_until"], condition=Q(state="running"),
                         name="delivery_running"),
            models.Index(fields=["endpoint", "-created"], condition=Q(endpoint__isnull=False),
                         name="delivery_endpoint"),
        ]

    def __str__(self) -> str:
        return f"{self.channel} {self.idempotency_key} ({self.state})"
