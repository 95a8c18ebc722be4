"""Jobs over the API: order one (POST), list and read them with their clocks, and propose a
step on one through the gate (docs/api.md). A job's work (asks, tasks, deadlines, its end) is
`timekeeping.api.work`.
"""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping import clocks
from timekeeping.api import queries
from timekeeping.api.access import brands, kept, who
from timekeeping.api.clocks import ClockRead, StepOut, with_next_due
from timekeeping.api.queries import Listing
from timekeeping.clocks import gate
from timekeeping.models import Clock, Job, Subject
from timekeeping.web.strict import StrictSerializer


class JobIn(StrictSerializer):
    service = serializers.CharField(max_length=100)
    subject = serializers.CharField(max_length=48, help_text="The subject's id (sbj_…); the "
                                    "job runs on the subject's clock.")
    period = serializers.CharField(required=False, allow_blank=True, default="", max_length=32)
    input = serializers.DictField(required=False, default=dict)


class JobOut(serializers.ModelSerializer):
    class Meta:
        model = Job
        fields = ["id", "brand", "subject", "service", "period", "input", "state", "bundle",
                  "plan", "opened", "test_clock"]


class JobList(APIView):
    @extend_schema(request=JobIn, responses={201: JobOut})
    def post(self, request):
        given = JobIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        subject = kept(request, Subject.objects.select_related("brand", "test_clock"),
                       data["subject"], "subject")
        try:
            job = clocks.order(brand=subject.brand, service=data["service"], subject=subject,
                               period=data["period"], input=data["input"],
                               by=who(request))
        except clocks.PeriodTaken as taken:
            return Response({"code": "period_taken", "detail": str(taken)},
                            status=status.HTTP_409_CONFLICT)
        except clocks.OrderRefused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        return Response(JobOut(job).data, status=status.HTTP_201_CREATED)


class JobRead(JobOut):
    class Meta(JobOut.Meta):
        fields = [*JobOut.Meta.fields, "ended"]


class JobDetailRead(JobRead):
    clocks = ClockRead(many=True, help_text="The job's clocks, by name.")

    class Meta(JobRead.Meta):
        fields = [*JobRead.Meta.fields, "clocks"]


@extend_schema_view(get=extend_schema(
    description="The jobs of the brands you keep, the latest opened first."))
class Jobs(Listing, JobList):
    # POST (order a job) is JobList's, unchanged; GET lists.
    serializer_class = JobRead
    filters = (
        queries.brand_filter(),
        queries.public_id("subject", "subject_id", "sbj", description="Only this subject's."),
        queries.text("service", "service", max_length=100, description="Only this service's."),
        queries.text("period", "period", max_length=32, description="Only this period's "
                                                                    "(e.g. 2027)."),
        queries.one_of("state", "state", Job.State.values, description="Only jobs in this "
                                                                       "state."),
        queries.world_filter(),
    )

    def scoped(self) -> QuerySet:
        return Job.objects.filter(brand__in=brands(self.request)).order_by("-opened", "id")


class JobDetail(APIView):
    """A job, with its clocks."""

    @extend_schema(responses=JobDetailRead)
    def get(self, request, job_id: str):
        rows = Job.objects.prefetch_related(
            Prefetch("clocks", queryset=with_next_due(Clock.objects.order_by("name"))))
        return Response(JobDetailRead(kept(request, rows, job_id, "job")).data)


class StepIn(StrictSerializer):
    step = serializers.CharField(max_length=100)
    items = serializers.ListField(child=serializers.CharField(max_length=64), required=False,
                                  default=list, max_length=100)


class JobSteps(APIView):
    @extend_schema(request=StepIn, responses={200: StepOut, 409: StepOut})
    def post(self, request, job_id: str):
        job = kept(request, Job.objects.all(), job_id, "job")
        given = StepIn(data=request.data)
        given.is_valid(raise_exception=True)
        outcome = gate.propose(job=job, step=given.validated_data["step"],
                               items=given.validated_data["items"], by=who(request))
        return Response(StepOut(outcome).data,
                        status=status.HTTP_200_OK if outcome.committed else
                        status.HTTP_409_CONFLICT)
