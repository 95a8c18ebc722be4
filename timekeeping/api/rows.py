"""Rows of a brand's manifest tables over the API (SPEC A1, A7, A10).

Every change is audited (who, when, before, after). A refused move answers 409 with its code
and details: STATE_MOVE_REFUSED (details.requires, bound, at, reason), WRITE_CONFLICT.

A table the brand's current manifest removed is retired: its rows stay readable (the list
says `retired: true`), and a write or move answers 409 TABLE_RETIRED.
"""

from django.core.exceptions import ValidationError as ModelValidationError
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, NotFound, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping.api.access import brand_for, who
from timekeeping.basics import wallclock
from timekeeping.models import Connection
from timekeeping.moves import rows
from timekeeping.moves.rows import MoveRefused, Venue
from timekeeping.moves.values import ValuesInvalid
from timekeeping.web.strict import StrictSerializer


class TableRetired(APIException):
    status_code = status.HTTP_409_CONFLICT

    def __init__(self, table: str):
        super().__init__({"code": "TABLE_RETIRED", "message": (
            f"table {table!r} was removed from the brand's manifest: its rows are kept and "
            "readable, and no longer written or moved"), "details": {"table": table}})


def _venue(request, table: str, *, writing: bool = True) -> Venue:
    try:
        brand = brand_for(request, request.query_params.get("brand"))
    except ValidationError:
        raise NotFound("table: no such table in a brand you keep") from None
    link = Connection.objects.filter(brand=brand).select_related("brand").first()
    venue = Venue.of(link) if link else None
    if venue is None or venue.readable(table) is None:
        raise NotFound(f"table: no table {table!r} in the brand's manifest")
    if writing and table in venue.retired:
        raise TableRetired(table)
    return venue


def _row(venue: Venue, table: str, pk: int):
    found = venue.model(table).objects.using(venue.link.database).filter(pk=pk).first()
    if found is None:
        raise NotFound(f"row: no row {pk} in {table}")
    return found


def _refused(refused: MoveRefused) -> Response:
    return Response({"code": refused.code, "message": refused.message,
                     "details": refused.details}, status=status.HTTP_409_CONFLICT)


def _who(request) -> str:
    return who(request)


class PublicMoveIn(StrictSerializer):
    """A guest's move: where to."""

    to = serializers.CharField(max_length=64)


class MoveIn(PublicMoveIn):
    """A move: where to, and `from`, the state the person saw, which an undo needs (A1)."""

    def get_fields(self) -> dict:
        fields = super().get_fields()
        # `from` is a Python keyword, so it cannot be declared as a class attribute.
        fields["from"] = serializers.CharField(
            required=False, max_length=64, help_text="The state you saw the row in. An undo "
            "needs it; any move naming it is refused once the row has left it.")
        return fields


class RowsOut(serializers.Serializer):
    rows = serializers.ListField(child=serializers.DictField(), help_text="At most 100, by key.")
    retired = serializers.BooleanField(help_text="The brand's current manifest removed the "
                                       "table: its rows are kept, read-only.")


STATE_PARAM = OpenApiParameter("state", str, description="Only rows in this state.")
BRAND_PARAM = OpenApiParameter("brand", str, description="The brand (brd_…), when you keep "
                                                         "several.")


class RowList(APIView):
    @extend_schema(operation_id="rows_list", parameters=[BRAND_PARAM, STATE_PARAM],
                   responses=RowsOut)
    def get(self, request, table: str):
        venue = _venue(request, table, writing=False)
        found = venue.model(table).objects.using(venue.link.database).order_by("pk")
        spec = venue.readable(table)
        state = request.query_params.get("state", "")
        if spec.states and state:
            found = found.filter(**{spec.states.column: state[:64]})
        return Response({"rows": [rows.as_dict(row) for row in found[:100]],
                         "retired": table in venue.retired})

    @extend_schema(operation_id="rows_create", parameters=[BRAND_PARAM], request=dict,
                   responses={201: dict, 400: dict, 409: dict})
    def post(self, request, table: str):
        venue = _venue(request, table)
        try:
            row = rows.create(venue, table, request.data, who=_who(request),
                              at=wallclock.wall_now())
        except ValuesInvalid as invalid:
            raise ValidationError(invalid.errors) from None
        except ModelValidationError as error:
            raise ValidationError(error.message_dict) from None
        except MoveRefused as refused:
            return _refused(refused)
        return Response(rows.as_dict(row), status=status.HTTP_201_CREATED)


