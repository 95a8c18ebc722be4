"""A manifest's tables as real SQL tables (DESIGN decision 8).

Each table becomes a Django model built at run time in a registry of its own, so the ORM
reads, writes, converts and locks its rows on PostgreSQL and SQLite alike. `ensure` creates
missing tables and columns (never drops one: nothing a user wrote is lost), with an index on
(state, moment column) for each timed move: the job's prefilter asks that index.

Names: a table's physical name is `tm_<12 hex digits of the brand id's sha256>_<name>`, at most
57 characters (PostgreSQL keeps 63), so no two brands share a table whatever their names or
slugs. Every identifier that reaches DDL matches a strict pattern here as well as in the
manifest check, and is quoted by the database backend; nothing a manifest wrote becomes SQL
text any other way. `register` records which brand and manifest version made each table.
"""

from __future__ import annotations

import hashlib
import re

from django.apps.registry import Apps
from django.db import DatabaseError, connections, models

from timekeeping.models import Brand, BrandTable, Connection, Manifest
from timekeeping.moves.check_columns import MAX_LENGTH
from timekeeping.specs.rules import VALUE_LENGTH
from timekeeping.specs.tables import Column, Table

_registry = Apps()  # dynamic models never join the project's app registry
IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]{0,62}$")


class UnsafeName(ValueError):
    """A name that does not match the identifier pattern never reaches the database."""


class TableRefused(Exception):
    """The database refused to build a table; nothing of the load is kept."""

    def __init__(self, table: str, error: Exception):
        super().__init__(f"{table}: {error}")
        self.table, self.error = table, error


def safe(name: str) -> str:
    if not isinstance(name, str) or not IDENTIFIER.fullmatch(name):
        raise UnsafeName(f"{name!r} is not a safe SQL identifier (a-z, 0-9, _; at most 63)")
    return name


def db_table(brand: Brand, table: str, world: str | None = None) -> str:
    """The table's physical name; with `world` (a test clock's id), the name of its copy in
    that test clock's rehearsal: the same length, from a digest of the brand and the clock."""
    seed = brand.pk if world is None else f"{brand.pk}/{world}"
    digest = hashlib.sha256(seed.encode()).hexdigest()[:12]
    return safe(f"tm_{digest}_{safe(table)}")


def _field(column: Column) -> models.Field:
    null = column.nullable
    if column.type == "text":
        if column.max_length is not None:
            return models.CharField(max_length=_length(column), null=null, blank=null)
        return models.TextField(null=null, blank=null)
    return {
        "integer": lambda: models.BigIntegerField(null=null, blank=null),
        "boolean": lambda: models.BooleanField(null=null, blank=True,
                                               default=None if null else False),
        "date": lambda: models.DateField(null=null, blank=null),
        "timestamptz": lambda: models.DateTimeField(null=null, blank=null),
        "enum": lambda: models.CharField(max_length=VALUE_LENGTH, null=null, blank=null),
    }[column.type]()


def _length(column: Column) -> int:
    # The backend writes max_length into the column's type (varchar(N)): only a checked
    # integer ever gets there.
    length = column.max_length
    if type(length) is not int or not 1 <= length <= MAX_LENGTH:
        raise UnsafeName(f"{column.ref}: maxLength {length!r} is not a whole number from 1 "
                         f"to {MAX_LENGTH}")
    return length


_models: dict[tuple[str, str, str], type[models.Model]] = {}


def model_for(brand: Brand, table: Table, world: str | None = None) -> type[models.Model]:
    """The model of a table, one class per table definition (a changed manifest, a new one);
    with `world`, of its copy in that test clock's rehearsal."""
    key = (brand.pk, db_table(brand, table.name, world), repr(table))
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
        state = safe(table.states.column)
        for rule in table.states.timed:
            column = rule.at.get("column")
            if column in table.columns:
                digest = hashlib.sha1(f"{name}:{state}:{column}".encode()).hexdigest()[:8]
                indexes.append(models.Index(fields=[state, column], name=f"tm_{digest}_due"))
    fields = {}
    for column in table.columns.values():
        fields[safe(column.ref)] = (models.CharField(max_length=VALUE_LENGTH,
                                                     db_index=not table.states.timed)
                              if table.states and column.ref == table.states.column
                              else _field(column))
    meta = type("Meta", (), {"app_label": "timedmoves", "db_table": name, "apps": _registry,
                             "indexes": list({i.name: i for i in indexes}.values())})
    # The physical name too: a rehearsal's copy of a table is a class of its own.
    digest = hashlib.sha1(f"{brand_pk}:{name}:{table!r}".encode()).hexdigest()[:12]
    attrs = {"__module__": "timekeeping.moves.dynamic", "Meta": meta, **fields}
    return type(f"T{digest}{name.title().replace('_', '')}", (models.Model,), attrs)


def ensure(link: Connection, tables: dict[str, Table], world: str | None = None) -> list[str]:
    """Create what is missing; say what was done. A table the database refuses raises
    TableRefused; the connection is left clean (no transaction left open). With `world`, the
    tables of that test clock's rehearsal."""
    done = []
    connection = connections[link.database]
    existing = set(connection.introspection.table_names())
    # Every name and length is checked before the first statement runs.
    built = {name: model_for(link.brand, table, world) for name, table in tables.items()}
    for table in tables.values():
        model = built[table.name]
        if BrandTable.objects.filter(database=link.database, db_table=model._meta.db_table
                                     ).exclude(brand_id=link.brand_id).exists():
            raise TableRefused(table.name, DatabaseError("another brand's table has this name"))
        try:
            with connection.schema_editor() as editor:
                if model._meta.db_table not in existing:
                    editor.create_model(model)
                    done.append(f"created {model._meta.db_table}")
                else:
                    done += _add_missing(connection, editor, model)
                _run_deferred(editor)
        except DatabaseError as error:
            raise TableRefused(table.name, error) from error
    return done


def _run_deferred(editor) -> None:
    """Run the statements the editor keeps for its exit (indexes, foreign keys) inside the
    block. Django runs them in `__exit__`, where a failure skips closing the editor's atomic
    block and, on SQLite, turning foreign keys back on: the connection would stay inside a
    broken transaction for every later request of the process."""
    while editor.deferred_sql:
        editor.execute(editor.deferred_sql.pop(0), None)


def register(link: Connection, tables: dict[str, Table], manifest: Manifest) -> None:
    """Record which brand and manifest version made each table (the first that made it), and
    the version that declares it now (the last)."""
    for table in tables.values():
        BrandTable.objects.get_or_create(
            brand=link.brand, name=table.name,
            defaults={"connection": link, "database": link.database,
                      "db_table": db_table(link.brand, table.name), "manifest": manifest,
                      "declared_in": manifest})
    BrandTable.objects.filter(brand=link.brand, name__in=list(tables)).update(
        declared_in=manifest)


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


def drop(link: Connection, names: list[str]) -> None:
    """Drop tables a rehearsal made (by their names in the database); one already gone is
    passed over. Never a brand's own tables: only names `ensure` made for a test clock."""
    connection = connections[link.database]
    existing = set(connection.introspection.table_names())
    with connection.cursor() as cursor:
        for name in names:
            if safe(name) in existing:
                cursor.execute(f"DROP TABLE {connection.ops.quote_name(name)}")
