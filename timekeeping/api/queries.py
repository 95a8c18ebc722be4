"""How the API reads lists: one page shape and one way to filter, for every list (docs/api.md).

- A page is `limit` rows (1 to 200, default 50) from `offset` (0 and up), in a fixed order:
  `{count, next, previous, results}`. A limit or offset that is not a whole number in range
  answers 400 naming it; DRF would quietly put its default in its place.
- A list's filters are query parameters it declares (`Filter`). Each is read and checked
  before any row is: a bad value answers 400 naming the parameter and the rule, and an
  unknown parameter answers 400 naming the ones there are, so a misspelt filter never lists
  everything. An empty value is no filter (an HTML form sends empty fields).
- Every list starts from the caller's brands (`access.brands`); a `brand` filter names one
  the caller keeps, else 400, the same for a brand that does not exist.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db.models import Q, QuerySet
from rest_framework.exceptions import ValidationError
from rest_framework.filters import BaseFilterBackend
from rest_framework.generics import GenericAPIView
from rest_framework.mixins import ListModelMixin
from rest_framework.pagination import LimitOffsetPagination

from timekeeping.api.access import brands
from timekeeping.basics import instants

WHOLE = re.compile(r"[0-9]{1,18}")  # digits only: no sign, no "1_000", fits a 64-bit integer


def _whole(request, name: str, *, default: int, low: int, high: int | None) -> int:
    text = request.query_params.get(name, "")
    if not text:
        return default
    number = int(text) if WHOLE.fullmatch(text) else None
    if number is None or number < low or (high is not None and number > high):
        span = f"from {low} to {high}" if high is not None else f"{low} or more"
        raise ValidationError({name: [f"{text[:40]!r} is not a whole number {span}"]})
    return number


class Page(LimitOffsetPagination):
    """The one pagination of the API's lists (see the module's docstring)."""

    default_limit = 50
    max_limit = 200

    def get_limit(self, request) -> int:
        return _whole(request, self.limit_query_param, default=self.default_limit, low=1,
                      high=self.max_limit)

    def get_offset(self, request) -> int:
        return _whole(request, self.offset_query_param, default=0, low=0, high=None)

    def get_schema_operation_parameters(self, view) -> list[dict]:
        return [
            {"name": self.limit_query_param, "in": "query", "required": False,
             "description": f"How many rows, 1 to {self.max_limit} (default "
                            f"{self.default_limit}).",
             "schema": {"type": "integer", "minimum": 1, "maximum": self.max_limit}},
            {"name": self.offset_query_param, "in": "query", "required": False,
             "description": "How many rows to skip (default 0).",
             "schema": {"type": "integer", "minimum": 0, "maximum": 10**18 - 1}},
        ]


PAGE_PARAMETERS = frozenset({"limit", "offset", "format"})  # format: DRF's own renderer choice


@dataclass(frozen=True)
class Filter:
    """One query parameter of a list: how to read it (a ValueError names the rule), how it
    narrows the rows, and how the schema describes it."""

    name: str
    description: str
    read: Callable[[Any, str], Any]  # (request, text) -> value
    apply: Callable[[QuerySet, Any], QuerySet]
    schema: dict

    def parameter(self) -> dict:
        return {"name": self.name, "in": "query", "required": False,
                "description": self.description, "schema": self.schema}


def _equals(lookup: str) -> Callable[[QuerySet, Any], QuerySet]:
    return lambda rows, value: rows.filter(**{lookup: value})


def _at_most(max_length: int) -> Callable[[Any, str], str]:
    def read(request, given: str) -> str:
        if len(given) > max_length:
            raise ValueError(f"at most {max_length} characters")
        return given

    return read


def text(name: str, lookup: str, *, max_length: int, description: str) -> Filter:
    return Filter(name, description, _at_most(max_length), _equals(lookup),
                  {"type": "string", "maxLength": max_length})


def search(name: str, fields: tuple[str, ...], *, description: str) -> Filter:
    """Rows whose `fields` hold the text, in any case."""

    def apply(rows: QuerySet, value: str) -> QuerySet:
        found = Q()
        for field in fields:
            found |= Q(**{f"{field}__icontains": value})
        return rows.filter(found)

    return Filter(name, description, _at_most(200), apply,
                  {"type": "string", "maxLength": 200})


def one_of(name: str, lookup: str, choices: list[str], *, description: str) -> Filter:
    def read(request, given: str) -> str:
        if given not in choices:
            raise ValueError(f"{given[:64]!r} is not one of: {', '.join(choices)}")
        return given

    return Filter(name, description, read, _equals(lookup),
                  {"type": "string", "enum": list(choices)})


def public_id(name: str, lookup: str, prefix: str, *, description: str) -> Filter:
    pattern = f"{prefix}_[0-9A-Za-z]{{1,40}}"

    def read(request, given: str) -> str:
        if not re.fullmatch(pattern, given):
            raise ValueError(f"{given[:64]!r} is not an id of the form {prefix}_…")
        return given

    return Filter(name, description, read, _equals(lookup),
                  {"type": "string", "pattern": f"^{pattern}$"})


def day(name: str, lookup: str, *, description: str) -> Filter:
    def read(request, given: str):
        return instants.parse_date(given, field=name)

    return Filter(name, f"{description} (YYYY-MM-DD, within {instants.SPAN})", read,
                  _equals(lookup), {"type": "string", "format": "date"})


def instant(name: str, lookup: str, *, description: str) -> Filter:
    def read(request, given: str):
        return instants.parse_instant(given, field=name)

    return Filter(name, f"{description} (ISO 8601 with an offset or Z, within "
                        f"{instants.SPAN})", read, _equals(lookup),
                  {"type": "string", "format": "date-time"})


def whole(name: str, lookup: str, *, low: int, high: int, description: str) -> Filter:
    def read(request, given: str) -> int:
        if not WHOLE.fullmatch(given) or not low <= int(given) <= high:
            raise ValueError(f"{given[:40]!r} is not a whole number from {low} to {high}")
        return int(given)

    return Filter(name, description, read, _equals(lookup),
                  {"type": "integer", "minimum": low, "maximum": high})


def flag(name: str, yes: Q, no: Q, *, description: str) -> Filter:
    def read(request, given: str) -> bool:
        if given not in ("true", "false"):
            raise ValueError(f"{given[:40]!r} is not true or false")
        return given == "true"

    return Filter(name, description, read,
                  lambda rows, value: rows.filter(yes if value else no), {"type": "boolean"})


def brand_filter(lookup: str = "brand_id") -> Filter:
    """The brand filter: a brand the caller keeps (else 400, as for one that does not exist)."""
    shape = public_id("brand", lookup, "brd", description="")

    def read(request, given: str) -> str:
        shape.read(request, given)
        if not brands(request).filter(pk=given).exists():
            raise ValueError(f"no brand {given!r} that you keep")
        return given

    return Filter("brand", "Only this brand's (brd_…); by default every brand you keep.",
                  read, _equals(lookup), shape.schema)


def world_filter(lookup: str = "test_clock_id") -> Filter:
    """A test clock's world (tc_…), or `none` for the real clock's only."""
    shape = public_id("test_clock", lookup, "tc", description="")

    def read(request, given: str) -> str | None:
        return None if given == "none" else shape.read(request, given)

    return Filter("test_clock", "Only the world of this test clock (tc_…), or `none` for the "
                                "real clock's; by default both.", read,
                  _equals(lookup), {"type": "string",
                                    "pattern": f"^(none|{shape.schema['pattern'][1:-1]})$"})


def read_query(request, filters: tuple[Filter, ...]) -> dict[str, Any]:
    """Every filter given, read and checked; every problem at once as a 400 naming each."""
    known = {each.name for each in filters}
    problems: dict[str, list[str]] = {}
    for name in request.query_params:
        if name not in known and name not in PAGE_PARAMETERS:
            there = ", ".join(sorted(known | {"limit", "offset"}))
            problems[name[:64]] = [f"'{name[:64]}' is not a filter here; the filters are: "
                                   f"{there}"]
    values = {}
    for each in filters:
        given = request.query_params.getlist(each.name)
        if len(given) > 1:
            problems[each.name] = ["given more than once"]
        elif given and given[0]:
            try:
                values[each.name] = each.read(request, given[0])
            except ValueError as error:
                problems[each.name] = [str(error).removeprefix(f"{each.name}: ")]
    if problems:
        raise ValidationError(problems)
    return values


class QueryFilters(BaseFilterBackend):
    """Applies a list view's `filters` (and describes them in the schema)."""

    def filter_queryset(self, request, queryset, view):
        return view.narrow(queryset, read_query(request, view.filters))

    def get_schema_operation_parameters(self, view) -> list[dict]:
        return [each.parameter() for each in view.filters]


class Listing(ListModelMixin, GenericAPIView):
    """A list of one kind of row, scoped to the caller, filtered and paginated.

    A subclass says `scoped()` (the caller's rows, in a fixed order), its `filters` and its
    `serializer_class`; `narrow` may combine filters that must hold of one related row."""

    pagination_class = Page
    filter_backends = [QueryFilters]
    filters: tuple[Filter, ...] = ()

    def scoped(self) -> QuerySet:
        raise NotImplementedError

    def get_queryset(self) -> QuerySet:
        return self.scoped()

    def narrow(self, rows: QuerySet, given: dict[str, Any]) -> QuerySet:
        for each in self.filters:
            if each.name in given:
                rows = each.apply(rows, given[each.name])
        return rows

    def get(self, request, *args, **kwargs):
        return self.list(request, *args, **kwargs)
