"""Timers over the API: the timers of the brands you keep, one with why it stands as it does,
and a parked one retried now or given up (issue 31, docs/api.md).
"""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Q, QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping.api import queries
from timekeeping.api.access import brands, kept, who
from timekeeping.api.queries import Listing
from timekeeping.basics import wallclock
from timekeeping.models import Timer
from timekeeping.timers import arming, parking


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
                  "payload", "armed_at", "armed_by", "ended_by", "attempts", "failed_with",
                  "next_attempt", "parked"]

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


class Parked(APIView):
    """A parked timer (failed too many times in a row): what `act` does to it."""

    act = staticmethod(parking.retry_now)

    @extend_schema(request=None, responses={200: TimerDetailRead, 409: dict})
    def post(self, request, timer_id: str):
        rows = Timer.objects.select_related("brand", "test_clock")
        timer = kept(request, rows, timer_id, "timer")
        now = wallclock.now(brand=timer.brand, test_clock=timer.test_clock)
        try:
            done = self.act(timer.pk, by=who(request), now=now)
        except parking.NotParked:
            return Response({"timer": ["it is not parked: only a parked timer is retried or "
                                       "given up"]}, status=status.HTTP_409_CONFLICT)
        return Response(TimerDetailRead(done).data)


class TimerRetry(Parked):
    """Retry a parked timer now: armed again, the next tick of its clock fires it."""

    act = staticmethod(parking.retry_now)


class TimerGiveUp(Parked):
    """Give up on a parked timer: it ends (cancelled), its work not done, on the record."""

    act = staticmethod(parking.give_up)
