"""Rows of a brand's manifest tables over the API (SPEC A1, A7, A10).

Every change is audited (who, when, before, after). A refused move answers 409 with its code
and details: STATE_MOVE_REFUSED (details.requires, bound, at, reason), WRITE_CONFLICT.
"""

from django.core.exceptions import ValidationError as ModelValidationError
from django.db import OperationalError
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping import clock
from timekeeping.api.access import brand_for
from timekeeping.models import Connection
from timekeeping.moves import rows
from timekeeping.moves.rows import MoveRefused, Venue


def _venue(request, table: str) -> Venue:
    try:
        brand = brand_for(request, request.query_params.get("brand"))
    except ValidationError:
        raise NotFound("table: no such table in a brand you keep") from None
    link = Connection.objects.filter(brand=brand).select_related("brand").first()
    venue = Venue.of(link) if link else None
    if venue is None or table not in venue.tables:
        raise NotFound(f"table: no table {table!r} in the brand's manifest")
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
    return f"user {request.user.pk} ({request.user.get_username()})"


class MoveIn(serializers.Serializer):
    to = serializers.CharField()


class RowList(APIView):
    @extend_schema(operation_id="rows_list", responses={200: dict})
    def get(self, request, table: str):
        venue = _venue(request, table)
        found = venue.model(table).objects.using(venue.link.database).order_by("pk")
        spec = venue.tables[table]
        if spec.states and request.query_params.get("state"):
            found = found.filter(**{spec.states.column: request.query_params["state"]})
        return Response({"rows": [rows.as_dict(row) for row in found[:100]]})

    @extend_schema(operation_id="rows_create", request=dict, responses={201: dict})
    def post(self, request, table: str):
        venue = _venue(request, table)
        try:
            row = rows.create(venue, table, dict(request.data), who=_who(request),
                              at=clock.wall_now())
        except ModelValidationError as error:
            raise ValidationError(error.message_dict) from None
        except TypeError as error:
            raise ValidationError({"row": [str(error)]}) from None
        return Response(rows.as_dict(row), status=status.HTTP_201_CREATED)


class RowDetail(APIView):
    @extend_schema(operation_id="rows_read", responses=dict)
    def get(self, request, table: str, pk: int):
        venue = _venue(request, table)
        return Response(rows.as_dict(_row(venue, table, pk)))

    @extend_schema(operation_id="rows_update", request=dict, responses=dict)
    def patch(self, request, table: str, pk: int):
        venue = _venue(request, table)
        _row(venue, table, pk)
        try:
            row = rows.update(venue, table, pk, dict(request.data), who=_who(request),
                              at=clock.wall_now())
        except MoveRefused as refused:
            return _refused(refused)
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
        try:
            row = rows.move(venue, table, pk, given.validated_data["to"], who=_who(request),
                            at=clock.wall_now())
        except MoveRefused as refused:
            return _refused(refused)
        except OperationalError:
            return _refused(MoveRefused("WRITE_CONFLICT", "another writer holds the row; "
                                        "try again"))
        return Response(rows.as_dict(row))


class PublicRowMove(APIView):
    """The public API: a guest moves a row it holds the link code of (a column with a `code`
    rule). No sign-in: the code is the key, and a wrong code answers 404. Refusals are
    PUBLIC_TOO_EARLY (details.from, details.at) and PUBLIC_TOO_LATE (details.at)."""

    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(operation_id="public_rows_move", request=MoveIn, responses={200: dict,
                                                                              409: dict})
    def post(self, request, brand_id: str, table: str, code: str):
        link = Connection.objects.filter(brand_id=brand_id).select_related("brand").first()
        venue = Venue.of(link) if link else None
        column = _code_column(venue, table) if venue else None
        found = venue.model(table).objects.using(venue.link.database).filter(
            **{column: code}).first() if column and code else None
        if found is None:
            raise NotFound("no such link")
        given = MoveIn(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            row = rows.move(venue, table, found.pk, given.validated_data["to"],
                            who=f"guest with the link of {table} #{found.pk}",
                            at=clock.wall_now(), audience="public")
        except MoveRefused as refused:
            return _refused(refused)
        return Response({"id": row.pk, "status": getattr(row, venue.tables[table].states.column)})


def _code_column(venue: Venue, table: str) -> str | None:
    for column in venue.raw_table(table).get("columns", []):
        if "code" in (column.get("rules") or {}):
            return column["ref"]
    return None
