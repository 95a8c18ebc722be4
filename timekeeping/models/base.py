"""The product's models' base: a row read from the database becomes its model without
Django's `__init__` (issue 32).

Django makes each row read into a model by calling the model with the row's values, which
sends `pre_init` and `post_init` and sets each field through its descriptor: 6.5 ms for a
batch of a thousand timers, against 1.5 ms when the values go straight into the instance's
`__dict__`, which is where those descriptors put them on a new instance. `Model.from_db` does
the second for a whole row (every concrete field, in their order, as a plain read sends them)
of a model whose `__init__` is Django's, while no receiver of either init signal is connected
(for any model). Anything else (a row read with `only` or `defer`, a model with its own
`__init__`, a receiver of either signal) goes through Django's `from_db`, as before.

A row saved with `update_fields` (a date moved, a deadline late, a step done: a handler's
every change) is written by one UPDATE whose text is made once per model and fields, each
value as Django's compiler prepares it (`pre_save`, then `get_db_prep_save`), in place of
Django's `save`, which builds and compiles its UPDATE each time: 300 µs of the client's time
a save against 100, measured on a busy machine. `update_held(row, fields)` is that UPDATE with
its values, not sent: held to ride in a statement after it (`basics.riding`; `saved_riding`
holds it over a block, `saved_later` parks it for the firing batch).
An insert forced (`objects.create`, `save(force_insert=True)`: a job, its ask, its deadline
when one is ordered) is one INSERT of every concrete field made once per model the same way,
when the model's id is given (a public id) and nothing of the row is the database's to make.
It does what Django's does: the related rows checked, the database the router's, an UPDATE
that finds no row refused as Django refuses it, an error marking the transaction for
rollback, the instance's state saved after. Anything else goes through Django's `save`:
positional arguments, no `update_fields` or an empty one and no insert forced, a row not yet
written (Django inserts it), a name no such field has, an expression for a value, a model
with parents or `select_on_save`, a proxy, a field with its own placeholder or a database
default, an id the database makes, a receiver of either save signal.

A new row made in bulk (a job's dozens of timers, its dates) is made by `Model.fresh(**values)`
the same way: each value given, or its field's default, straight into `__dict__`; a related
row given by its field's name sets its id and is kept in the fields' cache, and the
instance's database is the router's for it, as Django's descriptors do. A timer took 33 µs
through Django's `__init__`, 9 µs so. Anything it does not know goes through Django's
`__init__`, which says what is wrong or does what it does: a name that is no field's, a
related row of another model, not yet read or saved, or of another database than the
instance's; a model with its own `__init__`, or a field Django sets otherwise (a generated or
one-to-one one); a receiver of either init signal.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import DatabaseError, connections, models, router, transaction
from django.db.models.base import ModelState
from django.db.models.signals import post_init, post_save, pre_init, pre_save

from timekeeping.basics import riding

# The attribute names of a model's concrete fields, in the order a full row holds them.
_names: dict[type, tuple[str, ...]] = {}
# The fields `save(update_fields=…)` may write, by name and by attribute name; the fields an
# insert forced writes ([] when Django's `save` is to insert); and the statement that writes
# them, by model, their names (or "insert") and the database's vendor.
_updatable: dict[type, dict[str, models.Field]] = {}
_insertable: dict[type, list[models.Field]] = {}
_statements: dict[tuple, str] = {}
# How `fresh` makes a model's new row: each field Django's `__init__` sets, as (its name, its
# attribute's, its related model or None, the field).
_plans: dict[type, tuple[tuple[str, str, type | None, models.Field], ...]] = {}


class Model(models.Model):
    class Meta:
        abstract = True

    @classmethod
    def from_db(cls, db, field_names, values):
        names = _names.get(cls)
        if names is None:
            names = _names[cls] = tuple(field.attname for field in cls._meta.concrete_fields)
        if (len(values) != len(names) or cls.__init__ is not models.Model.__init__
                or pre_init.receivers or post_init.receivers):  # heard, of any model
            return super().from_db(db, field_names, values)
        new = cls.__new__(cls)
        new.__dict__.update(zip(names, values, strict=True))
        state = new._state = ModelState()
        state.adding = False
        state.db = db
        return new

    @classmethod
    def fresh(cls, **values):
        """A new row, as `cls(**values)` makes it, faster (the module's docstring)."""
        plan = _plans.get(cls)
        if plan is None:
            plan = _plans[cls] = tuple(
                (field.name, field.attname, field.related_model if field.many_to_one else None,
                 field) for field in cls._meta.fields
                if field.column is not None and not field.generated
                and (field.many_to_one or not field.is_relation))
        if cls.__init__ is not models.Model.__init__ or pre_init.receivers \
                or post_init.receivers or len(plan) != len(cls._meta.fields):
            return cls(**values)
        new = cls.__new__(cls)
        own, cache, state = new.__dict__, {}, ModelState()
        left = dict(values)
        for name, attname, related, field in plan:
            if related is not None and name in left:
                row = cache[name] = left.pop(name)
                if row is not None:
                    if not isinstance(row, related) or row._state.db is None:
                        return cls(**values)  # Django's error, or its choice of database
                    if state.db is None:
                        state.db = router.db_for_write(cls, instance=row)
                    if state.db != row._state.db:
                        return cls(**values)  # what the router allows across databases
                own[attname] = None if row is None else getattr(row, field.target_field.attname)
            elif attname in left:
                own[attname] = left.pop(attname)
            else:
                own[attname] = field.get_default()
        if left:
            return cls(**values)  # a property's setter, or Django's error
        if cache:
            state.fields_cache = cache
        new._state = state
        return new

    def save(self, *args, **kwargs):
        adding = False
        fields = _fast_update(self, args, kwargs)
        if fields is None:
            adding, fields = True, _fast_insert(self, args, kwargs)
        if fields is None:
            return super().save(*args, **kwargs)
        using, statement, values = _written(self, fields, adding, kwargs.get("using"))
        with transaction.mark_for_rollback_on_error(using=using), \
                connections[using].cursor() as cursor:
            cursor.execute(statement, values)
            if not adding and cursor.rowcount < 1:
                raise DatabaseError(riding.NO_ROW)
        self._state.db = using
        self._state.adding = False
        return None


@contextmanager
def saved_riding(row: Model, update_fields: list[str]) -> Iterator[None]:
    """`row.save(update_fields=…)`, its UPDATE held while the block runs to ride in the
    block's statement that carries one (`basics.riding`); saved at once when Django's own
    save is to write it."""
    update = update_held(row, update_fields)
    if update is None:
        row.save(update_fields=update_fields)
    with riding.held(update):
        yield


def update_held(row: Model, update_fields: list[str]) -> riding.Update | None:
    """`row.save(update_fields=…)` as an update to hold (`basics.riding`): its values taken
    now, as the save would take them; None when Django's own save is to write it (the
    module's docstring), which the caller then calls."""
    fields = _fast_update(row, (), {"update_fields": update_fields})
    if fields is None:
        return None
    using, statement, values = _written(row, fields, False, None)
    return riding.Update(using, type(row)._meta.db_table, statement, values, row.pk)


def saved_later(row: Model, update_fields: list[str]) -> None:
    """`row.save(update_fields=…)`, its UPDATE parked to ride in a later statement of the
    firing batch's (`riding.park`), or sent at the batch's end; saved at once outside one, or
    when Django's own save is to write it."""
    update = update_held(row, update_fields)
    if update is None or not riding.park(update):
        row.save(update_fields=update_fields)


def _written(row: Model, fields: list, adding: bool, using: str | None) -> tuple:
    """The database, the statement and its values of a fast save."""
    row._prepare_related_fields_for_save(operation_name="save")
    using = using or router.db_for_write(type(row), instance=row)
    connection = connections[using]
    values = [field.get_db_prep_save(field.pre_save(row, adding), connection)
              for field in fields]
    if not adding:
        values.append(row._meta.pk.get_db_prep_value(row.pk, connection))
    return using, (_insert_of if adding else _update_of)(type(row), fields, connection), values


def _fast_update(row: Model, args: tuple, kwargs: dict) -> list[models.Field] | None:
    """The fields a `save` writes by `_update_of`, in their model's order; None when Django's
    own `save` is to do it (the module's docstring)."""
    names = kwargs.get("update_fields")
    if args or not names or set(kwargs) - {"update_fields", "using", "force_update"}:
        return None
    cls = type(row)
    meta = cls._meta
    if not _plain(row) or meta.select_on_save or row._state.adding:
        return None
    known = _updatable.get(cls)
    if known is None:
        known = _updatable[cls] = {
            name: field for field in meta.local_concrete_fields
            if not field.primary_key and not field.generated
            and not hasattr(field, "get_placeholder") for name in (field.name, field.attname)}
    wanted = set(names)
    if not wanted <= known.keys():
        return None
    fields = [field for field in meta.local_concrete_fields
              if field.name in wanted or field.attname in wanted]
    return None if _any_expression(row, fields) else fields


def _fast_insert(row: Model, args: tuple, kwargs: dict) -> list[models.Field] | None:
    """The fields an insert forced (`objects.create`, `save(force_insert=True)`) writes by
    `_insert_of`: every concrete field, the id given; None when Django's own `save` is to do
    it (an id or a value the database makes, an expression, a model `_plain` leaves to
    Django)."""
    if args or kwargs.get("force_insert") is not True or set(kwargs) - {"force_insert", "using"}:
        return None
    if not _plain(row):
        return None
    cls = type(row)
    fields = _insertable.get(cls)
    if fields is None:
        fields = _insertable[cls] = _insertable_fields(cls._meta)
    return None if not fields or _any_expression(row, fields) else fields


def _plain(row: Model) -> bool:
    """Whether the row's model is one the fast saves write: no proxy, no parents, one id
    field, the id set, no receiver of either save signal."""
    cls = type(row)
    meta = cls._meta
    return not (meta.proxy or meta.parents or len(meta.pk_fields) != 1 or row.pk is None
                or pre_save.has_listeners(cls) or post_save.has_listeners(cls))


def _insertable_fields(meta) -> list[models.Field]:
    """Every concrete field an insert writes, or [] when the database makes part of a row."""
    fields = [field for field in meta.local_concrete_fields if not field.generated]
    if meta.db_returning_fields or any(field.has_db_default() or hasattr(field, "get_placeholder")
                                       for field in fields):
        return []
    return fields


def _any_expression(row: Model, fields: list[models.Field]) -> bool:
    """Whether a value to write is an expression or a model, which Django's save resolves."""
    for field in fields:
        value = row.__dict__.get(field.attname)
        if hasattr(value, "resolve_expression") or hasattr(value, "prepare_database_save"):
            return True
    return False


def _insert_of(cls: type, fields: list, connection) -> str:
    key = (cls, "insert", connection.vendor)
    statement = _statements.get(key)
    if statement is None:
        quote = connection.ops.quote_name
        columns = ", ".join(quote(field.column) for field in fields)
        statement = _statements[key] = (f"INSERT INTO {quote(cls._meta.db_table)} ({columns}) "
                                        f"VALUES ({', '.join(['%s'] * len(fields))})")
    return statement


def _update_of(cls: type, fields: list, connection) -> str:
    key = (cls, tuple(field.attname for field in fields), connection.vendor)
    statement = _statements.get(key)
    if statement is None:
        quote, table = connection.ops.quote_name, connection.ops.quote_name(cls._meta.db_table)
        sets = ", ".join(f"{quote(field.column)} = %s" for field in fields)
        statement = _statements[key] = (f"UPDATE {table} SET {sets} WHERE {table}."
                                        f"{quote(cls._meta.pk.column)} = %s")
    return statement
