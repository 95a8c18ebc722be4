"""A brand's events over the API (issue 30, docs/events.md): the records that are events
(`webhooks.catalogue`), each in the envelope its webhook carries, so a receiver that was down
can catch up.

Pages follow an opaque cursor on (written, id), the order of the index `record_brand_written`:
a page is one indexed range read, however deep, and paging neither repeats nor skips an event,
even among events written in the same instant (one transaction writes many at once). A page
costs one query beside the caller's and the brand's, and one more when a test clock is named.

Everyone who keeps the brand reads its events (a key too); another brand's answer 404.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlencode

from django.db import connection
from django.db.models import CharField, F, Func, Q, QuerySet, Value
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from timekeeping.api import queries
from timekeeping.api.access import kept_brand
from timekeeping.basics import instants
from timekeeping.models import Brand, Record, TestClock
from timekeeping.webhooks import catalogue

DEFAULT_LIMIT, MOST = 50, 200
TYPES_MOST = 64  # `type` given at most this often
CURSOR_LONGEST = 200
EVENT_TYPES = [*catalogue.NAMES, catalogue.TEST_TYPE]  # the schema's EventTypeEnum
NAMES = ("type", "from", "to", "subject", "test_clock", "limit", "order", "cursor")
SUBJECT = re.compile(r"sbj_[0-9A-Za-z]{1,40}")
TEST_CLOCK = re.compile(r"tc_[0-9A-Za-z]{1,40}")
EVENT = re.compile(r"rec_[0-9A-Za-z]{1,40}")
SQLITE_WRITTEN = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}")


@dataclass(frozen=True)
class Asked:
    """A request's parameters, read and checked."""

    types: tuple[str, ...]
    since: datetime | None
    until: datetime | None
    subject: str | None
    test_clock: str | None
    limit: int
    descending: bool
    after: tuple[object, str] | None  # the last event of the page before: (written, id)


def written_key():
    """`written` as the pages compare it. SQLite keeps the database's own `Now()` with three
    digits of a second and Python's instants with six (or none), and compares them as text;
    one form for both keeps the order true there. PostgreSQL compares the column itself, as
    the index holds it."""
    if connection.vendor == "sqlite":
        return Func(Value("%Y-%m-%d %H:%M:%f"), F("written"), function="STRFTIME",
                    output_field=CharField())
    return F("written")


def key_of(instant: datetime) -> object:
    """An instant in the form `written_key` compares."""
    if connection.vendor == "sqlite":
        utc = instant.astimezone(UTC)
        return f"{utc:%Y-%m-%d %H:%M:%S}.{utc.microsecond // 1000:03d}"
    return instant


def cursor_of(record: Record, descending: bool) -> str:
    written = record.written_key
    text = written if isinstance(written, str) else written.isoformat()
    raw = json.dumps({"w": text, "i": record.pk, "o": "desc" if descending else "asc"})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def read_cursor(text: str) -> tuple[tuple[object, str], bool]:
    """The (written, id) a cursor continues after, and its order; ValueError when it is not
    one this API gave out."""
    try:
        given = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        written, event, order = given["w"], given["i"], given["o"]
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeDecodeError):
        raise ValueError("not a cursor this list gave out") from None
    if not (isinstance(written, str) and isinstance(event, str) and EVENT.fullmatch(event)
            and order in ("asc", "desc")):
        raise ValueError("not a cursor this list gave out")
    if connection.vendor == "sqlite":
        if not SQLITE_WRITTEN.fullmatch(written):
            raise ValueError("not a cursor this list gave out")
        return (written, event), order == "desc"
    try:
        instant = datetime.fromisoformat(written)
    except ValueError:
        raise ValueError("not a cursor this list gave out") from None
    if instant.tzinfo is None:
        raise ValueError("not a cursor this list gave out")
    return (instant, event), order == "desc"


def _one(request, name: str, problems: dict) -> str | None:
    given = request.query_params.getlist(name)
    if len(given) > 1:
        problems[name] = ["given more than once"]
        return None
    return given[0] if given and given[0] else None


