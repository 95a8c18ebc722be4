# Drops the varchar_pattern_ops twins Django makes on PostgreSQL beside the primary key and the
# brand and test-clock keys of the timer and record tables (docs/scale.md, "Years of history").
# Those twins serve only LIKE and startswith on ids, which nothing runs, and each cost every
# firing and every record one more write on a random page of an index as large as the history.

from django.db import migrations

TABLES = ("timekeeping_timer", "timekeeping_record")
FIELDS = {"Timer": ("id", "brand", "test_clock"), "Record": ("id", "brand", "test_clock")}


def drop_twins(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() "
            "AND tablename = ANY(%s) AND indexdef LIKE %s",
            [list(TABLES), "%pattern_ops%"],
        )
        names = [name for (name,) in cursor.fetchall()]
    for name in names:
        schema_editor.execute(f"DROP INDEX {connection.ops.quote_name(name)}")


def make_twins(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for model_name, fields in FIELDS.items():
        model = apps.get_model("timekeeping", model_name)
        for name in fields:
            statement = schema_editor._create_like_index_sql(model, model._meta.get_field(name))
            if statement is not None:
                schema_editor.execute(statement)


class Migration(migrations.Migration):

    dependencies = [
        ("timekeeping", "0021_history_indexes_autovacuum"),
    ]

    operations = [
        migrations.RunPython(drop_twins, make_twins),
    ]
