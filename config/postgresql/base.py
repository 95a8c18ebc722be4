"""Django's PostgreSQL backend with two changes (issue 32): no second index beside the index
of each primary key and foreign key held as text, and a cursor whose statements are prepared,
for the reads compiled once that ask for it (`timekeeping.basics.compiled`).

**No pattern twins.** Beside an index on a `varchar` or `text` column Django makes a
`varchar_pattern_ops` twin (`…_like`), which serves `LIKE` and `startswith` outside the C
collation. The product's ids (`brd_…`, `job_…`) are found by equality only, never by a
pattern, so on their columns the twin serves nothing, costs every insert a write to one more
index, and slows the planning of every read that joins on them: PostgreSQL weighs it beside
the plain index (docs/scale.md, "Real work at scale": a rung's reads planned a quarter faster
without them). A text column that is neither a primary key nor a foreign key keeps its twin (a
schedule's `key`, searched by its prefix). Migration `timekeeping.0045` drops the twins
databases made before. The one override is the schema editor's `_create_like_index_sql`, the
hook Django's own PostgreSQL schema editor calls wherever it would make a twin (creating a
model, adding or altering a field), and which answers None when no twin is wanted.

**Prepared statements** (`DatabaseWrapper.preparing`). A firing's read of its row with the
rows it joins costs PostgreSQL more to plan than to run (an ask with its job, brand, owner,
subject and test clock: 0.7 of 0.9 ms). Inside `preparing()`, Django's statements bind on the
server and are prepared: planned a few times a connection, then one plan kept if it costs no
more. Only reads whose best plan no value changes go there (`compiled.Read(prepared=True)`):
found by their primary key, or by a job's or an owner's id on a table that indexes it (a job's
deadlines that follow a date, its steps started, its dates, an owner's timers: planned at 4
to 8 times their run; `bench/plans.py`). Everything else binds on the client and is planned
each time, as
Django sends it: a kept plan cannot see what a value matches (a step's hard dates, read by
subject and brand, took 2 ms instead of 1 on one; the tick's owed-by-now read, 849 ms instead
of 15 with a million armed, docs/scale.md). A timer's insert, prepared, was no faster.
`PREPARED_STATEMENTS=false` turns it off (a pooler in transaction mode that cannot keep a
connection's prepared statements, say).

**Instants read by the C parser** (`UtcLoader`). Django reads every `timestamptz` through a
loader of its own, a subclass of psycopg's pure-Python one, to give each the connection's
zone: 5.5 µs an instant, against 0.3 µs for `datetime.fromisoformat`. A batch of a thousand
timers carries three thousand instants: its rows were read in 17 to 20 ms, now in 5.4 to 5.9.
The session's zone is UTC, so PostgreSQL writes each as `2026-12-06 11:36:02.123456+00`, which
`fromisoformat` reads as Django's loader does, in UTC (`datetime.UTC` itself). Anything else
(`infinity`, a date BC, a year past 9999, another zone or date style) goes to Django's loader
as before, so what is read, or refused, is the same.
"""

from contextlib import contextmanager
from datetime import UTC, datetime

from django.conf import settings
from django.db.backends.postgresql import base, operations, schema
from django.db.backends.postgresql.psycopg_any import BaseTzLoader, register_tzloader
from psycopg import errors
from psycopg.pq import Format


class DatabaseSchemaEditor(schema.DatabaseSchemaEditor):
    def _create_like_index_sql(self, model, field):
        if field.primary_key or field.is_relation:
            return None  # an id: found by equality only
        return super()._create_like_index_sql(model, field)


# Django leaves psycopg's preparing off (a threshold of None), which refuses `prepare=True` too.
# A threshold no count reaches prepares only what asks; it is set only while a prepared cursor
# sends its statement. Left set, psycopg would count every statement Django sends, each with
# its values written in (a batch's insert of a thousand rows among them), and keep the last
# 100 of them: 7 MB more at the peak of a tick of the April wave.
NEVER_BY_COUNT = 2**31


class PreparedCursor(base.ServerBindingCursor):
    """Binds its parameters on the server, and prepares each statement when first sent on
    its connection (psycopg keeps the connection's last 100)."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        connection = self.connection
        before, connection.prepare_threshold = connection.prepare_threshold, NEVER_BY_COUNT
        try:
            return super().execute(query, params, binary=binary,
                                   prepare=True if prepare is None else prepare)
        finally:
            connection.prepare_threshold = before


class UtcLoader(BaseTzLoader):
    """A `timestamptz` written in UTC, read by `datetime.fromisoformat`; any other text by
    Django's loader (the module's docstring)."""

    timezone = UTC  # what Django's create_cursor compares with the connection's zone

    def load(self, data):
        try:
            instant = datetime.fromisoformat(str(data, "ascii"))
        except ValueError:  # UnicodeDecodeError among them
            return super().load(data)
        return instant if instant.tzinfo is UTC else super().load(data)


class DatabaseOperations(operations.DatabaseOperations):
    def last_executed_query(self, cursor, sql, params):
        if not isinstance(cursor, PreparedCursor):
            return super().last_executed_query(cursor, sql, params)
        try:  # logged with its values, as the others are (and as Django logs server binding)
            return self.compose_sql(sql, params)
        except errors.DataError:
            return None


class DatabaseWrapper(base.DatabaseWrapper):
    SchemaEditorClass = DatabaseSchemaEditor
    ops_class = DatabaseOperations
    _preparing = False

    @contextmanager
    def preparing(self):
        """Inside, what Django sends through `cursor()` is prepared (`PreparedCursor`): for
        statements whose plan no value changes. Nothing changes when PREPARED_STATEMENTS is
        off."""
        before = self._preparing
        self._preparing = settings.PREPARED_STATEMENTS
        try:
            yield
        finally:
            self._preparing = before

    def get_connection_params(self):
        params = super().get_connection_params()
        if self.timezone == UTC:  # the session's zone (Django sets it to the same)
            params["context"].register_loader("timestamptz", UtcLoader)
        return params

    def create_cursor(self, name=None):
        if name or not self._preparing:
            return super().create_cursor(name)
        cursor = PreparedCursor(self.connection)
        loader = self.connection.adapters.get_loader(base.TIMESTAMPTZ_OID, Format.TEXT)
        if self.timezone != loader.timezone:  # as Django's own create_cursor does
            register_tzloader(self.timezone, cursor)
        return cursor
