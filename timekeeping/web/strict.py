"""Strict input for the API (docs/security.md): what a request may carry, checked before any
view reads it. Bad input answers 400 naming the field and the rule, and changes nothing.

- a body is one JSON object, at most 2 MiB, nested at most 32 deep, with no NUL character and
  no lone surrogate (`"\ud800"`, which no UTF-8 holds) in any key or text: PostgreSQL keeps
  neither; and no number too large for a float (`1e400`), which JSON cannot write back: each
  refusal names the field it found;
- an input serializer accepts its declared fields only: an unknown field is named;
- paths and query strings carry no NUL; ids, table names and link codes in paths match their
  patterns, so anything else is simply not found.
"""

from __future__ import annotations

import json
import math

from django.http import JsonResponse
from django.shortcuts import render
from django.urls import register_converter
from rest_framework import serializers
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser

from timekeeping.specs.limits import BODY_MAX as MAX_BODY

MAX_DEPTH = 32


class BodyTooLarge(APIException):
    status_code = 413
    default_detail = f"the body is larger than {MAX_BODY // (1024 * 1024)} MiB"
    default_code = "body_too_large"


class StrictJSONParser(JSONParser):
    """A JSON object and nothing else (see the module's docstring)."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read(MAX_BODY + 1) if stream is not None else b""
        if len(raw) > MAX_BODY:
            raise BodyTooLarge()
        try:
            value = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
        except (ValueError, UnicodeDecodeError) as error:
            raise ParseError(f"the body is not JSON: {error}") from None
        except RecursionError:
            raise ParseError(f"the body nests deeper than {MAX_DEPTH} levels") from None
        if not isinstance(value, dict):
            raise ParseError({"body": ["the body is a JSON object of fields"]})
        problem = _walk(value)
        if problem is not None:
            raise ParseError({problem[0]: [problem[1]]})
        return value


MAX_DIGITS = 30  # an integer longer is no quantity this product keeps


def json_text(text: str) -> object:
    """JSON typed into a page's form field, read as strictly as an API body: its value, or
    ValueError saying in words what is wrong (not JSON, nested too deep, an integer too long,
    a number too large, a NUL character or a lone surrogate, naming the place)."""
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_int=_bounded_int)
    except json.JSONDecodeError as error:
        raise ValueError(f"not JSON: {error.msg} at line {error.lineno}, column "
                         f"{error.colno}") from None
    except ValueError as error:  # NaN, Infinity, an integer too long (the hooks' words)
        raise ValueError(str(error)) from None
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
    problem = _walk(value)
    if problem is not None:
        place, rule = problem
        raise ValueError(rule if place == "body" else f"{place}: {rule}")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"an integer may have at most {MAX_DIGITS} digits; one has more than "
                         f"{MAX_DIGITS}")
    return int(text)


def _no_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def _walk(value) -> tuple[str, str] | None:
    """The first place too deep, holding a NUL character or a number too large, or None:
    iteratively, so no document can exhaust the stack."""
    stack = [("", value, 1)]
    while stack:
        path, item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return path or "body", f"nested deeper than {MAX_DEPTH} levels"
        if isinstance(item, str) and (problem := _unkept(item)):
            return path or "body", f"text may not hold {problem}"
        if isinstance(item, float) and math.isinf(item):
            # 1e400 reads as infinity, which JSON cannot write back nor a database keep.
            return path or "body", "the number is too large (at most about 1.8e308)"
        if isinstance(item, dict):
            for key, child in item.items():
                if problem := _unkept(key):
                    return path or "body", f"a key may not hold {problem}"
                stack.append((f"{path}.{key}" if path else key, child, depth + 1))
        elif isinstance(item, list):
            stack.extend((f"{path}[{n}]", child, depth + 1) for n, child in enumerate(item))
    return None


def _unkept(text: str) -> str:
    """What in `text` no database keeps, in words, or empty."""
    if "\x00" in text:
        return "a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "a lone surrogate (half of a UTF-16 pair)"
    return ""


class StrictSerializer(serializers.Serializer):
    """An input serializer that names any field it does not declare."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            known = {field.field_name for field in self.fields.values() if not field.read_only}
            unknown = sorted(key for key in data if key not in known)
            if unknown:
                fields = ", ".join(sorted(known)) or "none"
                raise serializers.ValidationError(
                    {key: [f"'{key}' is not a field here; the fields are: {fields}"]
                     for key in unknown})
        return super().to_internal_value(data)


class RefuseNul:
    """Middleware: a path or query string holding a NUL character answers 400 at once, and so
    does a form (a page's post) holding one in any field's name or value, naming the field:
    PostgreSQL cannot compare or keep such text, so a view reading it would fail. A form
    cannot carry a lone surrogate: its bytes that are no UTF-8 read as "\ufffd"."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        query = request.META.get("QUERY_STRING", "")
        if "\x00" in request.path or "%00" in query or "\x00" in query:
            return JsonResponse({"detail": "the address holds a NUL character"}, status=400)
        if request.method == "POST" and (field := _nul_field(request)) is not None:
            return render(request, "400.html", {"field": field, "rule": NUL_IN_WORDS},
                          status=400)
        return self.get_response(request)


NUL_IN_WORDS = "a NUL character (an invisible control character)"


def _nul_field(request) -> str | None:
    """The first form field whose name or value holds a NUL character, or None. A JSON body
    is not read here (its parser refuses NUL, naming the place)."""
    if request.content_type not in ("application/x-www-form-urlencoded", "multipart/form-data"):
        return None
    for name, values in request.POST.lists():
        if "\x00" in name or any("\x00" in value for value in values):
            return name.replace("\x00", "\\0")[:64]
    return None


class _Pattern:
    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class PublicIdConverter(_Pattern):
    regex = r"[a-z]{1,8}_[0-9A-Za-z]{1,40}"


class TableNameConverter(_Pattern):
    regex = r"[a-z][a-z0-9_]{0,40}"


class LinkCodeConverter(_Pattern):
    regex = r"[0-9A-Za-z]{1,64}"


class TokenConverter(_Pattern):
    """A link's secret key (a party's link): URL-safe base64 of 16 to 64 characters."""

    regex = r"[0-9A-Za-z_-]{16,64}"


class RowIdConverter(_Pattern):
    regex = r"[0-9]{1,18}"  # fits a 64-bit key

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


def register_converters() -> None:
    """The path converters every door's URLs use (called by `apps.ready`, before any URLconf
    is read)."""
    register_converter(PublicIdConverter, "pid")
    register_converter(RowIdConverter, "rowid")
    register_converter(TableNameConverter, "table")
    register_converter(LinkCodeConverter, "code")
    register_converter(TokenConverter, "token")
