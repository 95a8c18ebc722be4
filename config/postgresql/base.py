"""Django's PostgreSQL backend, less the second index it makes beside the index of each
primary key and foreign key held as text (issue 32).

Beside an index on a `varchar` or `text` column Django makes a `varchar_pattern_ops` twin
(`…_like`), which serves `LIKE` and `startswith` outside the C collation. The product's ids
(`brd_…`, `job_…`) are found by equality only, never by a pattern, so on their columns the
twin serves nothing, costs every insert a write to one more index, and slows the planning of
every read that joins on them: PostgreSQL weighs it beside the plain index (docs/scale.md,
"Real work at scale": a rung's reads planned a quarter faster without them). A text column
that is neither a primary key nor a foreign key keeps its twin (a schedule's `key`, searched
by its prefix). Migration `timekeeping.0045` drops the twins databases made before.

The one override is the schema editor's `_create_like_index_sql`, the hook Django's own
PostgreSQL schema editor calls wherever it would make a twin (creating a model, adding or
altering a field), and which answers None when no twin is wanted.
"""

from django.db.backends.postgresql import base, schema


class DatabaseSchemaEditor(schema.DatabaseSchemaEditor):
    def _create_like_index_sql(self, model, field):
        if field.primary_key or field.is_relation:
            return None  # an id: found by equality only
        return super()._create_like_index_sql(model, field)


class DatabaseWrapper(base.DatabaseWrapper):
    SchemaEditorClass = DatabaseSchemaEditor
