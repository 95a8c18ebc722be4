"""Reading what the API writes: subjects, jobs, clocks with their dates, timers and records
(docs/api.md). Test clocks, postponements, manifests and schedules are read in
`timekeeping.api.reading_operations`.

Lists are scoped to the caller's brands, filtered and paginated as `timekeeping.api.queries`
says; a detail of another brand answers 404 exactly as a missing one (`access.kept`). Each
output serializer declares every field it returns: the schema is what the answer holds.
"""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Exists, OuterRef, Prefetch, Q, QuerySet, Subquery
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping.api import queries, services
from timekeeping.api.access import brands, kept
from timekeeping.api.queries import Listing
from timekeeping.api.services import JobOut, SubjectOut
from timekeeping.models import Clock, Job, Occurrence, Record, Subject, Timer
from timekeeping.timers import arming

# -- subjects ----------------------------------------------------------------------------------


@extend_schema_view(get=extend_schema(
    description="The subjects of the brands you keep, by brand and name."))
class Subjects(Listing, services.SubjectList):
    # POST (make a subject) is services.SubjectList's, unchanged; GET lists.
    serializer_class = SubjectOut
    filters = (
        queries.brand_filter(),
        queries.text("kind", "kind", max_length=64, description="Only subjects of this kind."),
        queries.search("q", ("name", "key"), description="Subjects whose name or key holds "
                                                          "this text, in any case."),
        queries.world_filter(),
    )

    def scoped(self) -> QuerySet:
        return Subject.objects.filter(brand__in=brands(self.request)).order_by(
            "brand_id", "name", "id")


class SubjectDetail(APIView):
    """A subject, with the fields it was made with."""

    @extend_schema(responses=SubjectOut)
    def get(self, request, subject_id: str):
        return Response(SubjectOut(kept(request, Subject.objects.all(), subject_id,
                                        "subject")).data)


# -- jobs and their clocks ---------------------------------------------------------------------


class OccurrenceRead(serializers.ModelSerializer):
    class Meta:
        model = Occurrence
        fields = ["item", "seq", "label", "due", "rule_due", "rolled_from", "roll_reasons",
                  "moved_from", "moved_by", "late_from", "status", "settled", "settled_by",
                  "acknowledged", "assignee"]

    label = serializers.CharField(help_text="How timers and traces name it: clk_…#item@seq.")


class ClockRead(serializers.ModelSerializer):
    next_due = serializers.DateField(allow_null=True, help_text="The earliest open date.")

    class Meta:
        model = Clock
        fields = ["id", "brand", "test_clock", "subject", "job", "name", "title", "owner",
                  "hard", "lives_on_subject", "bundle", "opened", "next_due"]


class ClockDetailRead(ClockRead):
    occurrences = OccurrenceRead(many=True, help_text="Its dates, soonest first.")

    class Meta(ClockRead.Meta):
        fields = [*ClockRead.Meta.fields, "occurrences"]


class JobRead(JobOut):
    class Meta(JobOut.Meta):
        fields = [*JobOut.Meta.fields, "ended"]


class JobDetailRead(JobRead):
    clocks = ClockRead(many=True, help_text="The job's clocks, by name.")

    class Meta(JobRead.Meta):
        fields = [*JobRead.Meta.fields, "clocks"]


def _with_next_due(rows: QuerySet) -> QuerySet:
    soonest = Occurrence.objects.filter(clock=OuterRef("pk"), status=Occurrence.Status.OPEN)
    return rows.annotate(next_due=Subquery(soonest.order_by("due").values("due")[:1]))


@extend_schema_view(get=extend_schema(
    description="The jobs of the brands you keep, the latest opened first."))
class Jobs(Listing, services.JobList):
    # POST (order a job) is services.JobList's, unchanged; GET lists.
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
            Prefetch("clocks", queryset=_with_next_due(Clock.objects.order_by("name"))))
        return Response(JobDetailRead(kept(request, rows, job_id, "job")).data)


OCCURRENCE_FILTERS = ("status", "due_from", "due_to")


class Clocks(Listing):
    """The clocks of the brands you keep. `status`, `due_from` and `due_to` hold of one of the
    clock's dates together: `status=open&due_to=2027-04-15` lists the clocks with an open date
    on or before April 15th."""

    serializer_class = ClockRead
    filters = (
        queries.brand_filter(),
        queries.public_id("subject", "subject_id", "sbj", description="Only this subject's."),
        queries.public_id("job", "job_id", "job", description="Only this job's."),
        queries.one_of("status", "status", Occurrence.Status.values,
                       description="Only clocks with a date in this status."),
        queries.day("due_from", "due__gte", description="Only clocks with a date due on or "
                                                        "after this day"),
        queries.day("due_to", "due__lte", description="Only clocks with a date due on or "
                                                      "before this day"),
        queries.world_filter(),
    )

    def scoped(self) -> QuerySet:
        return _with_next_due(Clock.objects.filter(brand__in=brands(self.request))).order_by(
            "-opened", "job_id", "name")

    def narrow(self, rows: QuerySet, given: dict) -> QuerySet:
        # The date filters must hold of one and the same occurrence: one EXISTS holds them all.
        dates = [each for each in self.filters if each.name in OCCURRENCE_FILTERS]
        wanted = Occurrence.objects.filter(clock=OuterRef("pk"))
        for each in dates:
            if each.name in given:
                wanted = each.apply(wanted, given[each.name])
        if any(each.name in given for each in dates):
            rows = rows.filter(Exists(wanted))
        return super().narrow(rows, {name: value for name, value in given.items()
                                     if name not in OCCURRENCE_FILTERS})


