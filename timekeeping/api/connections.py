"""A brand's connection over the API: where its tables live and how its timed moves fare, and
parked timed moves retried now or given up (issue 31, docs/api.md).
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping.api.access import kept_brand, who
from timekeeping.basics import wallclock
from timekeeping.models import Brand, Connection
from timekeeping.moves import parking


class ConnectionRead(serializers.ModelSerializer):
    failed_with = serializers.SerializerMethodField()

    class Meta:
        model = Connection
        fields = ["id", "brand", "database", "zone", "paused", "last_run", "attempts",
                  "failed_with", "next_attempt", "parked"]

    def get_failed_with(self, link: Connection) -> str:
        """The last line of its last failed minute's error; empty when none failed since the
        last that worked."""
        return parking.failed_with(link)


def connection_of(brand: Brand) -> Connection:
    link = Connection.objects.filter(brand=brand).select_related("brand").first()
    if link is None:
        raise NotFound("connection: the brand has no tables, so no connection")
    return link


class BrandConnection(APIView):
    @extend_schema(responses=ConnectionRead, summary="The brand's connection and how its "
                                                     "timed moves fare")
    def get(self, request, brand_id: str):
        return Response(ConnectionRead(connection_of(kept_brand(request, brand_id))).data)


class Parked(APIView):
    """A brand's parked timed moves (its connection's minute failed too many times in a
    row): what `act` does to them."""

    act = staticmethod(parking.retry_now)

    @extend_schema(request=None, responses={200: ConnectionRead, 409: dict})
    def post(self, request, brand_id: str):
        link = connection_of(kept_brand(request, brand_id))
        now = wallclock.now(brand=link.brand)
        try:
            done = self.act(link.pk, by=who(request), now=now)
        except parking.NotParked:
            return Response({"connection": ["its timed moves are not parked: only parked "
                                            "timed moves are retried or given up"]},
                            status=status.HTTP_409_CONFLICT)
        return Response(ConnectionRead(done).data)


class ConnectionRetry(Parked):
    """Retry parked timed moves now: the next tick runs the connection's minute."""

    act = staticmethod(parking.retry_now)


class ConnectionGiveUp(Parked):
    """Give up on parked timed moves: the connection is paused until someone resumes it."""

    act = staticmethod(parking.give_up)
