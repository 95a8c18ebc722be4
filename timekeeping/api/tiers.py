"""The brand's plan over the API (S24, S26): read what moving to a plan would leave on the old
terms (GET, stores nothing), and move the brand to it (POST, the owner only), answering how
many subscriptions, jobs and subjects keep their plan and until when. Both go through
`timekeeping.recurring.terms`, as the console's settings page does."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping.api.access import kept_brand, owned, who
from timekeeping.recurring import terms
from timekeeping.specs import tiers
from timekeeping.web.strict import StrictSerializer


class BrandPlanIn(StrictSerializer):
    plan = serializers.ChoiceField(choices=tiers.PLANS, help_text="The plan to move to.")


class BrandPlanQuery(StrictSerializer):
    to = serializers.ChoiceField(choices=tiers.PLANS, required=False,
                                 help_text="The plan a move would be to; the brand's own "
                                           "when left out.")


class KeptPlanOut(serializers.Serializer):
    plan = serializers.ChoiceField(choices=tiers.PLANS, help_text="The plan they keep.")
    subscriptions = serializers.IntegerField(help_text="Active subscriptions ordered under it.")
    jobs = serializers.IntegerField(help_text="Open jobs opened under it.")
    subjects = serializers.IntegerField(help_text="Subjects holding open dates of clocks that "
                                                  "outlive their job, made under it.")
    last_ends = serializers.DateField(allow_null=True, help_text="The last end known: a "
                                      "cancelled subscription's stop, a job's or subject's "
                                      "last open date.")
    open_ended = serializers.IntegerField(help_text="How many have no end date yet (a "
                                                    "subscription renews until cancelled).")


class BrandPlanOut(serializers.Serializer):
    plan = serializers.ChoiceField(choices=tiers.PLANS, help_text="The plan moved (or a move "
                                                                  "would be) to.")
    was = serializers.ChoiceField(choices=tiers.PLANS, help_text="The plan before.")
    kept = KeptPlanOut(many=True, help_text="What keeps each higher plan than `plan`: live "
                                          "work runs to its end on the plan it opened under.")
    said = serializers.CharField(help_text="The same in plain words.")


class BrandPlan(APIView):
    @extend_schema(operation_id="plan_read", responses=BrandPlanOut, parameters=[
        OpenApiParameter("to", str, enum=list(tiers.PLANS), required=False,
                         description="The plan a move would be to; the brand's own when "
                                     "left out.")])
    def get(self, request, brand_id: str):
        brand = kept_brand(request, brand_id)
        given = BrandPlanQuery(data=request.query_params.dict())
        given.is_valid(raise_exception=True)
        return Response(BrandPlanOut(terms.kept_on(brand, given.validated_data.get(
            "to", brand.plan)).as_dict()).data)

    @extend_schema(operation_id="plan_change", request=BrandPlanIn, responses=BrandPlanOut)
    def post(self, request, brand_id: str):
        brand = owned(request, brand_id)
        given = BrandPlanIn(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            kept = terms.change_plan(brand=brand, plan=given.validated_data["plan"],
                                     by=who(request))
        except terms.PlanRefused as refused:
            raise ValidationError({refused.field: [str(refused)]}) from None
        return Response(BrandPlanOut(kept.as_dict()).data)
