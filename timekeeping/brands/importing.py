"""An export loaded back (`load`): the brand, its people and every row as they were, under
the same ids, so its timers, records and links mean what they meant. The brand must not be
here already. Its people's accounts are found by sign-in name (the same email) or made
without a password (they set one with "Forgot your password?").

A load is whole or absent: the rows go in in one transaction; its manifest tables are then
made and filled, and if that fails the brand is removed again (`removing.remove`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.color import no_style
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connections, transaction
from django.db.models import AutoField, BigAutoField

from calendars.models import Calendar, Postponement
from timekeeping.brands import contents, removing
from timekeeping.brands.layout import Reader, Section
from timekeeping.models import Brand, Connection, Rehearsal
from timekeeping.moves import tables
from timekeeping.moves.rehearse import venue_of
from timekeeping.moves.rows import Venue

BATCH = 1000
LEASES = {"lease_holder": "", "lease_until": None}


class ImportRefused(Exception):
    """Why the file was not loaded; nothing of it was kept."""


@dataclass
class Loaded:
    brand: Brand
    rows: int = 0
    table_rows: int = 0
    people_made: list[str] = field(default_factory=list)
    people_found: list[str] = field(default_factory=list)


def load(lines: IO[str]) -> Loaded:
    reader = Reader(lines)
    brand_id = reader.header.get("brand")
    if not isinstance(brand_id, str) or not brand_id:
        raise ImportRefused("the export names no brand")
    if Brand.objects.filter(pk=brand_id).exists():
        raise ImportRefused(f"the brand {brand_id} is here already: an export is loaded only "
                            f"where its brand is not")
    sections = reader.sections()
    with transaction.atomic():
        loaded, pending = _rows(brand_id, sections)
    try:
        loaded.table_rows = _tables(loaded.brand, pending, sections)
    except Exception:
        removing.remove(Brand.objects.get(pk=brand_id))
        raise
    return loaded


def _rows(brand_id: str, sections: Iterator[Section]) -> tuple[Loaded, Section | None]:
    people: dict[int, int] = {}
    loaded = Loaded(Brand(pk=brand_id))
    written: list = []
    pending = None
    for section in sections:
        if section.name == "table":
            pending = section
            break
        if section.name == "auth.user":
            people, loaded.people_made, loaded.people_found = _people(section.rows)
            continue
        model = _model(section.name)
        count = _write(model, section.rows, brand_id, people)
        written.append(model)
        if model is Brand and count != 1:
            raise ImportRefused("the export holds no brand row")
        loaded.rows += count
    if not Brand.objects.filter(pk=brand_id).exists():
        raise ImportRefused("the export holds no brand row")
    loaded.brand = Brand.objects.get(pk=brand_id)
    _reset_sequences(written)
    return loaded, pending


def _model(name: str):
    allowed = {contents.label(model): model for model in contents.ordered()}
    allowed |= {"timekeeping.brand": Brand, "calendars.calendar": Calendar,
                "calendars.postponement": Postponement}
    if name not in allowed:
        raise ImportRefused(f"the export has a section {name!r}, which this product does not "
                            f"load")
    return allowed[name]


def _people(rows: Iterator[dict]) -> tuple[dict[int, int], list[str], list[str]]:
    """Each exported account's id here: found by sign-in name with the same email, or made
    with no usable password. A sign-in name held here by someone else refuses the load."""
    user = get_user_model()
    ids, made, found = {}, [], []
    for row in rows:
        username, email = str(row.get("username", "")), str(row.get("email", ""))
        here = user.objects.filter(username=username).first()
        if here is not None and here.email.casefold() != email.casefold():
            raise ImportRefused(f"the sign-in name {username!r} belongs to someone else here "
                                f"(another email); nothing was loaded")
        if here is None:
            here = user(username=username, email=email,
                        first_name=str(row.get("first_name", "")),
                        last_name=str(row.get("last_name", "")),
                        is_active=bool(row.get("is_active", True)))
            if row.get("date_joined"):
                here.date_joined = _value(user, user._meta.get_field("date_joined"),
                                          row["date_joined"])
            here.set_unusable_password()
            here.save()
            made.append(username)
        else:
            found.append(username)
        ids[row.get("id")] = here.pk
    return ids, made, found


def _write(model, rows: Iterator[dict], brand_id: str, people: dict[int, int]) -> int:
    fields = {field.attname: field for field in model._meta.concrete_fields}
    user = get_user_model()
    shared = model in (Calendar, Postponement)
    count, batch = 0, []
    for row in rows:
        unknown = set(row) - set(fields)
        if unknown:
            raise ImportRefused(f"{contents.label(model)}: no column {sorted(unknown)[0]!r}")
        values = {}
        for name, value in row.items():
            column = fields[name]
            if column.is_relation and column.related_model is user:
                values[name] = None if value is None else people.get(value)
            elif value is None:
                values[name] = None
            else:
                values[name] = _value(model, column, value)
        if "brand_id" in fields and values.get("brand_id") != brand_id or (
                model is Brand and values.get("id") != brand_id):
            raise ImportRefused(f"{contents.label(model)}: a row of another brand")
        if "lease_holder" in fields:
            values |= LEASES
        if shared and model._default_manager.filter(pk=values.get("id")).exists():
            continue  # a calendar another brand here shares
        batch.append(model(**values))
        count += 1
        if len(batch) >= BATCH:
            _insert(model, batch)
            batch = []
    _insert(model, batch)
    return count


def _value(model, column, value):
    target = column.target_field if column.is_relation else column
    try:
        return target.to_python(value)
    except ValidationError as error:
        raise ImportRefused(f"{contents.label(model)}.{column.attname}: {value!r} "
                            f"({'; '.join(error.messages)})") from None


def _insert(model, batch: list) -> None:
    if not batch:
        return
    try:
        with transaction.atomic():
            model._default_manager.bulk_create(batch)
    except IntegrityError as error:
        raise ImportRefused(f"{contents.label(model)}: a row clashes with one here ({error})"
                            ) from None


def _reset_sequences(written: list, using: str = DEFAULT_DB_ALIAS) -> None:
    """Rows written with their numbers: new rows' numbers come after them."""
    numbered = [model for model in written
                if isinstance(model._meta.pk, AutoField | BigAutoField)]
    connection = connections[using]
    with connection.cursor() as cursor:
        for statement in connection.ops.sequence_reset_sql(no_style(), numbered):
            cursor.execute(statement)


