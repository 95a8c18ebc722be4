"""Rehearsals over the API (issue 29): a brand's rows on one of its test clocks.

    POST   /api/test_clocks/{id}/rows    copy chosen live rows there, or add new ones
    GET    /api/test_clocks/{id}/rows    how many rows each table of the rehearsal holds
    DELETE /api/test_clocks/{id}/rows    end the rehearsal: its rows and their audit
    GET    /api/test_clocks/{id}/moves   what moved there, when and why

The test clock's advances (`/advance`) move the rows. Every query is scoped to the brands the
caller keeps: another brand's test clock answers 404; a viewer reads, and changes nothing
(403). The views call `moves.rehearse`, as the console does.
"""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping.api.access import who
from timekeeping.api.test_clocks import InstantField, kept_clock
from timekeeping.moves import moved, rehearse
from timekeeping.web.strict import StrictSerializer

NAME_LONGEST = 41  # a table's or a column's name (docs/timed-moves.md, names and limits)


class RowsIn(StrictSerializer):
    table = serializers.CharField(max_length=NAME_LONGEST,
                                  help_text="A table of the brand with timed moves.")
    ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=rehearse.LARGEST_ID),
        required=False, min_length=1,
        max_length=rehearse.MOST_ROWS,
        help_text=f"Copy these live rows, by their numbers (at most {rehearse.MOST_ROWS:,}, "
                  "with the rows linked to them).")
    start = InstantField(required=False, help_text="Copy the live rows whose `column` falls "
                                                   "from here…")
    end = InstantField(required=False, help_text="…to before here.")
    column = serializers.CharField(
        required=False, max_length=NAME_LONGEST,
        help_text="The date or timestamptz column the window reads; by default the moment "
                  "column of the table's first timed move.")
    rows = serializers.ListField(
        child=serializers.DictField(), required=False, min_length=1,
        max_length=rehearse.MOST_ROWS,
        help_text='New rows, instead of copies; a value {"@in": "PT2H"} is the test clock\'s '
                  "time plus two hours.")


class RehearsalRowsOut(serializers.Serializer):
    table = serializers.CharField()
    copied = serializers.ListField(child=serializers.IntegerField(),
                                   help_text="The live rows copied, by their numbers.")
    linked = serializers.IntegerField(help_text="Rows linked to them, copied with them.")
    kept = serializers.ListField(child=serializers.IntegerField(),
                                 help_text="Rows already there, left as they are.")
    added = serializers.ListField(child=serializers.IntegerField(),
                                  help_text="The new rows' numbers.")


class HeldOut(serializers.Serializer):
    tables = serializers.DictField(child=serializers.IntegerField(),
                                   help_text="Rows held, per table; empty before the first.")


class RemovedOut(serializers.Serializer):
    removed = serializers.IntegerField(help_text="Rows the rehearsal held.")


class MovedOut(serializers.Serializer):
    at = InstantField(help_text="The test clock's time of the move.")
    table = serializers.CharField()
    row = serializers.IntegerField()
    kind = serializers.CharField(help_text="timed move, or effect (a linked row)")
    from_state = serializers.CharField()
    to = serializers.CharField()
    said = serializers.CharField(help_text="What moved, when and why, in words.")


class MovesOut(serializers.Serializer):
    moves = MovedOut(many=True)


class RehearsalRows(APIView):
    @extend_schema(request=RowsIn, responses={201: RehearsalRowsOut})
    def post(self, request, clock_id: str):
        """Put rows on the test clock: copies of chosen live rows (`ids`, or a window
        `start`–`end`), or new rows (`rows`). Live rows are only read. A refusal names its
        field, and nothing is changed."""
        test_clock = kept_clock(request, clock_id)
        given = RowsIn(data=request.data)
        given.is_valid(raise_exception=True)
        data = given.validated_data
        try:
            if "rows" in data:
                if {"ids", "start", "end", "column"} & set(data):
                    raise rehearse.RehearsalRefused("rows", "new rows or copies, not both")
                added = rehearse.add(test_clock, data["table"], data["rows"], who=who(request))
                done = {"table": data["table"], "copied": [], "linked": 0, "kept": [],
                        "added": added}
            else:
                copied = rehearse.copy(test_clock, data["table"], ids=data.get("ids"),
                                       start=data.get("start"), end=data.get("end"),
                                       column=data.get("column"), who=who(request))
                done = {"table": copied.table, "copied": copied.copied,
                        "linked": copied.linked, "kept": copied.kept, "added": []}
        except rehearse.RehearsalRefused as refused:
            return Response({refused.field: [refused.message]},
                            status=status.HTTP_400_BAD_REQUEST)
        return Response(RehearsalRowsOut(done).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses=HeldOut)
    def get(self, request, clock_id: str):
        test_clock = kept_clock(request, clock_id)
        return Response({"tables": rehearse.rows_held(test_clock)})

    @extend_schema(responses=RemovedOut)
    def delete(self, request, clock_id: str):
        """End the rehearsal: its rows, their audit and the rows it set aside are deleted.
        The test clock stays."""
        test_clock = kept_clock(request, clock_id)
        return Response({"removed": rehearse.remove(test_clock)})


class RehearsalMoves(APIView):
    @extend_schema(responses=MovesOut)
    def get(self, request, clock_id: str):
        """What moved on the test clock, oldest first (the latest 500): each timed move with
        its reason, and each linked row an effect moved."""
        test_clock = kept_clock(request, clock_id)
        rehearsal = rehearse.of(test_clock)
        found = moved.lines(test_clock, rehearse.venue_of(rehearsal)) if rehearsal else []
        return Response(MovesOut({"moves": found}).data)