def _types(request, problems: dict) -> tuple[str, ...]:
    given = [each for each in request.query_params.getlist("type") if each]
    if len(given) > TYPES_MOST:
        problems["type"] = [f"given more than {TYPES_MOST} times"]
        return ()
    unknown = [each for each in given if each not in catalogue.BY_NAME]
    if unknown:
        problems["type"] = [f"{unknown[0][:64]!r} is not an event type; the types are: "
                            f"{', '.join(catalogue.NAMES)}"]
    return tuple(dict.fromkeys(given))


def _checked(text: str | None, name: str, problems: dict, check):
    if text is None:
        return None
    try:
        return check(text)
    except ValueError as error:
        problems[name] = [str(error).removeprefix(f"{name}: ")]
        return None


def _pattern(pattern: re.Pattern, what: str):
    def check(text: str) -> str:
        if not pattern.fullmatch(text):
            raise ValueError(f"{text[:64]!r} is not an id of the form {what}")
        return text

    return check


def _limit(text: str) -> int:
    if not queries.WHOLE.fullmatch(text) or not 1 <= int(text) <= MOST:
        raise ValueError(f"{text[:40]!r} is not a whole number from 1 to {MOST}")
    return int(text)


def _order(text: str) -> bool:
    if text not in ("asc", "desc"):
        raise ValueError(f"{text[:40]!r} is not asc or desc")
    return text == "desc"


def asked(request) -> Asked:
    """Every parameter read and checked; every problem at once, as a 400 naming each."""
    problems: dict[str, list[str]] = {}
    for name in request.query_params:
        if name not in NAMES and name != "format":
            problems[name[:64]] = [f"'{name[:64]}' is not a parameter here; the parameters "
                                   f"are: {', '.join(NAMES)}"]
    values = {name: _checked(_one(request, name, problems), name, problems, check)
              for name, check in (
                  ("from", lambda text: instants.parse_instant(text, field="from")),
                  ("to", lambda text: instants.parse_instant(text, field="to")),
                  ("subject", _pattern(SUBJECT, "sbj_…")),
                  ("test_clock", _pattern(TEST_CLOCK, "tc_…")),
                  ("limit", _limit), ("order", _order))}
    cursor = _checked(_one(request, "cursor", problems), "cursor", problems, _cursor)
    if cursor is not None and values["order"] is not None and cursor[1] != values["order"]:
        problems["cursor"] = ["it continues a list in the other order; leave out `order`"]
    found = Asked(types=_types(request, problems), since=values["from"], until=values["to"],
                  subject=values["subject"], test_clock=values["test_clock"],
                  limit=values["limit"] or DEFAULT_LIMIT,
                  descending=cursor[1] if cursor else bool(values["order"]),
                  after=cursor[0] if cursor else None)
    if problems:
        raise ValidationError(problems)
    return found


def _cursor(text: str):
    if len(text) > CURSOR_LONGEST:
        raise ValueError("not a cursor this list gave out")
    return read_cursor(text)


def page_of(brand: Brand, given: Asked) -> list[Record]:
    """One page of the brand's events, and the first of the next when there is one."""
    rows: QuerySet = Record.objects.filter(
        brand=brand, kind__in=catalogue.kinds_of(given.types)).annotate(
        written_key=written_key())
    rows = rows.filter(test_clock_id=given.test_clock) if given.test_clock else rows.filter(
        test_clock__isnull=True)
    if given.subject:
        rows = rows.filter(subject=given.subject)
    if given.since:
        rows = rows.filter(written_key__gte=key_of(given.since))
    if given.until:
        rows = rows.filter(written_key__lt=key_of(given.until))
    if given.after:
        written, event = given.after
        beyond = "lt" if given.descending else "gt"
        rows = rows.filter(Q(**{f"written_key__{beyond}": written})
                           | Q(written_key=written, **{f"id__{beyond}": event}))
    order = ("-written_key", "-id") if given.descending else ("written_key", "id")
    return list(rows.order_by(*order)[:given.limit + 1])


