"""Test clocks over the API (SPEC S5): create, read, advance.

Every query is scoped to the brands the caller keeps (owner, staff); a clock of another
brand answers 404, as if it did not exist.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping import test_clocks, trace
from timekeeping.api.access import brand_for, kept
from timekeeping.api.strict import StrictSerializer
from timekeeping.instants import parse_instant
from timekeeping.models import TestClock


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


class TraceRowOut(serializers.Serializer):
    pass_no = serializers.IntegerField(source="row.pass_no")
    timer = serializers.CharField(source="row.timer.id")
    owed = InstantField(source="row.timer.owed")
    fired = InstantField(source="row.fired", allow_null=True)
    place = serializers.IntegerField(source="row.timer.place")
    kind = serializers.CharField(source="row.timer.kind")
    on = serializers.CharField(source="row.timer.owner_id")
    what = serializers.CharField(source="row.what")
    outcome = serializers.CharField(source="row.outcome")
    armed = serializers.ListField(child=serializers.CharField())


class AdvanceOut(serializers.Serializer):
    test_clock = TestClockOut()
    fired = serializers.IntegerField()
    armed = serializers.IntegerField()
    failed = serializers.IntegerField()
    passes = serializers.IntegerField()
    runaway = serializers.BooleanField()
    trace = serializers.CharField(help_text="The trace, as `manage.py tick --trace` prints it.")
    rows = TraceRowOut(many=True)


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


class TestClockDetail(APIView):
    @extend_schema(responses=TestClockOut)
    def get(self, request, clock_id: str):
        return Response(TestClockOut(kept_clock(request, clock_id)).data)


class TestClockAdvance(APIView):
    @extend_schema(request=AdvanceIn, responses=AdvanceOut)
    def post(self, request, clock_id: str):
        # An unknown clock and another brand's answer the same 404: a stranger learns
        # nothing of which ids exist.
        test_clock = kept_clock(request, clock_id)
        given = AdvanceIn(data=request.data)
        given.is_valid(raise_exception=True)
        start = test_clock.frozen_time
        try:
            ticked = test_clocks.advance(test_clock, to=given.validated_data["to"])
        except test_clocks.AdvanceRefused as refused:
            code = (status.HTTP_409_CONFLICT if refused.field == "test_clock"
                    else status.HTTP_400_BAD_REQUEST)
            return Response({refused.field: [refused.message]}, status=code)
        run = ticked.run
        body = {
            "test_clock": test_clock, "fired": run.fired, "armed": run.armed,
            "failed": run.failed, "passes": run.passes, "runaway": run.runaway,
            "trace": trace.render(ticked, label=test_clock.pk, start=start,
                                  end=test_clock.frozen_time),
            "rows": [{"row": row, "armed": [timer.id for timer in row.armed]}
                     for row in ticked.rows],
        }
        return Response(AdvanceOut(body).data)
