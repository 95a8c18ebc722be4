# Drops the varchar_pattern_ops twins Django made on PostgreSQL beside the index of every
# primary key and foreign key held as text, on every table of the product's apps (issue 32):
# ids are found by equality, never by a pattern, so the twins served nothing, cost every insert
# one more index write and slowed the planning of reads joining on ids (docs/scale.md, "Real
# work at scale"). 0022 dropped those of the timer and record tables. The product's backend
# (config/postgresql) makes none now; a text column that is not an id keeps its twin.
# Reversed, the twins are not made again: they served nothing.

import re

from django.db import migrations

APPS = ("timekeeping", "calendars", "money")
TWIN = re.compile(r"\((\w+) (?:varchar|text)_pattern_ops\)")


def drop_twins(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    ids = {}  # by table: the columns of its primary key and foreign keys
    for label in APPS:
        for model in apps.get_app_config(label).get_models():
            ids.setdefault(model._meta.db_table, set()).update(
                field.column for field in model._meta.local_fields
                if field.primary_key or field.is_relation)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename, indexname, indexdef FROM pg_indexes "
            "WHERE schemaname = current_schema() AND tablename = ANY(%s) "
            "AND indexdef LIKE %s", [sorted(ids), "%pattern_ops%"])
        found = cursor.fetchall()
    for table, name, definition in found:
        column = TWIN.search(definition)
        if column is not None and column.group(1) in ids[table]:
            schema_editor.execute(f"DROP INDEX IF EXISTS {connection.ops.quote_name(name)}")


class Migration(migrations.Migration):

    dependencies = [
        ("timekeeping", "0044_timer_retried"),
        ("calendars", "0001_initial"),
        ("money", "0002_brand"),
    ]

    operations = [
        migrations.RunPython(drop_twins, migrations.RunPython.noop),
    ]
