"""A manifest's tables as real SQL tables (DESIGN decision 8).

Each table becomes a Django model built at run time in a registry of its own, so the ORM
reads, writes, converts and locks its rows on PostgreSQL and SQLite alike. `ensure` creates
missing tables and columns (never drops one: nothing a user wrote is lost), with an index on
(state, moment column) for each timed move: the job's prefilter asks that index.
"""

from __future__ import annotations

import hashlib
import re

from django.apps.registry import Apps
from django.db import connections, models

from timekeeping.models import Brand, Connection
from timekeeping.moves.spec import Column, Table

_registry = Apps()  # dynamic models never join the project's app registry


def db_table(brand: Brand, table: str) -> str:
    key = re.sub(r"[^a-z0-9]", "", brand.slug.lower())[:20] or "b"
    return f"tm_{key}_{table}"


def _field(column: Column) -> models.Field:
    null = column.nullable
    if column.type == "text":
        if column.max_length:
            return models.CharField(max_length=column.max_length, null=null, blank=null)
        return models.TextField(null=null, blank=null)
    return {
        "integer": lambda: models.BigIntegerField(null=null, blank=null),
        "boolean": lambda: models.BooleanField(null=null, blank=True,
                                               default=None if null else False),
        "date": lambda: models.DateField(null=null, blank=null),
        "timestamptz": lambda: models.DateTimeField(null=null, blank=null),
        "enum": lambda: models.CharField(max_length=64, null=null, blank=null),
    }[column.type]()


_models: dict[tuple[str, str, str], type[models.Model]] = {}


def model_for(brand: Brand, table: Table) -> type[models.Model]:
    """The model of a table, one class per table definition (a changed manifest, a new one)."""
    key = (brand.pk, db_table(brand, table.name), repr(table))
    if key not in _models:
        _models[key] = _model(brand.pk, key[1], table)
    return _models[key]


def forget() -> None:
    """Drop the built classes (after tables were dropped, as the tests do)."""
    _models.clear()
    _registry.all_models.clear()
    _registry.clear_cache()


def _model(brand_pk: str, name: str, table: Table) -> type[models.Model]:
    indexes = []
    if table.states:
        state = table.states.column
        for rule in table.states.timed:
            column = rule.at.get("column")
            if column in table.columns:
                digest = hashlib.sha1(f"{name}:{state}:{column}".encode()).hexdigest()[:8]
                indexes.append(models.Index(fields=[state, column], name=f"tm_{digest}_due"))
    fields = {}
    for column in table.columns.values():
        fields[column.ref] = (models.CharField(max_length=64, db_index=not table.states.timed)
                              if table.states and column.ref == table.states.column
                              else _field(column))
    meta = type("Meta", (), {"app_label": "timedmoves", "db_table": name, "apps": _registry,
                             "indexes": list({i.name: i for i in indexes}.values())})
    digest = hashlib.sha1(f"{brand_pk}:{table!r}".encode()).hexdigest()[:12]
    attrs = {"__module__": "timekeeping.moves.dynamic", "Meta": meta, **fields}
    return type(f"T{digest}{name.title().replace('_', '')}", (models.Model,), attrs)


def ensure(link: Connection, tables: dict[str, Table]) -> list[str]:
    """Create what is missing; say what was done."""
    done = []
    connection = connections[link.database]
    existing = set(connection.introspection.table_names())
    for table in tables.values():
        model = model_for(link.brand, table)
        with connection.schema_editor() as editor:
            if model._meta.db_table not in existing:
                editor.create_model(model)
                done.append(f"created {model._meta.db_table}")
                continue
            done += _add_missing(connection, editor, model)
    return done


def _add_missing(connection, editor, model) -> list[str]:
    done = []
    table = model._meta.db_table
    with connection.cursor() as cursor:
        have = {col.name for col in connection.introspection.get_table_description(cursor,
                                                                                    table)}
        constraints = connection.introspection.get_constraints(cursor, table)
    for field in model._meta.local_fields:
        if field.column not in have:
            field.null = True  # rows already there have no value for it
            editor.add_field(model, field)
            done.append(f"added {table}.{field.column}")
    for index in model._meta.indexes:
        if index.name not in constraints:
            editor.add_index(model, index)
            done.append(f"indexed {table} ({', '.join(index.fields)})")
    return done
