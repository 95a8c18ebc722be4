"""Test clocks over the API (SPEC S5): create, read, advance (answered at once; the tick
walks it), and the latest advance's trace.

Every query is scoped to the brands the caller keeps (owner, staff); a clock of another
brand answers 404, as if it did not exist.
"""

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping.api import queries
from timekeeping.api.access import brand_for, brands, kept, who
from timekeeping.api.queries import Listing
from timekeeping.basics.instants import parse_instant
from timekeeping.models import TestClock
from timekeeping.tick import test_clocks, trace
from timekeeping.web.strict import StrictSerializer


@extend_schema_field(OpenApiTypes.DATETIME)
class InstantField(serializers.Field):
    """An ISO 8601 instant with an offset or Z; anything else is refused, naming the rule."""

    def to_internal_value(self, data):
        try:
            return parse_instant(data, field=self.field_name)
        except ValueError as error:
            raise serializers.ValidationError(str(error).split(": ", 1)[1]) from None

    def to_representation(self, value):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")


class TestClockOut(serializers.ModelSerializer):
    frozen_time = InstantField()

    class Meta:
        model = TestClock
        fields = ["id", "brand", "name", "frozen_time", "status"]


class TestClockIn(StrictSerializer):
    brand = serializers.CharField(required=False, max_length=48,
                                  help_text="Needed when you keep several brands.")
    name = serializers.CharField(max_length=200)
    frozen_time = InstantField()


class AdvanceIn(StrictSerializer):
    to = InstantField()


class WalkOut(serializers.Serializer):
    id = serializers.CharField()
    state = serializers.CharField(help_text="walking, done or failed")
    start = InstantField(help_text="The clock's time when the advance was asked for.")
    to = InstantField(help_text="Where the walk ends.")
    reached = InstantField(help_text="The last instant walked: the clock's time.")
    share = serializers.FloatField(help_text="The part of the span walked, 0 to 1.")
    fired = serializers.IntegerField(help_text="Timers fired so far.")
    armed = serializers.IntegerField()
    held = serializers.IntegerField()
    failed = serializers.IntegerField()
    dropped = serializers.IntegerField()
    passes = serializers.IntegerField()
    schedule_runs = serializers.IntegerField()
    runaway = serializers.BooleanField()
    step_s = serializers.IntegerField(help_text="The least time between two of the walk's "
                                                "ticks for schedules; 0: every due time.")
    requested = InstantField()
    finished = InstantField(allow_null=True)
    by = serializers.CharField()
    error = serializers.CharField()
    trace = serializers.SerializerMethodField(help_text="Where its trace is read.")

    def get_trace(self, walk) -> str:
        return f"/api/test_clocks/{walk.test_clock_id}/trace"


class TestClockWalkOut(TestClockOut):
    walk = serializers.SerializerMethodField(help_text="Its latest advance (null before the "
                                                       "first), with its progress.")

    class Meta(TestClockOut.Meta):
        fields = [*TestClockOut.Meta.fields, "walk"]

    @extend_schema_field(WalkOut(allow_null=True))
    def get_walk(self, test_clock):
        walk = test_clocks.latest(test_clock)
        return WalkOut(walk).data if walk is not None else None


def kept_clock(request, clock_id: str) -> TestClock:
    return kept(request, TestClock.objects.select_related("brand"), clock_id, "test_clock")


class TestClockList(APIView):
    @extend_schema(request=TestClockIn, responses={201: TestClockOut})
    def post(self, request):
        given = TestClockIn(data=request.data)
        given.is_valid(raise_exception=True)
        brand = brand_for(request, given.validated_data.get("brand"))
        created = test_clocks.create(brand=brand, name=given.validated_data["name"],
                                     frozen_time=given.validated_data["frozen_time"])
        return Response(TestClockOut(created).data, status=status.HTTP_201_CREATED)


@extend_schema_view(get=extend_schema(
    description="The test clocks of the brands you keep, by name."))
class TestClocks(Listing, TestClockList):
    # POST (make a test clock) is TestClockList's, unchanged; GET lists.
    serializer_class = TestClockOut
    filters = (
        queries.brand_filter(),
        queries.one_of("status", "status", TestClock.Status.values,
                       description="Only test clocks in this status."),
    )

    def scoped(self) -> QuerySet:
        return TestClock.objects.filter(brand__in=brands(self.request)).order_by("name", "id")


class TestClockDetail(APIView):
    @extend_schema(responses=TestClockWalkOut)
    def get(self, request, clock_id: str):
        return Response(TestClockWalkOut(kept_clock(request, clock_id)).data)


class AdvanceRefusedOut(serializers.Serializer):
    test_clock = serializers.ListField(child=serializers.CharField())
    walking_to = InstantField(required=False, help_text="The target of the advance under way.")


class TestClockAdvance(APIView):
    @extend_schema(request=AdvanceIn, responses={202: TestClockWalkOut, 409: AdvanceRefusedOut})
    def post(self, request, clock_id: str):
        """Ask for an advance: answered at once (202) with the clock `advancing`; the tick
        walks it. Follow it with `GET /api/test_clocks/{id}`."""
        # An unknown clock and another brand's answer the same 404: a stranger learns
        # nothing of which ids exist.
        test_clock = kept_clock(request, clock_id)
        given = AdvanceIn(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            test_clocks.request(test_clock, to=given.validated_data["to"], by=who(request))
        except test_clocks.AdvanceRefused as refused:
            if refused.field != "test_clock":
                return Response({refused.field: [refused.message]},
                                status=status.HTTP_400_BAD_REQUEST)
            body = {"test_clock": [refused.message]}
            if refused.walking is not None:
                body["walking_to"] = InstantField().to_representation(refused.walking.to)
            return Response(body, status=status.HTTP_409_CONFLICT)
        test_clock.refresh_from_db()
        return Response(TestClockWalkOut(test_clock).data, status=status.HTTP_202_ACCEPTED)


class TestClockTrace(APIView):
    @extend_schema(responses={(200, "text/plain"): OpenApiTypes.STR},
                   parameters=[OpenApiParameter("on", str, description=(
                       "Comma-separated owner ids: only their timers, and what their "
                       "firings armed."))])
    def get(self, request, clock_id: str):
        """The trace of the clock's latest advance, as `manage.py tick --trace` prints it,
        so far while it walks; 404 before its first advance."""
        test_clock = kept_clock(request, clock_id)
        walk = test_clocks.latest(test_clock)
        if walk is None:
            raise NotFound(f"trace: test clock {clock_id!r} has not been advanced")
        on = [part for part in request.query_params.get("on", "").split(",") if part][:100]
        lines = trace.walk_lines(walk, on=on)
        return StreamingHttpResponse((f"{line}\n" for line in lines),
                                     content_type="text/plain; charset=utf-8")
