"""Reads compiled once (issue 32): a hot read's statement, as the ORM writes it, kept for its
shape and sent again with each call's values. Django compiles a query anew each time it runs
it; for a handler's small reads that compiling cost twice the round trip (measured on the
tax practice's `run` rungs: Django's compiling 40% of a step, the database 21%).

    OPEN = compiled.Read(lambda job, brand: Occurrence.objects.filter(
        brand_id=brand, clock__job_id=job, status="open").values_list("id", "due"))
    OPEN(job="job_…", brand="brd_…")            # [(41, date(2027, 4, 15)), …]

The build names its arguments and makes the query from them: a `values_list` (tuples, or
one value a row with `flat=True`), or, given `model=`, rows of that model: its own columns,
its annotations, and the rows its foreign keys named in `related=` point to, as
`select_related` reads them: a path reaches through a row named before it
(`related=("clock", "clock__job")`). To compile it, `Read` passes each argument a
stand-in no caller sends (a text or a whole number) and finds it among the statement's
parameters: its places there are where the caller's value goes. A stand-in the statement
does not carry as given (a lookup that rewrites its value, a pattern) is an error at once,
never a wrong read.

A shape is one statement: an argument that is None (`IS NULL`), and a list's length
(`IN (…)`), make another, so they key it. Each database's is its own. A read keeps at most
`SHAPES` of them; past that it compiles each call, as Django would. Arguments are texts,
whole numbers, aware instants, None, or lists of them. An instant's stand-in is an instant of
the year 1 no caller sends, found among the parameters as the database's operations write it
(on SQLite, a text in UTC), and the caller's instant is written the same way. A boolean or a
date is written into the build, not passed (its stand-in would not survive the field's
conversion), and a naive instant is refused.
A locking read (`select_for_update`) outside a transaction is refused on every database, as
Django refuses it where the database locks (on SQLite too, so a test there finds it).

`prepared=True` asks the database to prepare the statement (`preparing`; PostgreSQL: planned
a few times a connection, then one plan kept; `config/postgresql/base.py`). Only for a read
whose best plan is the same for every value: one found by its primary key, joined through
foreign keys, or by a job's or an owner's id on a table that indexes that id itself (a job's
deadlines, asks and tasks; an owner's timers). The kept plan is made without the values, so it
weighs a brand by the number of brands, not by its rows: a read that asks the brand of a table
it reaches through a join may keep a plan that scans the brand's rows (a job's dates, with the
brand asked of the date, did). `bench/plans.py` prints the plan each keeps and fails on one
that scans a brand's index; such a read asks the brand of the job itself, found by its id, as
a job's dates now do. Any other read keeps being planned for its values.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime, timedelta
from typing import Any

from django.core.exceptions import EmptyResultSet
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Model, QuerySet
from django.db.models.query import FlatValuesListIterable, ModelIterable, ValuesListIterable
from django.db.transaction import TransactionManagementError

SHAPES = 32
_FIRST_NUMBER = -7_340_000_000_000_001  # stand-ins for whole numbers count down from here
_FIRST_INSTANT = datetime(1, 1, 1, 0, 0, 1, 234_567, tzinfo=UTC)  # and instants, a day apart


class Read:
    """A read whose statement is compiled once per shape (module docstring)."""

    def __init__(self, build: Callable[..., QuerySet], *, model: type[Model] | None = None,
                 related: tuple[str, ...] = (), prepared: bool = False):
        self.build = build
        self.model = model
        self.related = related
        self.prepared = prepared
        self.names = list(inspect.signature(build).parameters)
        self.shapes: dict[tuple, _Shape] = {}
        self.lock = threading.Lock()

    def __call__(self, **values: Any) -> list:
        return self.shape(values).run(values)

    def shape(self, values: dict[str, Any]) -> _Shape:
        """The statement these values are sent in (its `sql`, and its parameters for them,
        `params`), compiled the first time its shape is asked for."""
        if set(values) != set(self.names):
            raise TypeError(f"compiled read: give {', '.join(self.names)}")
        key = (connections[DEFAULT_DB_ALIAS].vendor,
               *(_key_of(name, values[name]) for name in self.names))
        shape = self.shapes.get(key)
        if shape is None:
            shape = _Shape(self, values)
            with self.lock:
                if len(self.shapes) < SHAPES:
                    self.shapes[key] = shape
        return shape

    def get(self, **values: Any) -> Model:
        """The one row of a read of a model (`model=`), as `QuerySet.get` gives it: its
        model's DoesNotExist when there is none, MultipleObjectsReturned when more."""
        found = self(**values)
        if len(found) != 1:
            error = (self.model.DoesNotExist if not found
                     else self.model.MultipleObjectsReturned)
            raise error(f"{self.model.__name__}: {len(found)} rows for {values}")
        return found[0]


