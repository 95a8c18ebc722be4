"""A brand's webhook endpoints over the API (issue 30, docs/api.md#webhooks): listed, made (the
signing secret shown once), read, changed and removed, and the actions on one: rotate its
secret, turn it on again (what it missed sent again) or off, send a test event, replay the
events between two instants, resend one event.

Every view calls `timekeeping.webhooks.endpoints`, the one set of operations the console and
the demo call too; its `Invalid` answers 400 naming the field and the rule, and nothing
changes. Only the brand's owner reaches these doors (`access.owned`): a key owns nothing, a
manager or viewer hears 403, anyone who does not keep the brand 404.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping.api.access import owned
from timekeeping.basics import instants, wallclock
from timekeeping.models import Brand, Delivery, WebhookEndpoint
from timekeeping.web.strict import StrictSerializer
from timekeeping.webhooks import catalogue, endpoints

TYPES_MOST = 64  # event types named in one request (the catalogue has fewer)


class EndpointOut(serializers.ModelSerializer):
    types = serializers.ListField(child=serializers.CharField(),
                                  help_text="The event types it hears; empty: every type.")
    disabled = serializers.CharField(
        help_text="Why it is off: `owner` (turned off by its owner), `gone` (the receiver "
                  "answered 410), `failing` (every attempt failed for 5 days); empty when on.")
    rotating_until = serializers.SerializerMethodField(
        help_text="While a rotation lasts, when the secret it replaced stops signing.")

    class Meta:
        model = WebhookEndpoint
        fields = ["id", "brand", "url", "description", "types", "test_clocks", "enabled",
                  "disabled", "disabled_at", "failing_since", "rotating_until", "created"]

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_rotating_until(self, endpoint: WebhookEndpoint) -> str | None:
        until = endpoint.previous_until
        if not endpoint.previous_secret or until is None or until <= wallclock.wall_now():
            return None
        return serializers.DateTimeField().to_representation(endpoint.previous_until)


class MadeEndpointOut(EndpointOut):
    secret = serializers.CharField(help_text="The signing secret (`whsec_…`), shown this once: "
                                             "keep it now to check each delivery's signature.")

    class Meta(EndpointOut.Meta):
        fields = [*EndpointOut.Meta.fields, "secret"]


def _types_field(**options) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=64), max_length=TYPES_MOST, **options,
        help_text=f"Event types it hears (at most {TYPES_MOST}), from the catalogue "
                  f"(docs/events.md): {', '.join(catalogue.NAMES)}. None: every type.")


class EndpointIn(StrictSerializer):
    url = serializers.CharField(max_length=endpoints.URL_LONGEST, trim_whitespace=False,
                                help_text="Where events are posted: https (plain http only "
                                          "where the operator allows it).")
    description = serializers.CharField(max_length=endpoints.DESCRIPTION_LONGEST,
                                        required=False, allow_blank=True, default="")
    types = _types_field(required=False, default=list)
    enabled = serializers.BooleanField(required=False, default=True)
    test_clocks = serializers.BooleanField(
        required=False, default=False,
        help_text="Whether it hears the events of the brand's test clocks too.")


class EndpointChangeIn(StrictSerializer):
    url = serializers.CharField(max_length=endpoints.URL_LONGEST, required=False,
                                trim_whitespace=False)
    description = serializers.CharField(max_length=endpoints.DESCRIPTION_LONGEST,
                                        required=False, allow_blank=True)
    types = _types_field(required=False)
    enabled = serializers.BooleanField(
        required=False, help_text="Off or on; turning it on this way sends nothing it missed "
                                  "(POST …/enable does).")
    test_clocks = serializers.BooleanField(required=False)


class EndpointListOut(serializers.Serializer):
    webhooks = EndpointOut(many=True)


def refused(invalid: endpoints.Invalid) -> ValidationError:
    """`endpoints.Invalid` as the API's 400: the field, and the rule in words."""
    return ValidationError({invalid.field: [invalid.message]})


def endpoint_of(brand: Brand, endpoint_id: str) -> WebhookEndpoint:
    found = WebhookEndpoint.objects.filter(brand=brand, pk=endpoint_id).first()
    if found is None:
        raise NotFound(f"webhook: no endpoint {endpoint_id!r} of the brand")
    return found


def read(serializer_class, request) -> dict:
    given = serializer_class(data=request.data)
    given.is_valid(raise_exception=True)
    return dict(given.validated_data)


class Webhooks(APIView):
    @extend_schema(operation_id="webhooks_list", responses=EndpointListOut,
                   description="The brand's webhook endpoints, oldest first (its owner only).")
    def get(self, request, brand_id: str):
        brand = owned(request, brand_id)
        found = WebhookEndpoint.objects.filter(brand=brand).order_by("created", "id")
        return Response({"webhooks": EndpointOut(found, many=True).data})

    @extend_schema(operation_id="webhooks_create", request=EndpointIn,
                   responses={201: MadeEndpointOut},
                   description="Add an endpoint; the answer shows its signing secret once.")
    def post(self, request, brand_id: str):
        brand = owned(request, brand_id)
        try:
            made = endpoints.make(brand, **read(EndpointIn, request))
        except endpoints.Invalid as invalid:
            raise refused(invalid) from None
        return Response(EndpointOut(made.endpoint).data | {"secret": made.secret},
                        status=status.HTTP_201_CREATED)


