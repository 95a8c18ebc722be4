"""Reading what an owner operates: test clocks, postponements, manifests, and schedules with
their runs (docs/api.md). Lists are scoped, filtered and paginated as
`timekeeping.api.queries` says; another brand's thing answers 404 exactly as a missing one.
"""

from __future__ import annotations

import dataclasses

from django.db.models import Q, QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from calendars.models import Postponement
from timekeeping.api import queries, services
from timekeeping.api import test_clocks as test_clocks_api
from timekeeping.api.access import brands, kept_brand
from timekeeping.api.queries import Listing
from timekeeping.basics import wallclock
from timekeeping.models import Manifest, Schedule, ScheduleRun, TestClock
from timekeeping.schedules import operate

# -- test clocks -------------------------------------------------------------------------------


@extend_schema_view(get=extend_schema(
    description="The test clocks of the brands you keep, by name."))
class TestClocks(Listing, test_clocks_api.TestClockList):
    # POST (make a test clock) is api.test_clocks.TestClockList's, unchanged; GET lists.
    serializer_class = test_clocks_api.TestClockOut
    filters = (
        queries.brand_filter(),
        queries.one_of("status", "status", TestClock.Status.values,
                       description="Only test clocks in this status."),
    )

    def scoped(self) -> QuerySet:
        return TestClock.objects.filter(brand__in=brands(self.request)).order_by("name", "id")


# -- postponements -----------------------------------------------------------------------------


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
class Postponements(Listing, services.Postponements):
    # POST (add a postponement) is services.Postponements's, unchanged; GET lists.
    serializer_class = PostponementRead
    filters = (dataclasses.replace(queries.brand_filter(), apply=_of_brand),)

    def scoped(self) -> QuerySet:
        kept = brands(self.request)
        calendars = kept.exclude(calendar=None).values("calendar_id")
        worlds = TestClock.objects.filter(brand__in=kept).values("pk")
        return Postponement.objects.filter(calendar__in=calendars).filter(
            Q(test_clock="") | Q(test_clock__in=worlds)).order_by("from_date", "id")


# -- manifests ---------------------------------------------------------------------------------


class ManifestVersionRead(serializers.ModelSerializer):
    class Meta:
        model = Manifest
        fields = ["id", "version", "bundle", "created"]


class ManifestDocumentRead(ManifestVersionRead):
    class Meta(ManifestVersionRead.Meta):
        fields = [*ManifestVersionRead.Meta.fields, "document"]


@extend_schema_view(get=extend_schema(
    description="The brand's manifest versions, the latest first (without their documents)."))
class Manifests(Listing, services.ManifestList):
    # POST (load a manifest) is services.ManifestList's, unchanged; GET lists.
    serializer_class = ManifestVersionRead

    def scoped(self) -> QuerySet:
        brand = kept_brand(self.request, self.kwargs["brand_id"])
        return Manifest.objects.filter(brand=brand).order_by("-version")


class ManifestDetail(APIView):
    """One version of the brand's manifest, with its document."""

    @extend_schema(responses=ManifestDocumentRead)
    def get(self, request, brand_id: str, version: int):
        brand = kept_brand(request, brand_id)
        found = Manifest.objects.filter(brand=brand, version=version).first()
        if found is None:
            raise NotFound(f"manifest: the brand has no version {version}")
        return Response(ManifestDocumentRead(found).data)


# -- schedules ---------------------------------------------------------------------------------


class ScheduleRead(serializers.ModelSerializer):
    # Ids, not relations: brands may live in another database (SCHEDULES_STORE, J6).
    brand = serializers.CharField(source="brand_id", allow_null=True,
                                  help_text="null: a schedule of the code, not of a brand.")
    test_clock = serializers.CharField(source="test_clock_id", allow_null=True)

    class Meta:
        model = Schedule
        fields = ["id", "name", "brand", "test_clock", "action", "every_s", "at", "declared_in",
                  "active", "paused", "run_requested", "next_due", "last_tick", "created"]


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

