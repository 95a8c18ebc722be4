"""A brand's outbox over the API: a delivery that failed is dismissed (issue 29, J9), as the
console's "Dismiss" on the "not sent" item of "Needs attention" does, through the same
`attention.settling.act`. A dismissed delivery leaves the list and is deleted by the tick's
housekeeping 30 days after its dismissal (`timekeeping.tick.housekeeping`)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping.api.access import kept_brand, who
from timekeeping.attention import settling
from timekeeping.basics import wallclock
from timekeeping.models import Dismissal
from timekeeping.web.strict import StrictSerializer

KIND = "undelivered"


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
