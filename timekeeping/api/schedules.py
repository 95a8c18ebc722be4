"""Schedules over the API, with their runs (docs/api.md), and a parked schedule retried now or
given up (issue 31). Lists are scoped, filtered and paginated as `timekeeping.api.queries`
says; another brand's schedule answers 404 exactly as a missing one.
"""

from __future__ import annotations

from django.db.models import Q, QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping.api import queries
from timekeeping.api.access import brands, may_write, who
from timekeeping.api.queries import Listing
from timekeeping.basics import wallclock
from timekeeping.models import Schedule, ScheduleRun, TestClock
from timekeeping.schedules import operate, parking


class ScheduleRead(serializers.ModelSerializer):
    # Ids, not relations: brands may live in another database (SCHEDULES_STORE, J6).
    brand = serializers.CharField(source="brand_id", allow_null=True,
                                  help_text="null: a schedule of the code, not of a brand.")
    test_clock = serializers.CharField(source="test_clock_id", allow_null=True)
    failed_with = serializers.SerializerMethodField()

    class Meta:
        model = Schedule
        fields = ["id", "name", "brand", "test_clock", "action", "every_s", "at", "declared_in",
                  "active", "paused", "run_requested", "next_due", "last_tick", "created",
                  "attempts", "failed_with", "parked"]

    def get_failed_with(self, row: Schedule) -> str:
        """The last line of its last failed run's error; empty when none failed since the
        last that worked."""
        return parking.failed_with(row)


class ScheduleDetailRead(ScheduleRead):
    why = serializers.SerializerMethodField()

    class Meta(ScheduleRead.Meta):
        fields = [*ScheduleRead.Meta.fields, "why"]

    def get_why(self, row: Schedule) -> str:
        """When it runs next and what it last missed, in words (`manage.py schedules why`)."""
        return operate.why(row, now=_now_of(row))


class ScheduleRunRead(serializers.ModelSerializer):
    schedule = serializers.CharField(source="schedule_id")

    class Meta:
        model = ScheduleRun
        fields = ["id", "schedule", "due", "tick", "started", "finished", "outcome", "reason",
                  "items", "by_hand"]


def _now_of(row: Schedule):
    """Now on the schedule's clock: its test clock's time, else the real time."""
    if row.test_clock_id:
        world = TestClock.objects.filter(pk=row.test_clock_id).first()
        if world is not None:
            return wallclock.now(test_clock=world)
    return wallclock.wall_now()


def visible_schedules(request) -> QuerySet:
    """The schedules of the brands the caller keeps; a superuser's also the code's own."""
    if request.user.is_superuser:
        return Schedule.objects.all()
    # Brands may live in another database than schedules (SCHEDULES_STORE, J6): their ids
    # first, never a join or a subquery across the two.
    return Schedule.objects.filter(
        brand_id__in=list(brands(request).values_list("pk", flat=True)))


def kept_schedule(request, schedule_id: str) -> Schedule:
    found = visible_schedules(request).filter(pk=schedule_id).first()
    if found is None:
        raise NotFound(f"schedule: no schedule {schedule_id!r} that you keep")
    return found


class Schedules(Listing):
    """The schedules of the brands you keep (a superuser's also the code's own), by name."""

    serializer_class = ScheduleRead
    filters = (
        queries.brand_filter(),
        queries.flag("active", Q(active=True), Q(active=False),
                     description="true: only schedules still declared; false: only those "
                                 "no longer declared."),
    )

    def scoped(self) -> QuerySet:
        return visible_schedules(self.request).order_by("name", "id")


class ScheduleDetail(APIView):
    """A schedule, and when it runs next, in words."""

    @extend_schema(responses=ScheduleDetailRead)
    def get(self, request, schedule_id: str):
        return Response(ScheduleDetailRead(kept_schedule(request, schedule_id)).data)


class ScheduleRuns(Listing):
    """A schedule's runs, skips and failures, the latest first."""

    serializer_class = ScheduleRunRead
    filters = (
        queries.one_of("outcome", "outcome", ScheduleRun.Outcome.values,
                       description="Only runs with this outcome."),
    )

    def scoped(self) -> QuerySet:
        row = kept_schedule(self.request, self.kwargs["schedule_id"])
        return ScheduleRun.objects.filter(schedule=row).order_by("-tick", "id")


class Parked(APIView):
    """A parked schedule (its runs failed too many times in a row): what `act` does to it."""

    act = staticmethod(parking.retry_now)

    @extend_schema(request=None, responses={200: ScheduleDetailRead, 409: dict})
    def post(self, request, schedule_id: str):
        row = kept_schedule(request, schedule_id)
        if row.brand_id is not None:  # the product's own: a superuser's, who keeps them all
            may_write(request, row.brand)
        try:
            done = self.act(row.pk, by=who(request), now=wallclock.wall_now())
        except parking.NotParked:
            return Response({"schedule": ["it is not parked: only a parked schedule is "
                                          "retried or given up"]},
                            status=status.HTTP_409_CONFLICT)
        return Response(ScheduleDetailRead(done).data)


class ScheduleRetry(Parked):
    """Retry a parked schedule now: it runs once at the next tick, and its grid goes on."""

    act = staticmethod(parking.retry_now)


class ScheduleGiveUp(Parked):
    """Give up on a parked schedule: it is paused (its failures forgotten) until someone
    resumes it."""

    act = staticmethod(parking.give_up)