class RowDetail(APIView):
    @extend_schema(operation_id="rows_read", parameters=[BRAND_PARAM], responses=dict)
    def get(self, request, table: str, pk: int):
        venue = _venue(request, table, writing=False)
        return Response(rows.as_dict(_row(venue, table, pk)))

    @extend_schema(operation_id="rows_update", parameters=[BRAND_PARAM], request=dict,
                   responses={200: dict, 400: dict, 409: dict})
    def patch(self, request, table: str, pk: int):
        venue = _venue(request, table)
        _row(venue, table, pk)
        try:
            row = rows.update(venue, table, pk, request.data, who=_who(request),
                              at=wallclock.wall_now())
        except MoveRefused as refused:
            return _refused(refused)
        except ValuesInvalid as invalid:
            raise ValidationError(invalid.errors) from None
        except ModelValidationError as error:
            raise ValidationError(error.message_dict) from None
        return Response(rows.as_dict(row))


class RowMove(APIView):
    @extend_schema(operation_id="rows_move", request=MoveIn, responses={200: dict, 409: dict})
    def post(self, request, table: str, pk: int):
        venue = _venue(request, table)
        _row(venue, table, pk)
        given = MoveIn(data=request.data)
        given.is_valid(raise_exception=True)
        try:  # a row another writer holds is refused by the move itself: WRITE_CONFLICT
            row = rows.move(venue, table, pk, given.validated_data["to"], who=_who(request),
                            at=wallclock.wall_now(), seen=given.validated_data.get("from"))
        except MoveRefused as refused:
            return _refused(refused)
        return Response(rows.as_dict(row))


class PublicRowMove(APIView):
    """The public API: a guest moves a row it holds the link code of (a column with a `code`
    rule). No sign-in: the code is the key, and a wrong code answers 404. Refusals are
    PUBLIC_TOO_EARLY (details.from, details.at) and PUBLIC_TOO_LATE (details.at); a guest never
    undoes (STATE_MOVE_REFUSED, details.reason undo-by-staff-only), and a row another writer
    holds answers WRITE_CONFLICT, as for staff."""

    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(operation_id="public_rows_move", request=PublicMoveIn,
                   responses={200: dict, 409: dict})
    def post(self, request, brand_id: str, table: str, code: str):
        link = Connection.objects.filter(brand_id=brand_id).select_related("brand").first()
        venue = Venue.of(link) if link else None
        column = _code_column(venue, table) if venue and table in venue.tables else None
        found = venue.model(table).objects.using(venue.link.database).filter(
            **{column: code}).first() if column and code else None
        if found is None:
            raise NotFound("no such link")
        given = PublicMoveIn(data=request.data)
        given.is_valid(raise_exception=True)
        try:  # no `seen`: a guest never undoes; a busy row is WRITE_CONFLICT from the move
            row = rows.move(venue, table, found.pk, given.validated_data["to"],
                            who=f"guest with the link of {table} #{found.pk}",
                            at=wallclock.wall_now(), audience="public")
        except MoveRefused as refused:
            return _refused(refused)
        return Response({"id": row.pk, "status": getattr(row, venue.tables[table].states.column)})


def _code_column(venue: Venue, table: str) -> str | None:
    for column in venue.raw_table(table).get("columns", []):
        if "code" in (column.get("rules") or {}):
            return column["ref"]
    return None