def _tables(brand: Brand, pending: Section | None, sections: Iterator[Section]) -> int:
    """Make the brand's manifest tables and its rehearsals' tables, then fill them."""
    venues = _venues(brand)
    count = 0
    section = pending
    while section is not None:
        venue = venues.get(section.about.get("world"))
        name = section.about.get("table")
        if venue is None or not venue.readable(name):
            raise ImportRefused(f"rows of a table the brand has no longer: {name!r}")
        model = venue.model(name)
        written = _write_rows(model, section.rows, venue.link.database)
        tables_reset(model, venue.link.database)
        count += written
        section = next(sections, None)
    return count


def _venues(brand: Brand) -> dict[str | None, Venue]:
    link = Connection.objects.select_related("brand").filter(brand_id=brand.pk).first()
    if link is None:
        return {}
    if link.database not in connections:
        raise ImportRefused(f"the brand's tables live in the database {link.database!r}, "
                            f"which this installation has not got")
    live = Venue.of(link)
    tables.ensure(link, live.tables)
    tables.ensure(link, live.retired)
    found = {None: live}
    for rehearsal in Rehearsal.objects.select_related("connection__brand").filter(
            brand_id=brand.pk):
        world = venue_of(rehearsal)
        tables.ensure(link, world.tables, world=rehearsal.test_clock_id)
        found[rehearsal.test_clock_id] = world
    return found


def _write_rows(model, rows: Iterator[dict], database: str) -> int:
    fields = {field.attname: field for field in model._meta.concrete_fields}
    count, batch = 0, []
    for row in rows:
        try:
            values = {name: None if value is None else fields[name].to_python(value)
                      for name, value in row.items()}
        except (KeyError, ValidationError) as error:
            raise ImportRefused(f"a row of {model._meta.db_table}: {error}") from None
        batch.append(model(**values))
        count += 1
        if len(batch) >= BATCH:
            model.objects.using(database).bulk_create(batch)
            batch = []
    if batch:
        model.objects.using(database).bulk_create(batch)
    return count


def tables_reset(model, database: str) -> None:
    _reset_sequences([model], database)
