"""An endpoint's delivery log over the API (issue 30, docs/api.md#webhooks): each event sent to
it, newest first, with its state, every attempt (when, the status, how long, the first 2 KB of
the answer, or why no request was made) and, while it waits, its next planned attempts
(`sending.planned`). The brand's owner only, as the endpoint's other doors.

A page costs three queries whatever its length: the deliveries (each with its event's type
read beside it), their attempts, and the count.
"""

from __future__ import annotations

from django.db.models import OuterRef, Prefetch, QuerySet, Subquery
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import serializers

from timekeeping.api import queries
from timekeeping.api.access import owned
from timekeeping.api.queries import Listing
from timekeeping.api.webhooks import endpoint_of
from timekeeping.models import Delivery, Record, WebhookAttempt
from timekeeping.webhooks import catalogue, sending


class AttemptOut(serializers.ModelSerializer):
    status = serializers.IntegerField(allow_null=True,
                                      help_text="The receiver's status; null: no answer.")
    duration_ms = serializers.IntegerField(help_text="How long the request took.")
    response = serializers.CharField(help_text="The first 2 KB of the answer's body.")
    error = serializers.CharField(help_text="Why it failed without an answer, in words.")
    refused = serializers.BooleanField(
        help_text="No request was made: the address was refused (no way into our network).")

    class Meta:
        model = WebhookAttempt
        fields = ["id", "at", "status", "duration_ms", "response", "error", "refused"]


class LogEntryOut(serializers.ModelSerializer):
    type = serializers.SerializerMethodField(help_text="The event's type (webhook.test for a "
                                                       "test event).")
    attempts = AttemptOut(source="tries", many=True, help_text="Every attempt, newest first.")
    tries = serializers.IntegerField(source="attempts", help_text="How many attempts so far.")
    last_error = serializers.CharField(help_text="Why the last attempt failed.")
    planned = serializers.SerializerMethodField(
        help_text="While it waits: its next attempts as they stand (without jitter).")

    class Meta:
        model = Delivery
        fields = ["id", "event", "type", "state", "tries", "created", "next_attempt",
                  "delivered", "last_error", "planned", "attempts"]

    @extend_schema_field(serializers.CharField())
    def get_type(self, delivery: Delivery) -> str:
        if "test" in delivery.payload:
            return catalogue.TEST_TYPE
        return catalogue.type_of(delivery.event_kind or "") or ""

    @extend_schema_field(serializers.ListField(child=serializers.DateTimeField()))
    def get_planned(self, delivery: Delivery) -> list[str]:
        shown = serializers.DateTimeField()
        return [shown.to_representation(at) for at in sending.planned(delivery)]


@extend_schema_view(get=extend_schema(operation_id="webhooks_deliveries_list"))
class WebhookDeliveries(Listing):
    """What was sent to one endpoint, newest first: each event's delivery with its attempts."""

    serializer_class = LogEntryOut
    filters = (
        queries.one_of("state", "state", list(Delivery.State.values),
                       description="Only deliveries in this state."),
    )

    def scoped(self) -> QuerySet:
        endpoint = endpoint_of(owned(self.request, self.kwargs["brand_id"]),
                               self.kwargs["endpoint_id"])
        brand = endpoint.brand_id  # every table read by its brand (tests/test_tenancy.py)
        kind = Record.objects.filter(brand_id=brand, pk=OuterRef("event")).values("kind")[:1]
        tries = Prefetch("tries", WebhookAttempt.objects.filter(brand_id=brand)
                         .order_by("-at", "-id"))
        return (Delivery.objects.filter(brand_id=brand, endpoint=endpoint)
                .annotate(event_kind=Subquery(kind)).prefetch_related(tries)
                .order_by("-created", "-id"))