class EventOut(serializers.Serializer):
    """An event: the body of its webhook, and its item here (docs/events.md)."""

    id = serializers.CharField(help_text="The event's id (rec_…), sent as `webhook-id`.")
    type = serializers.ChoiceField(choices=EVENT_TYPES)
    version = serializers.IntegerField(help_text="The shape's version: fields may be added "
                                                 "within it, none renamed or removed.")
    created = serializers.DateTimeField(help_text="When the event was written.")
    occurs_at = serializers.DateTimeField(
        help_text="The moment it is about, on the clock it happened on (a test clock's own "
                  "time for its events).")
    brand = serializers.CharField()
    test_clock = serializers.CharField(allow_null=True,
                                       help_text="The test clock whose world it is, or null.")
    subject = serializers.CharField(allow_null=True, help_text="The subject it is about.")
    objects = serializers.DictField(child=serializers.CharField(),
                                    help_text="What it is about, by id: job, timer, clock, …")
    summary = serializers.CharField(help_text="What happened, in a sentence.")
    link = serializers.URLField(help_text="The console page that shows it.")
    data = serializers.DictField(help_text="What the record says: `kind`, the record kind, "
                                           "and the fields of that kind.")


class EventPageOut(serializers.Serializer):
    results = EventOut(many=True)
    next = serializers.URLField(allow_null=True, help_text="The next page; null at the end.")
    next_cursor = serializers.CharField(allow_null=True,
                                        help_text="The cursor of the next page, or null.")


def _parameter(name: str, kind, description: str, **more) -> OpenApiParameter:
    return OpenApiParameter(name, kind, OpenApiParameter.QUERY, description=description,
                            **more)


PARAMETERS = [
    _parameter("type", OpenApiTypes.STR, f"Only events of this type; give it again for more "
               f"(at most {TYPES_MOST}). By default every type.", many=True,
               enum=list(catalogue.NAMES)),
    _parameter("from", OpenApiTypes.DATETIME, "Only events written at or after this instant "
               f"(ISO 8601 with an offset or Z, within {instants.SPAN})."),
    _parameter("to", OpenApiTypes.DATETIME, "Only events written before this instant."),
    _parameter("subject", OpenApiTypes.STR, "Only this subject's (sbj_…).",
               pattern=f"^{SUBJECT.pattern}$"),
    _parameter("test_clock", OpenApiTypes.STR, "Only this test clock's events (tc_…); "
               "without it, only the real clock's.", pattern=f"^{TEST_CLOCK.pattern}$"),
    _parameter("limit", {"type": "integer", "minimum": 1, "maximum": MOST},
               f"How many, 1 to {MOST} (default {DEFAULT_LIMIT})."),
    _parameter("order", OpenApiTypes.STR, "`asc` (oldest first, the default) or `desc`.",
               enum=["asc", "desc"]),
    _parameter("cursor", OpenApiTypes.STR, "Where the page before ended: its `next_cursor`.",
               pattern=f"^[A-Za-z0-9_-]{{1,{CURSOR_LONGEST}}}$"),
]


class Events(APIView):
    @extend_schema(operation_id="events_list", parameters=PARAMETERS, responses=EventPageOut,
                   description="The brand's events, oldest first, by cursor.")
    def get(self, request, brand_id: str):
        brand = kept_brand(request, brand_id)
        given = asked(request)
        if given.test_clock and not TestClock.objects.filter(
                brand=brand, pk=given.test_clock).exists():
            raise ValidationError({"test_clock": [f"no test clock {given.test_clock!r} of "
                                                  "the brand"]})
        found = page_of(brand, given)
        more, page = len(found) > given.limit, found[:given.limit]
        cursor = cursor_of(page[-1], given.descending) if more else None
        return Response({"results": [catalogue.event(record) for record in page],
                         "next": _next(request, cursor), "next_cursor": cursor})


def _next(request, cursor: str | None) -> str | None:
    if cursor is None:
        return None
    kept = [(name, value) for name, values in request.query_params.lists()
            for value in values if name not in ("cursor", "order")]
    return request.build_absolute_uri(f"{request.path}?{urlencode([*kept, ('cursor', cursor)])}")
