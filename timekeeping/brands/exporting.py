"""A brand's whole data written as one JSON file (`layout`), a row at a time: its people's
accounts (never their passwords), its calendar, the brand, every row of its models, and the
rows of its manifest tables and of its rehearsals' tables."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from django.contrib.auth import get_user_model

from calendars.models import Calendar, Postponement
from timekeeping.basics import wallclock
from timekeeping.brands import contents
from timekeeping.brands.layout import Writer
from timekeeping.models import Brand, Connection, Rehearsal
from timekeeping.moves.rehearse import venue_of
from timekeeping.moves.rows import Venue

CHUNK = 2000
# A person's account as an export carries it: no password, no staff or superuser rights.
PERSON = ("id", "username", "email", "first_name", "last_name", "is_active", "date_joined")


def _values(queryset, names: list[str]) -> Iterator[dict]:
    for values in queryset.order_by("pk").values_list(*names).iterator(chunk_size=CHUNK):
        yield dict(zip(names, values, strict=True))


def _columns(model) -> list[str]:
    return [field.attname for field in model._meta.concrete_fields]


def write(brand: Brand, out: IO[str]) -> Writer:
    """Write the brand's data to `out` (text). Returns the writer, which counted what it
    wrote."""
    writer = Writer(_header(brand))
    for piece in pieces(brand, writer):
        out.write(piece)
    return writer


def _header(brand: Brand) -> dict:
    return {"brand": brand.pk, "slug": brand.slug, "name": brand.name,
            "exported": wallclock.wall_now()}


def pieces(brand: Brand, writer: Writer | None = None) -> Iterator[str]:
    """The export's text, a piece at a time (a streamed download)."""
    writer = writer or Writer(_header(brand))
    yield writer.start()
    people = get_user_model().objects.filter(pk__in=contents.people_of(brand.pk))
    yield from writer.section("auth.user", _values(people, list(PERSON)))
    calendars = Calendar.objects.filter(pk=brand.calendar_id)
    yield from writer.section("calendars.calendar", _values(calendars, _columns(Calendar)))
    yield from writer.section(
        "calendars.postponement", _values(Postponement.objects.filter(
            calendar_id=brand.calendar_id), _columns(Postponement)))
    yield from writer.section("timekeeping.brand", (
        row | {"lease_holder": "", "lease_until": None}
        for row in _values(Brand.objects.filter(pk=brand.pk), _columns(Brand))))
    for model in contents.ordered():
        yield from writer.section(contents.label(model),
                                  _values(contents.rows_of(model, brand.pk), _columns(model)))
    for venue, world in _venues(brand):
        for name in [*venue.tables, *venue.retired]:
            model = venue.model(name)
            yield from writer.section(
                "table", _values(model.objects.using(venue.link.database), _columns(model)),
                table=name, world=world)
    yield writer.end()


def _venues(brand: Brand) -> Iterator[tuple[Venue, str | None]]:
    link = Connection.objects.select_related("brand").filter(brand_id=brand.pk).first()
    if link is None:
        return
    yield Venue.of(link), None
    for rehearsal in Rehearsal.objects.select_related("connection__brand").filter(
            brand_id=brand.pk).order_by("pk"):
        yield venue_of(rehearsal), rehearsal.test_clock_id