def reached(*paths: str) -> tuple[str, ...]:
    """`related=` for what `select_related(*paths)` reads: each path with every row it passes
    through named before it (`"job__brand"` → `"job", "job__brand"`)."""
    found: list[str] = []
    for path in paths:
        steps = path.split("__")
        for end in range(1, len(steps) + 1):
            if (through := "__".join(steps[:end])) not in found:
                found.append(through)
    return tuple(found)


def preparing(connection) -> AbstractContextManager:
    """Inside, the statements Django sends on `connection` are prepared, where its database
    prepares them (`config/postgresql/base.py`); elsewhere, nothing changes. Only for a
    statement whose best plan is the same for any values: a read by primary key."""
    return getattr(connection, "preparing", nullcontext)()


def _key_of(name: str, value: Any) -> tuple:
    if value is None:
        return (name, None)
    if isinstance(value, list | tuple):
        kinds = {_kind(name, each) for each in value}
        return (name, "list", len(value), *sorted(kinds))
    return (name, _kind(name, value))


def _kind(name: str, value: Any) -> str:
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise TypeError(f"compiled read: {name} must be an aware instant, not a naive one")
        return "instant"
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise TypeError(f"compiled read: {name} must be a text, a whole number, an instant, "
                        f"None or a list of them, not {type(value).__name__} (write it into "
                        "the build)")
    return "text" if isinstance(value, str) else "number"


class _Shape:
    """One statement of a read: its SQL, where each argument's value goes among its
    parameters, and the compiler that made it (which converts a row as Django would)."""

    def __init__(self, read: Read, values: dict[str, Any]):
        self.read = read
        stand_ins: dict[object, tuple[str, int | None]] = {}
        built = {name: _stand_in(name, values[name], stand_ins) for name in read.names}
        queryset = read.build(**built)
        self.flat, self.fields = _rows_of(queryset, read.model, read.related)
        # A model's own columns alone (a tick's batch): each row made in one loop (`_own`).
        self.own = self.fields is not None and not read.related and self.fields == [
            field.attname for field in read.model._meta.concrete_fields]
        if self.fields is not None:
            queryset = queryset.values_list(*self.fields)
        self.alias = queryset.db
        # An instant's stand-in is found as the database's operations write it (`_written`).
        self.instant = connections[self.alias].ops.adapt_datetimefield_value
        stand_ins.update({self.instant(stand_in): (name, index, True)
                          for stand_in, (name, index, _) in list(stand_ins.items())
                          if isinstance(stand_in, datetime)})
        self.locking = bool(queryset.query.select_for_update)
        self.compiler = queryset.query.get_compiler(using=self.alias)
        try:
            self.sql, params = self.compiler.as_sql()
        except EmptyResultSet:
            self.sql, params = "", ()
        # How each column's value is read (an instant on SQLite, a JSON field), as Django's
        # `results_iter` finds them, once.
        self.converters = self.compiler.get_converters(
            [column[0] for column in self.compiler.select[:self.compiler.col_count]]
        ) if self.sql else {}
        # Each parameter is (an argument, its index in a list or None, whether it is written as
        # an instant, None) where a caller's value goes, or (None, None, False, the constant
        # the build wrote).
        self.slots = [(*stand_ins[param], None) if _hashable(param) and param in stand_ins
                      else (None, None, False, param) for param in params]
        missing = ({(name, index) for name, index, _ in stand_ins.values()}
                   - {(name, index) for name, index, _, _ in self.slots})
        if self.sql and missing:
            raise ValueError(f"compiled read: the statement does not carry "
                             f"{', '.join(sorted(name for name, _ in missing))} as given")

    def params(self, values: dict[str, Any]) -> list:
        """The statement's parameters for a call's values, in their places."""
        return [constant if name is None else _written(
            values[name] if index is None else values[name][index], self.instant if instant
            else None) for name, index, instant, constant in self.slots]

    def run(self, values: dict[str, Any]) -> list:
        if not self.sql:
            return []
        connection = connections[self.alias]
        if self.locking and connection.get_autocommit():
            raise TransactionManagementError(
                "select_for_update cannot be used outside of a transaction.")
        params = self.params(values)
        with preparing(connection) if self.read.prepared else nullcontext(), \
                connection.cursor() as cursor:
            cursor.execute(self.sql, params)
            rows = cursor.fetchall()
        if self.own:
            return self._own(rows)
        converted = (map(tuple, self.compiler.apply_converters(rows, self.converters))
                     if self.converters else rows)
        if self.fields is not None:
            return _models(self.read, self.alias, self.fields, converted)
        return [row[0] for row in converted] if self.flat else list(converted)

    def _own(self, rows: list) -> list[Model]:
        """Each row an instance of the read's model, its values converted as Django's
        `apply_converters` converts them, in one loop: making a tick's batch of a thousand
        timers took 4.7 ms through the generator and the copies between, 3.5 so (issue 32)."""
        model, alias, fields = self.read.model, self.alias, self.fields
        connection = self.compiler.connection
        converting = [(position, converters, expression) for position, (converters, expression)
                      in self.converters.items()]
        made = []
        for row in rows:
            if converting:
                row = list(row)
                for position, converters, expression in converting:
                    value = row[position]
                    for converter in converters:
                        value = converter(value, expression, connection)
                    row[position] = value
            made.append(model.from_db(alias, fields, row))
        return made


