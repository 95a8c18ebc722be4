"""Subscriptions in the API (S19, T2): subscribe a subject to a plan, read it with its
allowances (used, left, when they reset) and its next renewal, cancel it at its cycle's end,
and resume it before that end. Each goes through `timekeeping.recurring.plans`, as the pages
do."""

from __future__ import annotations

from datetime import date

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping import clocks
from timekeeping.api.access import kept, who
from timekeeping.models import Subject, Subscription
from timekeeping.recurring import dunning, plans
from timekeeping.timers.firing import now_for
from timekeeping.web.strict import StrictSerializer


class SubscriptionIn(StrictSerializer):
    subject = serializers.CharField(max_length=48, help_text="The subject's id (sbj_…).")
    service = serializers.CharField(max_length=100, help_text="The plan: a service with "
                                                              "'price.every'.")
    anchor = serializers.DateField(required=False, help_text="The first day of cycle 1; "
                                   "today in the subject's zone when left out.")


class AllowanceOut(serializers.Serializer):
    service = serializers.CharField()
    included = serializers.IntegerField()
    used = serializers.IntegerField()
    left = serializers.IntegerField()
    cycle = serializers.IntegerField()
    resets_on = serializers.DateField()


class SubscriptionOut(serializers.ModelSerializer):
    renews_on = serializers.SerializerMethodField(help_text="The first day of the next cycle.")
    allowances = serializers.SerializerMethodField()
    owed = serializers.SerializerMethodField(
        help_text="What its cycles so far charged and no payment covered, in minor units.")
    paid_through = serializers.SerializerMethodField(
        help_text="The last cycle whose charge is paid in full (0: none).")

    class Meta:
        model = Subscription
        fields = ["id", "brand", "subject", "service", "plan", "bundle", "anchor", "cycle",
                  "state", "ends_after", "opened", "test_clock", "renews_on", "allowances",
                  "paid", "owed", "paid_through", "frozen_since"]

    def get_owed(self, subscription: Subscription) -> int:
        return dunning.owed(subscription)

    def get_paid_through(self, subscription: Subscription) -> int:
        return dunning.paid_through(subscription)

    def get_renews_on(self, subscription: Subscription) -> date:
        return plans.renews_on(subscription, subscription.cycle + 1)

    @extend_schema_field(AllowanceOut(many=True))
    def get_allowances(self, subscription: Subscription) -> list[dict]:
        now = now_for(subscription.brand, subscription.test_clock)
        return AllowanceOut(plans.allowances(subscription, at=now), many=True).data


class SubscriptionList(APIView):
    @extend_schema(request=SubscriptionIn, responses={201: SubscriptionOut},
                   summary="Subscribe a subject to a plan")
    def post(self, request):
        given = SubscriptionIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        subject = kept(request, Subject.objects.select_related("brand", "test_clock"),
                       data["subject"], "subject")
        try:
            made = plans.subscribe(subject=subject, service=data["service"],
                                   anchor=data.get("anchor"), by=who(request))
        except clocks.OrderRefused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        return Response(SubscriptionOut(made).data, status=status.HTTP_201_CREATED)


class SubscriptionDetail(APIView):
    @extend_schema(responses=SubscriptionOut, summary="A subscription, with its allowances")
    def get(self, request, subscription_id: str):
        found = kept(request, Subscription.objects.select_related("test_clock", "subject"),
                     subscription_id, "subscription")
        return Response(SubscriptionOut(found).data)


class SubscriptionCancel(APIView):
    @extend_schema(request=None, responses=SubscriptionOut,
                   summary="Cancel at the end of the current cycle")
    def post(self, request, subscription_id: str):
        found = kept(request, Subscription.objects.select_related("test_clock", "subject"),
                     subscription_id, "subscription")
        return Response(SubscriptionOut(plans.cancel_at_cycle_end(found, by=who(request))).data)


class SubscriptionResume(APIView):
    @extend_schema(request=None, responses=SubscriptionOut,
                   summary="Resume a subscription cancelled at its cycle's end, before it ends")
    def post(self, request, subscription_id: str):
        found = kept(request, Subscription.objects.select_related("test_clock", "subject"),
                     subscription_id, "subscription")
        try:
            resumed = plans.resume(found, by=who(request))
        except clocks.OrderRefused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        return Response(SubscriptionOut(resumed).data)


class PaymentIn(StrictSerializer):
    amount = serializers.IntegerField(min_value=1, max_value=10**12,
                                      help_text="Whole minor units received (cents).")
    currency = serializers.RegexField(r"^[A-Z]{3}$", help_text="The plan's currency (\"USD\").")


class SubscriptionPayments(APIView):
    @extend_schema(request=PaymentIn, responses={201: SubscriptionOut},
                   summary="Record a payment received toward the subscription's charges")
    def post(self, request, subscription_id: str):
        found = kept(request, Subscription.objects.select_related("test_clock", "subject"),
                     subscription_id, "subscription")
        given = PaymentIn(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            paid = dunning.pay(found, amount=given.validated_data["amount"],
                               currency=given.validated_data["currency"], by=who(request))
        except dunning.PaymentRefused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        return Response(SubscriptionOut(paid).data, status=status.HTTP_201_CREATED)


class EventIn(StrictSerializer):
    event = serializers.CharField(max_length=64, help_text="The event's name, as a plan's "
                                  "`on.event` names it (\"notice.received\").")
    key = serializers.CharField(max_length=32, help_text="This event's own name (the notice's "
                                "number): the minted job's period, so it mints once.")
    input = serializers.DictField(required=False, default=dict,
                                  help_text="The minted job's input (\"reply_by\": a date).")


class MintedOut(serializers.Serializer):
    minted = serializers.ListField(child=serializers.CharField(), help_text="The jobs' ids.")


class SubjectEvents(APIView):
    @extend_schema(request=EventIn, responses={201: MintedOut},
                   summary="A subject received an event: its plans mint their jobs")
    def post(self, request, subject_id: str):
        subject = kept(request, Subject.objects.select_related("brand", "test_clock"),
                       subject_id, "subject")
        given = EventIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        try:
            minted = plans.receive(subject=subject, event=data["event"], key=data["key"],
                                   input=data["input"], by=who(request))
        except clocks.OrderRefused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        return Response(MintedOut({"minted": minted}).data, status=status.HTTP_201_CREATED)
