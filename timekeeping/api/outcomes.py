"""Outcomes in the API (S21): read a job's outcome, record a payment that matches it, reverse
one inside its window, record it lost. Each goes through `timekeeping.recurring.outcomes`."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping.api.access import kept, who
from timekeeping.models import Outcome
from timekeeping.recurring import outcomes
from timekeeping.web.strict import StrictSerializer


class OutcomeOut(serializers.ModelSerializer):
    class Meta:
        model = Outcome
        fields = ["id", "brand", "subject", "job", "state", "due", "ended", "tail_until",
                  "collected", "opened", "test_clock"]


class CollectionIn(StrictSerializer):
    amount = serializers.IntegerField(min_value=1, max_value=outcomes.AMOUNT_MAX,
                                      help_text="What the payment brought, in whole minor "
                                                "units: the brand's share is taken from it.")
    currency = serializers.RegexField(r"^[A-Z]{3}$", help_text="The share's currency.")
    method = serializers.CharField(max_length=32, help_text="How it was paid: one of the "
                                   "outcome's window methods (\"bank\", \"card\").")
    invoice = serializers.CharField(max_length=64, help_text="The invoice it pays: each has "
                                    "its own window.")


class CollectionOut(serializers.Serializer):
    outcome = serializers.CharField()
    invoice = serializers.CharField()
    method = serializers.CharField()
    amount = serializers.IntegerField()
    charge = serializers.IntegerField(help_text="The brand's share, held until the window "
                                                "closes.")
    pay = serializers.IntegerField(help_text="The member's share pay, held with it.")
    member = serializers.CharField(help_text="Who earns the pay (mbr_…), or empty.")
    currency = serializers.CharField()
    closes = serializers.DateTimeField()
    won = serializers.BooleanField(help_text="This payment won the outcome.")


class ReversalIn(StrictSerializer):
    invoice = serializers.CharField(max_length=64)
    why = serializers.ChoiceField(choices=["refund", "chargeback"])


class LostIn(StrictSerializer):
    why = serializers.CharField(max_length=200, help_text="What ended it (\"claim denied\").")


def _outcome(request, outcome_id: str) -> Outcome:
    return kept(request, Outcome.objects.select_related("job", "test_clock"), outcome_id,
                "outcome")


def _refused(refused: outcomes.OutcomeRefused) -> ValidationError:
    return ValidationError({refused.field: [refused.message]})


class OutcomeDetail(APIView):
    @extend_schema(responses=OutcomeOut, summary="A job's outcome: waiting, won, lapsed or lost")
    def get(self, request, outcome_id: str):
        return Response(OutcomeOut(_outcome(request, outcome_id)).data)


class OutcomePayments(APIView):
    @extend_schema(request=CollectionIn, responses={201: CollectionOut},
                   summary="Record a payment that matches the outcome")
    def post(self, request, outcome_id: str):
        found = _outcome(request, outcome_id)
        given = CollectionIn(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            said = outcomes.collect(found, **given.validated_data, by=who(request))
        except outcomes.OutcomeRefused as refused:
            raise _refused(refused) from None
        return Response(CollectionOut(said).data, status=status.HTTP_201_CREATED)


class OutcomeReversals(APIView):
    @extend_schema(request=ReversalIn, responses={201: OutcomeOut},
                   summary="A refund or chargeback of one invoice inside its window")
    def post(self, request, outcome_id: str):
        found = _outcome(request, outcome_id)
        given = ReversalIn(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            outcomes.reverse(found, **given.validated_data, by=who(request))
        except outcomes.OutcomeRefused as refused:
            raise _refused(refused) from None
        return Response(OutcomeOut(_outcome(request, outcome_id)).data,
                        status=status.HTTP_201_CREATED)


class OutcomeLost(APIView):
    @extend_schema(request=LostIn, responses=OutcomeOut,
                   summary="Record a waiting outcome lost; its tail still watches")
    def post(self, request, outcome_id: str):
        found = _outcome(request, outcome_id)
        given = LostIn(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            lost = outcomes.lose(found, **given.validated_data, by=who(request))
        except outcomes.OutcomeRefused as refused:
            raise _refused(refused) from None
        return Response(OutcomeOut(lost).data)