class WebhookDetail(APIView):
    @extend_schema(operation_id="webhooks_read", responses=EndpointOut)
    def get(self, request, brand_id: str, endpoint_id: str):
        return Response(EndpointOut(endpoint_of(owned(request, brand_id), endpoint_id)).data)

    @extend_schema(operation_id="webhooks_update", request=EndpointChangeIn,
                   responses=EndpointOut, description="Change what is given.")
    def patch(self, request, brand_id: str, endpoint_id: str):
        endpoint = endpoint_of(owned(request, brand_id), endpoint_id)
        try:
            changed = endpoints.change(endpoint, **read(EndpointChangeIn, request))
        except endpoints.Invalid as invalid:
            raise refused(invalid) from None
        return Response(EndpointOut(changed).data)

    @extend_schema(operation_id="webhooks_remove", request=None, responses={204: None},
                   description="Remove it, with its delivery log.")
    def delete(self, request, brand_id: str, endpoint_id: str):
        endpoints.remove(endpoint_of(owned(request, brand_id), endpoint_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class RotatedOut(serializers.Serializer):
    id = serializers.CharField()
    secret = serializers.CharField(help_text="The new signing secret, shown this once.")
    previous_until = serializers.DateTimeField(
        help_text="Until then the secret it replaced signs each delivery beside it.")


class WebhookRotate(APIView):
    @extend_schema(operation_id="webhooks_rotate", request=None, responses=RotatedOut)
    def post(self, request, brand_id: str, endpoint_id: str):
        made = endpoints.rotate(endpoint_of(owned(request, brand_id), endpoint_id))
        return Response(RotatedOut({"id": made.endpoint.pk, "secret": made.secret,
                                    "previous_until": made.endpoint.previous_until}).data)


class EnabledOut(serializers.Serializer):
    endpoint = EndpointOut()
    sent_again = serializers.IntegerField(
        help_text="How many events it missed are sent again (queued in the outbox).")


class WebhookEnable(APIView):
    @extend_schema(operation_id="webhooks_enable", request=None, responses=EnabledOut,
                   description="Turn it on again, and send again what it missed while it was "
                               "failing or off.")
    def post(self, request, brand_id: str, endpoint_id: str):
        endpoint = endpoint_of(owned(request, brand_id), endpoint_id)
        again = endpoints.enable(endpoint)
        return Response({"endpoint": EndpointOut(endpoint).data, "sent_again": again})


class WebhookDisable(APIView):
    @extend_schema(operation_id="webhooks_disable", request=None, responses=EndpointOut)
    def post(self, request, brand_id: str, endpoint_id: str):
        endpoint = endpoint_of(owned(request, brand_id), endpoint_id)
        return Response(EndpointOut(endpoints.change(endpoint, enabled=False)).data)


class QueuedOut(serializers.Serializer):
    delivery = serializers.CharField(help_text="The outbox delivery (dlv_…), in the log.")
    event = serializers.CharField(help_text="The event's id, sent as `webhook-id`.")
    next_attempt = serializers.DateTimeField()


def queued(delivery: Delivery) -> Response:
    return Response(QueuedOut({"delivery": delivery.pk, "event": delivery.event,
                               "next_attempt": delivery.next_attempt}).data,
                    status=status.HTTP_202_ACCEPTED)


class WebhookTest(APIView):
    @extend_schema(operation_id="webhooks_test", request=None, responses={202: QueuedOut},
                   description=f"Send a test event (`{catalogue.TEST_TYPE}`), even when it is "
                               "off; the tick's outbox posts it.")
    def post(self, request, brand_id: str, endpoint_id: str):
        return queued(endpoints.send_test(endpoint_of(owned(request, brand_id), endpoint_id)))


class ResendIn(StrictSerializer):
    event = serializers.RegexField(r"^rec_[0-9A-Za-z]{1,40}$", max_length=48,
                                   help_text="The event's id (rec_…).", error_messages={
                                       "invalid": "an event's id is rec_ and letters or digits"})


class WebhookResend(APIView):
    @extend_schema(operation_id="webhooks_resend", request=ResendIn, responses={202: QueuedOut},
                   description="Send one event again, with its own `webhook-id`.")
    def post(self, request, brand_id: str, endpoint_id: str):
        endpoint = endpoint_of(owned(request, brand_id), endpoint_id)
        try:
            return queued(endpoints.resend(endpoint, read(ResendIn, request)["event"]))
        except endpoints.Invalid as invalid:
            raise refused(invalid) from None


class ReplayIn(StrictSerializer):
    since = serializers.CharField(max_length=64, help_text="From this instant (ISO 8601 with "
                                                           "an offset or Z), inclusive.")
    until = serializers.CharField(
        max_length=64, help_text=f"To this instant, exclusive; at most "
                                 f"{endpoints.REPLAY_SPAN.days} days after `since`.")

    def validate_since(self, value: str):
        return _instant(value, "since")

    def validate_until(self, value: str):
        return _instant(value, "until")


def _instant(value: str, name: str):
    try:
        return instants.parse_instant(value, field=name)
    except ValueError as error:
        raise serializers.ValidationError(str(error).removeprefix(f"{name}: ")) from None


class ReplayedOut(serializers.Serializer):
    sent_again = serializers.IntegerField(
        help_text=f"How many go again: each event it hears written in the span that it does "
                  f"not have (failed, or never made), at most {endpoints.REPLAY_MOST}.")


class WebhookReplay(APIView):
    @extend_schema(operation_id="webhooks_replay", request=ReplayIn, responses=ReplayedOut,
                   description="Send again the events written between two instants that it "
                               "does not have.")
    def post(self, request, brand_id: str, endpoint_id: str):
        endpoint = endpoint_of(owned(request, brand_id), endpoint_id)
        span = read(ReplayIn, request)
        try:
            again = endpoints.replay(endpoint, since=span["since"], until=span["until"])
        except endpoints.Invalid as invalid:
            raise refused(invalid) from None
        return Response({"sent_again": again})
