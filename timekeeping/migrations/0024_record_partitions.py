# Records partitioned by month of when they were written, on PostgreSQL (docs/scale.md,
# "Years of history"; timekeeping.partitions keeps the months). SQLite adds the column only.
#
# On PostgreSQL the table that was becomes the first partition, `timekeeping_record_before`,
# without copying a row: its records get `written = 1970-01-01 00:00Z` (a constant default,
# so no row is rewritten), a CHECK that validates the range, and are attached below this month.
# The parent takes the table's name, and its indexes and foreign keys take their names (the
# old ones are renamed and attached as the first partition's). A new parent index finds its
# twin on the first partition and attaches it instead of building it; only the primary key,
# now (id, written), is built anew on the first partition (its key on id alone is dropped):
# on a large table, that is the step that takes time, during which records cannot be
# written (docs/operating.md, "Upgrades").

import django.db.models.functions.datetime
from django.db import migrations, models

PARENT = "timekeeping_record"
BEFORE = "timekeeping_record_before"
DEFAULT = "timekeeping_record_default"


def _month_starts(cursor):
    cursor.execute("SELECT date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'")
    return cursor.fetchone()[0]


def add_written(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        model = apps.get_model("timekeeping", "Record")
        schema_editor.add_field(model, model._meta.get_field("written"))
        return
    quote = connection.ops.quote_name
    # A constant default fills the rows there are without rewriting them; then new rows get
    # the time they are written.
    schema_editor.execute(f"ALTER TABLE {quote(PARENT)} ADD COLUMN written timestamp with "
                          "time zone NOT NULL DEFAULT '1970-01-01 00:00:00+00'")
    schema_editor.execute(f"ALTER TABLE {quote(PARENT)} ALTER COLUMN written SET DEFAULT now()")


def partition(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    quote = connection.ops.quote_name
    run = schema_editor.execute
    with connection.cursor() as cursor:
        starts = _month_starts(cursor)
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = "
                       "current_schema() AND tablename = %s", [PARENT])
        indexes = cursor.fetchall()
        cursor.execute("SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE "
                       "conrelid = to_regclass(%s) AND contype = 'f'", [PARENT])
        foreign = cursor.fetchall()
        cursor.execute("SELECT conname FROM pg_constraint WHERE conrelid = to_regclass(%s) "
                       "AND contype = 'p'", [PARENT])
        (primary,) = cursor.fetchone()
    # Its key on id alone cannot stay: a partition's key must be the parent's, (id, written).
    run(f"ALTER TABLE {quote(PARENT)} DROP CONSTRAINT {quote(primary)}")
    indexes = [(name, definition) for name, definition in indexes if name != primary]
    run(f"ALTER TABLE {quote(PARENT)} RENAME TO {quote(BEFORE)}")
    for number, (name, _) in enumerate(indexes):
        run(f"ALTER INDEX {quote(name)} RENAME TO {quote(f'{BEFORE}_i{number}')}")
    for number, (name, _) in enumerate(foreign):
        run(f"ALTER TABLE {quote(BEFORE)} RENAME CONSTRAINT {quote(name)} TO "
            f"{quote(f'{BEFORE}_f{number}')}")
    run(f"CREATE TABLE {quote(PARENT)} (LIKE {quote(BEFORE)} INCLUDING DEFAULTS) "
        "PARTITION BY RANGE (written)")
    run(f"ALTER TABLE {quote(BEFORE)} ADD CONSTRAINT {quote(f'{BEFORE}_range')} "
        "CHECK (written < %s)", [starts])
    run(f"ALTER TABLE {quote(PARENT)} ATTACH PARTITION {quote(BEFORE)} "
        "FOR VALUES FROM (MINVALUE) TO (%s)", [starts])
    run(f"ALTER TABLE {quote(PARENT)} ADD CONSTRAINT {quote(primary)} PRIMARY KEY (id, written)")
    for _, definition in indexes:
        run(definition)  # it named the table by the name the parent has now
    for name, definition in foreign:
        run(f"ALTER TABLE {quote(PARENT)} ADD CONSTRAINT {quote(name)} {definition}")
    run(f"CREATE TABLE {quote(DEFAULT)} PARTITION OF {quote(PARENT)} DEFAULT")
    for ahead in range(3):
        index = starts.year * 12 + starts.month - 1 + ahead
        month, end = (index // 12, index % 12 + 1), ((index + 1) // 12, (index + 1) % 12 + 1)
        lower = starts.replace(year=month[0], month=month[1])
        upper = starts.replace(year=end[0], month=end[1])
        run(f"CREATE TABLE {quote(f'{PARENT}_y{month[0]:04d}m{month[1]:02d}')} PARTITION OF "
            f"{quote(PARENT)} FOR VALUES FROM (%s) TO (%s)", [lower, upper])


def drop_written(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        model = apps.get_model("timekeeping", "Record")
        schema_editor.remove_field(model, model._meta.get_field("written"))
        return
    schema_editor.execute(f"ALTER TABLE {connection.ops.quote_name(PARENT)} DROP COLUMN written")


def unpartition(apps, schema_editor):
    """Back to one table: the rows copied into a plain table with the parent's indexes and
    foreign keys, by their names, and its key on id again."""
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    quote = connection.ops.quote_name
    run = schema_editor.execute
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = "
                       "current_schema() AND tablename = %s", [PARENT])
        indexes = cursor.fetchall()
        cursor.execute("SELECT conname, contype, pg_get_constraintdef(oid) FROM pg_constraint "
                       "WHERE conrelid = to_regclass(%s) AND contype IN ('f', 'p')", [PARENT])
        constraints = cursor.fetchall()
    primary = next(name for name, kind, _ in constraints if kind == "p")
    plain = f"{PARENT}_plain"
    run(f"CREATE TABLE {quote(plain)} (LIKE {quote(PARENT)} INCLUDING DEFAULTS)")
    run(f"INSERT INTO {quote(plain)} SELECT * FROM {quote(PARENT)}")
    run(f"DROP TABLE {quote(PARENT)}")
    run(f"ALTER TABLE {quote(plain)} RENAME TO {quote(PARENT)}")
    run(f"ALTER TABLE {quote(PARENT)} ADD CONSTRAINT {quote(primary)} PRIMARY KEY (id)")
    for name, definition in indexes:
        if name != primary:
            run(definition.replace(" ON ONLY ", " ON ", 1))
    for name, kind, definition in constraints:
        if kind == "f":
            run(f"ALTER TABLE {quote(PARENT)} ADD CONSTRAINT {quote(name)} {definition}")


class Migration(migrations.Migration):

    dependencies = [
        ('timekeeping', '0023_brandtable_declared_in'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.AddField(
                model_name='record',
                name='written',
                field=models.DateTimeField(db_default=django.db.models.functions.datetime.Now(),
                                           editable=False),
            )],
            database_operations=[],
        ),
        migrations.RunPython(add_written, drop_written),
        migrations.RunPython(partition, unpartition),
    ]
