"""Postponements over the API: add a notice to the brand's calendar (POST), which moves the
dates it covers, and list the notices on the calendars of the brands you keep (docs/api.md).
"""

from __future__ import annotations

import dataclasses

from django.db.models import Q, QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from calendars.models import Postponement
from timekeeping import clocks
from timekeeping.access.calendars import NO_CALENDAR, SHARED, CalendarRefused, notice_calendar
from timekeeping.api import queries
from timekeeping.api.access import brand_for, brands, who
from timekeeping.api.queries import Listing
from timekeeping.api.subjects import test_clock_of
from timekeeping.models import TestClock
from timekeeping.web.strict import StrictSerializer


class PostponementIn(StrictSerializer):
    brand = serializers.CharField(required=False, max_length=48)
    through = serializers.DateField()
    to = serializers.DateField()
    where = serializers.DictField(required=False, default=dict)
    notice = serializers.CharField(max_length=500)
    test_clock = serializers.CharField(required=False, max_length=48,
                                       help_text="Move a test clock's world instead of the "
                                                 "real one.")

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = serializers.DateField(source="from_date")  # a Python keyword
        return fields


class PostponementOut(serializers.Serializer):
    id = serializers.IntegerField()
    moved = serializers.ListField(
        child=serializers.CharField(),
        help_text="One line per date moved (\"pay 2028-04-18 → 2028-05-15\"); a date that "
                  "had lapsed in the range is reopened there, its line ending \" · reopened\" "
                  "(a late notice).")


# Why a notice is refused (timekeeping.access.calendars), as the API says it.
REFUSALS = {
    NO_CALENDAR: "the brand has no calendar; load a manifest with a calendar section first",
    SHARED: "the brand's calendar is shared with brands you do not keep; an operator adds its "
            "notices",
}


class PostponementList(APIView):
    @extend_schema(request=PostponementIn, responses={201: PostponementOut})
    def post(self, request):
        given = PostponementIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = dict(given.validated_data)
        brand = brand_for(request, data.pop("brand", None))
        try:
            calendar = notice_calendar(brand, brands(request))
        except CalendarRefused as refused:
            raise ValidationError({"brand": [REFUSALS[refused.code]]}) from None
        test_clock = test_clock_of(brand, data.pop("test_clock", None))
        try:
            postponement, moved = clocks.add_postponement(
                calendar=calendar, test_clock_id=test_clock.pk if test_clock else "",
                by=who(request), **data)
        except clocks.OrderRefused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        return Response({"id": postponement.pk, "moved": moved},
                        status=status.HTTP_201_CREATED)


class BlankAsNull(serializers.CharField):
    """Text kept blank for "none", given as null."""

    def to_representation(self, value) -> str | None:
        return str(value) or None


class PostponementRead(serializers.ModelSerializer):
    test_clock = BlankAsNull(allow_null=True, help_text="The test clock whose world it "
                                                        "moved; null: the real clock's.")

    class Meta:
        model = Postponement
        fields = ["id", "calendar", "through", "to", "where", "notice", "test_clock"]

    def get_fields(self) -> dict:
        fields = super().get_fields()
        fields["from"] = serializers.DateField(source="from_date")  # a Python keyword
        return {name: fields[name] for name in ("id", "calendar", "from", "through", "to",
                                                "where", "notice", "test_clock")}


def _of_brand(rows: QuerySet, brand_id: str) -> QuerySet:
    # A calendar may be shared: its notices on the real clock are every sharing brand's;
    # a notice on a test clock is its brand's only.
    mine = TestClock.objects.filter(brand_id=brand_id).values("pk")
    return rows.filter(calendar__brands__pk=brand_id).filter(
        Q(test_clock="") | Q(test_clock__in=mine))


@extend_schema_view(get=extend_schema(
    description="The postponements on the calendars of the brands you keep, by their first "
                "day: a notice on a calendar you share with other brands is listed; one on "
                "another brand's test clock is not."))
class Postponements(Listing, PostponementList):
    # POST (add a postponement) is PostponementList's, unchanged; GET lists.
    serializer_class = PostponementRead
    filters = (dataclasses.replace(queries.brand_filter(), apply=_of_brand),)

    def scoped(self) -> QuerySet:
        kept = brands(self.request)
        calendars = kept.exclude(calendar=None).values("calendar_id")
        worlds = TestClock.objects.filter(brand__in=kept).values("pk")
        return Postponement.objects.filter(calendar__in=calendars).filter(
            Q(test_clock="") | Q(test_clock__in=worlds)).order_by("from_date", "id")
