"""A brand's outbox over the API: its deliveries listed (which failed, which wait), and a
delivery that failed dismissed (issue 29, J9), as the console's "Dismiss" on the "not sent"
item of "Needs attention" does, through the same `attention.settling.act`. A dismissed
delivery leaves the list of what needs attention and is deleted by the tick's housekeeping
30 days after its dismissal (`timekeeping.tick.housekeeping`).

The list says what each delivery is (its channel, its subject line, its state and tries, its
last error's last line) and never its recipients or body: those are the people's own words.
"""

from django.db.models import Exists, OuterRef, QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping.api import queries
from timekeeping.api.access import brands, kept_brand, who
from timekeeping.api.queries import Listing
from timekeeping.attention import settling
from timekeeping.basics import wallclock
from timekeeping.models import Delivery, Dismissal
from timekeeping.web.strict import StrictSerializer

KIND = "undelivered"
ERROR_SHOWN = 300  # characters of a last error's last line


class DeliveryRead(serializers.ModelSerializer):
    subject = serializers.SerializerMethodField(help_text="An email's subject line.")
    last_error = serializers.SerializerMethodField(
        help_text=f"The last line of the last error, at most {ERROR_SHOWN} characters.")
    dismissed = serializers.BooleanField(help_text="Dismissed by the brand's people.")

    class Meta:
        model = Delivery
        fields = ["id", "brand", "channel", "state", "attempts", "created", "next_attempt",
                  "delivered", "subject", "last_error", "dismissed"]

    @extend_schema_field(serializers.CharField())
    def get_subject(self, delivery: Delivery) -> str:
        payload = delivery.payload if isinstance(delivery.payload, dict) else {}
        return str(payload.get("subject", ""))

    @extend_schema_field(serializers.CharField())
    def get_last_error(self, delivery: Delivery) -> str:
        lines = delivery.last_error.strip().splitlines()
        return lines[-1][:ERROR_SHOWN] if lines else ""


class Deliveries(Listing):
    """The outbox of the brands you keep, newest first: failed ones to dismiss, waiting ones
    with their next try."""

    serializer_class = DeliveryRead
    filters = (
        queries.brand_filter(),
        queries.one_of("state", "state", list(Delivery.State.values),
                       description="Only deliveries in this state."),
        queries.one_of("channel", "channel", list(Delivery.Channel.values),
                       description="Only deliveries of this channel."),
        queries.instant("from", "created__gte", description="Only deliveries made at or "
                                                            "after this instant"),
        queries.instant("to", "created__lt", description="Only deliveries made before this "
                                                         "instant"),
    )

    def scoped(self) -> QuerySet:
        dismissed = Dismissal.objects.filter(brand=OuterRef("brand"), kind=KIND,
                                             row=OuterRef("pk"))
        return Delivery.objects.filter(brand__in=brands(self.request)).annotate(
            dismissed=Exists(dismissed)).order_by("-created", "-id")


class DismissIn(StrictSerializer):
    reason = serializers.CharField(max_length=settling.REASON_LONGEST,
                                   help_text="Why it can be dismissed, kept on the record.")


class DismissedOut(serializers.Serializer):
    delivery = serializers.CharField(source="row")
    reason = serializers.CharField()
    dismissed_by = serializers.CharField(source="by")
    dismissed = serializers.DateTimeField(source="at")
    deleted_after = serializers.DateTimeField(
        help_text="When housekeeping deletes the delivery and this dismissal: 30 days on.")
    said = serializers.CharField(help_text="What happened, in plain words.")


class DeliveryDismiss(APIView):
    @extend_schema(operation_id="deliveries_dismiss", request=DismissIn,
                   responses=DismissedOut)
    def post(self, request, brand_id: str, delivery_id: str):
        brand = kept_brand(request, brand_id)
        if not brand.deliveries.filter(pk=delivery_id).exists():
            raise NotFound(f"delivery: no delivery {delivery_id!r} of the brand")
        given = DismissIn(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            said = settling.act(brand, KIND, delivery_id, "dismiss",
                                reason=given.validated_data["reason"], by=who(request),
                                now=wallclock.wall_now())
        except settling.Refused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        kept = Dismissal.objects.get(brand=brand, kind=KIND, row=delivery_id)
        kept.deleted_after, kept.said = kept.at + settling.DISMISSED_DELIVERY_KEPT, said
        return Response(DismissedOut(kept).data)
