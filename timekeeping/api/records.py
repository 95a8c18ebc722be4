"""Records over the API: read the record of the brands you keep, and undo a person's action
on a date within 15 minutes of it (docs/api.md).
"""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping.api import queries
from timekeeping.api.access import brands, kept, who
from timekeeping.api.queries import Listing
from timekeeping.clocks import undo
from timekeeping.models import Record


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


class UndoOut(serializers.Serializer):
    undone = serializers.CharField(help_text="The record undone.")
    record = serializers.CharField(help_text="The undo's own record (`clock.undone`).")


class UndoProblemOut(serializers.Serializer):
    code = serializers.CharField(help_text="undo_expired, undo_already, undo_superseded, "
                                 "undo_set_in_motion or undo_not_undoable")
    message = serializers.CharField()


class RecordUndo(APIView):
    """Undo a person's action on a date (mark done, acknowledge, choose, assign) within 15
    minutes of it, on the date's own clock; the same roles as the action."""

    @extend_schema(request=None, responses={200: UndoOut, 409: UndoProblemOut})
    def post(self, request, record_id: str):
        entry = kept(request, Record.objects.all(), record_id, "record")
        try:
            done = undo.undo(entry.brand, entry.pk, by=who(request))
        except undo.UndoRefused as refused:
            return Response({"code": refused.code, "message": refused.message},
                            status=status.HTTP_409_CONFLICT)
        return Response(UndoOut({"undone": entry.pk, "record": done.pk}).data)