def _stand_in(name: str, value: Any, stand_ins: dict) -> Any:
    if value is None:
        return None
    if isinstance(value, list | tuple):
        return [_one(name, index, each, stand_ins) for index, each in enumerate(value)]
    return _one(name, None, value, stand_ins)


def _one(name: str, index: int | None, value: Any, stand_ins: dict) -> str | int | datetime:
    kind = _kind(name, value)
    if kind == "text":
        stand_in: str | int | datetime = f"\u2063compiled:{name}:{index}\u2063"
    elif kind == "instant":
        stand_in = _FIRST_INSTANT + timedelta(days=len(stand_ins))
    else:
        stand_in = _FIRST_NUMBER - len(stand_ins)
    stand_ins[stand_in] = (name, index, False)
    return stand_in


def _written(value: Any, instant: Callable[[datetime], Any] | None) -> Any:
    """A caller's value as its parameter carries it: an instant as the database's operations
    write one (where its stand-in was found so written)."""
    return instant(value) if instant is not None else value


def _hashable(value: Any) -> bool:
    return isinstance(value, str | int | datetime) and not isinstance(value, bool)


def _rows_of(queryset: QuerySet, model: type[Model] | None, related: tuple[str, ...]
             ) -> tuple[bool, list | None]:
    """(flat, the fields a model's rows are read as, or None for a values_list)."""
    iterable = queryset._iterable_class
    if model is None:
        if iterable not in (ValuesListIterable, FlatValuesListIterable):
            raise TypeError("compiled read: build a values_list, or give model=")
        return iterable is FlatValuesListIterable, None
    if iterable is not ModelIterable or queryset.model is not model:
        raise TypeError(f"compiled read: build a query of {model.__name__}")
    if queryset.query.select_related:
        raise TypeError("compiled read: name the related rows it reads (related=), not "
                        "select_related")
    fields = [field.attname for field in model._meta.concrete_fields]
    for name in related:
        fields += [f"{name}__{field.attname}"
                   for field in _related_model(model, name, related)._meta.concrete_fields]
    return False, [*fields, *queryset.query.annotation_select]


def _related_model(model: type[Model], path: str, related: tuple[str, ...]) -> type[Model]:
    """The model a path of `related` reaches: each step a foreign key, the path before the
    last step named before it (it is set on that row)."""
    parent, _, name = path.rpartition("__")
    if parent:
        if parent not in related[:related.index(path)]:
            raise TypeError(f"compiled read: name {parent} before {path} in related=")
        model = _related_model(model, parent, related)
    field = model._meta.get_field(name)
    if not field.many_to_one and not field.one_to_one:
        raise TypeError(f"compiled read: {path} is not a foreign key")
    return field.related_model


def _models(read: Read, alias: str, fields: list[str], rows) -> list[Model]:
    """Each row as an instance of the read's model, its related rows (`related`) in their
    fields' caches, its annotations as attributes: what `select_related` and `annotate` give."""
    model, start = read.model, len(read.model._meta.concrete_fields)
    parts = [(model, "", fields[:start], 0, start)]
    for path in read.related:
        other = _related_model(model, path, read.related)
        end = start + len(other._meta.concrete_fields)
        parts.append((other, path, [field.rsplit("__", 1)[1] for field in fields[start:end]],
                      start, end))
        start = end
    made = []
    for row in rows:
        instance = model.from_db(alias, parts[0][2], row[:parts[0][4]])
        reached = {"": instance}
        for other, path, names, first, end in parts[1:]:
            values = row[first:end]
            parent, _, name = path.rpartition("__")
            found = None if values[0] is None else other.from_db(alias, names, values)
            reached[path] = found
            if reached[parent] is not None:
                setattr(reached[parent], name, found)
        for name, value in zip(fields[start:], row[start:], strict=True):
            setattr(instance, name, value)
        made.append(instance)
    return made
