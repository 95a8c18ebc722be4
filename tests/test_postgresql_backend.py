"""The product's PostgreSQL backend (`config.postgresql`): Django's own, whose schema editor
makes no `varchar_pattern_ops` twin beside the index of an id, and migration 0045, which
drops the twins a database made before (issue 32). Ids are found by equality only; a text
column that is not an id keeps its twin, which serves a search by prefix. Its instants are
read by `datetime.fromisoformat`, as Django's own loader reads them."""

import importlib
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from django.apps import apps
from django.db import connection
from django.db.backends.postgresql.psycopg_any import register_tzloader
from django.db.backends.postgresql.schema import DatabaseSchemaEditor as DjangosEditor
from hypothesis import given, settings
from hypothesis import strategies as st
from psycopg import DataError, adapt, adapters
from psycopg.pq import Format

from config.postgresql.base import UtcLoader
from tests.processes import needs_postgres
from timekeeping.models import Job, Schedule

pytestmark = [needs_postgres, pytest.mark.django_db]
PRODUCT = ("timekeeping", "calendars", "money")
TIMESTAMPTZ = adapters.types["timestamptz"].oid


def _twins() -> dict[tuple[str, str], str]:
    """The pattern twins on the product's tables: by (table, column), the index's name."""
    tables = [model._meta.db_table for label in PRODUCT
              for model in apps.get_app_config(label).get_models()]
    with connection.cursor() as cursor:
        cursor.execute("SELECT tablename, indexname, indexdef FROM pg_indexes WHERE "
                       "schemaname = current_schema() AND tablename = ANY(%s) AND indexdef "
                       "LIKE %s", [tables, "%pattern_ops%"])
        found = cursor.fetchall()
    return {(table, definition.rsplit("(", 1)[1].split()[0]): name
            for table, name, definition in found}


def _ids() -> set[tuple[str, str]]:
    return {(model._meta.db_table, field.column) for label in PRODUCT
            for model in apps.get_app_config(label).get_models()
            for field in model._meta.local_fields if field.primary_key or field.is_relation}


def test_the_engine_is_the_products_backend():
    assert connection.settings_dict["ENGINE"] == "config.postgresql"
    assert connection.vendor == "postgresql"


def test_no_id_has_a_pattern_twin_and_a_key_searched_by_prefix_keeps_its_own():
    twins = _twins()
    assert set(twins) & _ids() == set()
    assert ("timekeeping_schedule", "key") in twins  # searched by its scope's prefix


def test_the_schema_editor_makes_a_twin_for_no_id():
    with connection.schema_editor() as editor:
        assert editor._create_like_index_sql(Job, Job._meta.get_field("subject")) is None
        assert editor._create_like_index_sql(Job, Job._meta.get_field("id")) is None
        assert editor._create_like_index_sql(Schedule, Schedule._meta.get_field("key"))


def test_the_migration_drops_the_twins_a_database_made_before():
    field = Job._meta.get_field("subject")
    with connection.schema_editor() as editor:
        editor.execute(DjangosEditor._create_like_index_sql(editor, Job, field))
    assert ("timekeeping_job", "subject_id") in _twins()
    migration = importlib.import_module("timekeeping.migrations.0045_ids_without_pattern_twins")
    with connection.schema_editor() as editor:
        migration.drop_twins(apps, editor)
    assert ("timekeeping_job", "subject_id") not in _twins()
    assert ("timekeeping_schedule", "key") in _twins()


# -- instants read by the C parser (`UtcLoader`) -----------------------------------------------

def _djangos(text: str):
    """What Django's own loader makes of a timestamptz's text on a UTC connection."""
    context = adapt.AdaptersMap(adapters)
    register_tzloader(UTC, context)
    loader = context.get_loader(TIMESTAMPTZ, Format.TEXT)(TIMESTAMPTZ, connection.connection)
    try:
        return loader.load(text.encode())
    except DataError as error:
        return type(error)


def _ours(text: str):
    try:
        return UtcLoader(TIMESTAMPTZ, connection.connection).load(text.encode())
    except DataError as error:
        return type(error)


def test_every_connection_reads_instants_with_the_fast_loader():
    with connection.cursor() as cursor:
        assert isinstance(cursor.cursor.adapters.get_loader(TIMESTAMPTZ, Format.TEXT)(
            TIMESTAMPTZ), UtcLoader)
        cursor.execute("SELECT %s::timestamptz", [datetime(2026, 3, 29, 1, 30, tzinfo=UTC)])
        (read,) = cursor.fetchone()
    assert read == datetime(2026, 3, 29, 1, 30, tzinfo=UTC) and read.tzinfo is UTC


# Hypothesis takes naive bounds; its zones make each instant aware.
SPAN = {"min_value": datetime(1, 1, 2), "max_value": datetime(9999, 12, 30)}  # noqa: DTZ001


@settings(max_examples=200, deadline=None)
@given(st.datetimes(**SPAN, timezones=st.sampled_from([UTC, ZoneInfo("America/New_York"),
                                      ZoneInfo("Asia/Kolkata")])))
def test_an_instant_reads_back_as_written_and_as_djangos_loader_reads_it(instant):
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::timestamptz, %s::timestamptz::text", [instant, instant])
        read, text = cursor.fetchone()
    instant = instant.astimezone(UTC)  # (PEP 495: an hour that repeats equals no other zone's)
    assert read == instant and read.tzinfo is UTC
    assert _ours(text) == _djangos(text) == instant


@pytest.mark.parametrize("text", [
    "infinity", "-infinity", "0044-03-15 12:00:00+00 BC", "2026-12-06 11:36:02.5+05:30",
    "2026-12-06 11:36:02+00", "2026-12-06 11:36:02.000001+00", "Sun Dec 06 11:36:02 2026 UTC",
])
def test_text_the_fast_path_does_not_take_is_read_as_django_reads_it(text):
    assert _ours(text) == _djangos(text)