class ClockDetail(APIView):
    """A clock, with its dates (occurrences)."""

    @extend_schema(responses=ClockDetailRead)
    def get(self, request, clock_id: str):
        rows = _with_next_due(Clock.objects.prefetch_related("occurrences"))
        return Response(ClockDetailRead(kept(request, rows, clock_id, "clock")).data)


# -- timers ------------------------------------------------------------------------------------


class Seconds(serializers.FloatField):
    """A duration as seconds."""

    def to_representation(self, value: timedelta) -> float:
        return value.total_seconds()


class TimerRead(serializers.ModelSerializer):
    late_by_s = Seconds(source="late_by", allow_null=True,
                        help_text="Seconds between when it was owed and when it fired.")
    failed_with = serializers.SerializerMethodField()

    class Meta:
        model = Timer
        fields = ["id", "brand", "test_clock", "key", "kind", "place", "owed", "state",
                  "fired", "late_by_s", "owner_type", "owner_id", "owner_opened", "bundle",
                  "payload", "armed_at", "armed_by", "ended_by", "attempts", "failed_with"]

    def get_failed_with(self, timer: Timer) -> str:
        """The last line of its handler's last error; empty when none failed."""
        lines = timer.last_error.strip().splitlines()
        return lines[-1] if lines else ""


class TimerDetailRead(TimerRead):
    why = serializers.SerializerMethodField()

    class Meta(TimerRead.Meta):
        fields = [*TimerRead.Meta.fields, "why"]

    def get_why(self, timer: Timer) -> str:
        """Why it has or has not fired, in a sentence (`manage.py timers why`)."""
        return arming.explain(timer)


class Timers(Listing):
    """The timers of the brands you keep, in the order the tick fires them."""

    serializer_class = TimerRead
    filters = (
        queries.brand_filter(),
        queries.one_of("state", "state", Timer.State.values, description="Only timers in "
                                                                         "this state."),
        queries.text("kind", "kind", max_length=32, description="Only timers of this kind "
                                                                "(clock, delay, …)."),
        queries.whole("place", "place", low=1, high=8, description="Only timers of this "
                                                                   "place in the tick."),
        queries.text("owner", "owner_id", max_length=64, description="Only timers of this "
                                                                     "owner (an id)."),
        queries.instant("owed_from", "owed__gte", description="Only timers owed at or after "
                                                              "this instant"),
        queries.instant("owed_to", "owed__lt", description="Only timers owed before this "
                                                           "instant"),
        queries.flag("late", Q(late_by__gt=timedelta(0)), Q(late_by=timedelta(0)),
                     description="true: only timers that fired after they were owed; false: "
                                 "only timers that fired on time."),
        queries.world_filter(),
    )

    def scoped(self) -> QuerySet:
        return Timer.objects.filter(brand__in=brands(self.request)).order_by(
            "owed", "place", "owner_opened", "key", "id")


class TimerDetail(APIView):
    """A timer, and why it has or has not fired."""

    @extend_schema(responses=TimerDetailRead)
    def get(self, request, timer_id: str):
        rows = Timer.objects.select_related("brand", "test_clock")
        return Response(TimerDetailRead(kept(request, rows, timer_id, "timer")).data)


# -- records -----------------------------------------------------------------------------------


class RecordRead(serializers.ModelSerializer):
    class Meta:
        model = Record
        fields = ["id", "kind", "instant", "brand", "test_clock", "subject", "job", "timer",
                  "data"]


class Records(Listing):
    """What happened at the brands you keep, oldest first."""

    serializer_class = RecordRead
    filters = (
        queries.brand_filter(),
        queries.text("kind", "kind", max_length=64, description="Only records of this kind "
                                                                "(e.g. job.step)."),
        queries.public_id("subject", "subject", "sbj", description="Only this subject's."),
        queries.public_id("job", "job", "job", description="Only this job's."),
        queries.public_id("timer", "timer", "tmr", description="Only this timer's."),
        queries.instant("from", "instant__gte", description="Only records at or after this "
                                                            "instant"),
        queries.instant("to", "instant__lt", description="Only records before this instant"),
        queries.world_filter(),
    )

    def scoped(self) -> QuerySet:
        return Record.objects.filter(brand__in=brands(self.request)).order_by("instant", "id")
