"""Clocks and their dates over the API: list and read them (with each clock's next open date),
and the actions on a date: acknowledge, mark done, choose, assign, each answered with how to
undo it (docs/api.md). A step proposed on a job answers as a choice does (`StepOut`).
"""

from __future__ import annotations

from django.db.models import Exists, F, OuterRef, QuerySet, Subquery
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping import clocks
from timekeeping.api import queries
from timekeeping.api.access import brands, kept, who
from timekeeping.api.queries import Listing
from timekeeping.clocks import undo
from timekeeping.models import Clock, Member, Occurrence, Record
from timekeeping.web.strict import StrictSerializer


class OccurrenceRead(serializers.ModelSerializer):
    class Meta:
        model = Occurrence
        fields = ["item", "seq", "label", "due", "rule_due", "rolled_from", "roll_reasons",
                  "moved_from", "moved_by", "late_from", "status", "settled", "settled_by",
                  "acknowledged", "assignee"]

    label = serializers.CharField(help_text="How timers and traces name it: clk_…#item@seq.")


class KeptBy(serializers.Serializer):
    keeper = serializers.ChoiceField(
        choices=["job", "steward", "owner"],
        help_text="Who keeps the date: its job while it is open (and always, for a date that "
                  "does not live on the subject); once the job ends, the subject's steward or "
                  "its owner (S16).")
    steward = serializers.CharField(allow_null=True, help_text="The steward job (job_…) "
                                    "keeping it; null unless `keeper` is `steward`.")
    member = serializers.CharField(allow_null=True, help_text="The member (mbr_…) who keeps it "
                                   "for the steward; null: the brand's owner.")


class ClockRead(serializers.ModelSerializer):
    next_due = serializers.DateField(allow_null=True, help_text="The earliest open date.")
    kept_by = serializers.SerializerMethodField()

    class Meta:
        model = Clock
        fields = ["id", "brand", "test_clock", "subject", "job", "name", "title", "owner",
                  "hard", "lives_on_subject", "bundle", "opened", "next_due", "kept_by"]

    @extend_schema_field(KeptBy)
    def get_kept_by(self, row: Clock) -> dict:
        keeper = row.kept_by(getattr(row, "job_state", None) or row.job.state)
        stewarded = keeper == "steward"
        return {"keeper": keeper, "steward": row.steward_id if stewarded else None,
                "member": row.keeper_id if stewarded else None}


class ClockDetailRead(ClockRead):
    occurrences = OccurrenceRead(many=True, help_text="Its dates, soonest first.")

    class Meta(ClockRead.Meta):
        fields = [*ClockRead.Meta.fields, "occurrences"]


def with_next_due(rows: QuerySet) -> QuerySet:
    soonest = Occurrence.objects.filter(clock=OuterRef("pk"), status=Occurrence.Status.OPEN)
    return rows.annotate(next_due=Subquery(soonest.order_by("due").values("due")[:1]),
                         job_state=F("job__state"))  # who keeps it (`kept_by`) reads it


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
        return with_next_due(Clock.objects.filter(brand__in=brands(self.request))).order_by(
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
        rows = with_next_due(Clock.objects.prefetch_related("occurrences"))
        return Response(ClockDetailRead(kept(request, rows, clock_id, "clock")).data)


class StepOut(serializers.Serializer):
    committed = serializers.BooleanField()
    step = serializers.CharField()
    items = serializers.ListField(child=serializers.CharField())
    code = serializers.CharField()
    reason = serializers.CharField()
    satisfied = serializers.ListField(child=serializers.CharField())
    moved = serializers.ListField(child=serializers.CharField())
    said = serializers.CharField(source="describe")


class OccurrenceIn(StrictSerializer):
    item = serializers.CharField(required=False, allow_blank=True, default="", max_length=64)


class ChoiceIn(OccurrenceIn):
    choice = serializers.CharField(max_length=100)


class UndoOfferOut(serializers.Serializer):
    record = serializers.CharField(help_text="The record of the action: POST "
                                   "/api/records/{record}/undo to undo it.")
    until = serializers.DateTimeField(help_text="Until when it can be undone (15 minutes, on "
                                      "the date's own clock).")


class AcknowledgedOut(serializers.Serializer):
    acknowledged = serializers.DateTimeField()
    undo = UndoOfferOut(allow_null=True, help_text="How to undo it; null when it changed "
                        "nothing (acknowledged already).")


class DoneOut(serializers.Serializer):
    status = serializers.CharField()
    settled = serializers.DateTimeField()
    undo = UndoOfferOut(allow_null=True)


class ChosenOut(StepOut):
    undo = UndoOfferOut(allow_null=True, help_text="How to undo it; null when the step was "
                        "refused (nothing changed).")


def _undo(entry) -> dict | None:
    offered = undo.offer(entry)
    return UndoOfferOut(offered).data if offered else None


def _occurrence(request, clock_id: str, serializer) -> tuple[Occurrence, dict]:
    row = kept(request, Clock.objects.all(), clock_id, "clock")
    given = serializer(data=request.data)
    given.is_valid(raise_exception=True)
    item = given.validated_data["item"]
    found = Occurrence.objects.filter(clock=row, item=item).order_by("-seq").select_related(
        "clock", "clock__job", "clock__subject").first()
    if found is None:
        raise ValidationError({"item": [f"clock {clock_id} has no item {item!r}"]})
    return found, given.validated_data


class ClockAcknowledge(APIView):
    @extend_schema(request=OccurrenceIn, responses=AcknowledgedOut)
    def post(self, request, clock_id: str):
        occurrence, _ = _occurrence(request, clock_id, OccurrenceIn)
        entry = clocks.acknowledge(occurrence, by=who(request))
        return Response({**AcknowledgedOut(occurrence).data, "undo": _undo(entry)})


class ClockDone(APIView):
    @extend_schema(request=OccurrenceIn, responses={200: DoneOut, 409: dict})
    def post(self, request, clock_id: str):
        occurrence, _ = _occurrence(request, clock_id, OccurrenceIn)
        try:
            entry = clocks.mark_done(occurrence, by=who(request))
        except clocks.OrderRefused as refused:
            return Response({refused.field: [refused.message]}, status=status.HTTP_409_CONFLICT)
        return Response({**DoneOut(occurrence).data, "undo": _undo(entry)})


class ClockChoose(APIView):
    @extend_schema(request=ChoiceIn, responses={200: ChosenOut, 409: ChosenOut})
    def post(self, request, clock_id: str):
        occurrence, given = _occurrence(request, clock_id, ChoiceIn)
        try:
            outcome = clocks.choose(occurrence, given["choice"], by=who(request))
        except clocks.OrderRefused as refused:
            raise ValidationError({refused.field: [refused.message]}) from None
        entry = Record.objects.filter(pk=outcome.record).first() if outcome.committed else None
        return Response({**StepOut(outcome).data, "undo": _undo(entry)},
                        status=status.HTTP_200_OK if outcome.committed else
                        status.HTTP_409_CONFLICT)


class AssignIn(OccurrenceIn):
    member = serializers.CharField(max_length=48, allow_blank=True,
                                   help_text="The member's id (mbr_…): one of the people of "
                                             "the clock's brand; empty: nobody.")


class AssignedOut(serializers.Serializer):
    assignee = serializers.CharField(source="assignee_id", allow_null=True)
    undo = UndoOfferOut(allow_null=True, help_text="How to undo it; null when it changed "
                        "nothing (assigned so already).")


class ClockAssign(APIView):
    @extend_schema(request=AssignIn, responses=AssignedOut)
    def post(self, request, clock_id: str):
        occurrence, given = _occurrence(request, clock_id, AssignIn)
        member = Member.objects.select_related("user").filter(
            pk=given["member"], brand_id=occurrence.clock.brand_id).first()
        if member is None and given["member"]:
            raise ValidationError({"member": [f"no member {given['member']!r} of the clock's "
                                              "brand"]})
        entry = None
        if occurrence.assignee_id != (member.pk if member else None):  # else: as it is already
            entry = clocks.assign(occurrence, member, by=who(request))
        return Response({**AssignedOut(occurrence).data, "undo": _undo(entry)})
