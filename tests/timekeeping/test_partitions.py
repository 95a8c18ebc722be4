"""Records by month on PostgreSQL (timekeeping.tick.partitions, migration 0024): a firing's records
go into this month's partition; housekeeping keeps months made ahead, moves what the default
partition took into its month, and drops months past RECORDS_KEEP_MONTHS whole; the migration
keeps every record there was, and gives it back when reversed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.processes import needs_postgres
from timekeeping.models import Record
from timekeeping.tick import partitions, phases
from timekeeping.timers import delays

AT = datetime(2027, 3, 1, 14, tzinfo=UTC)


def _where(record_id: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT tableoid::regclass::text FROM timekeeping_record WHERE id = %s",
                       [record_id])
        return cursor.fetchone()[0]


def _this_month():
    return partitions.month_of(partitions.database_now())


@pytest.mark.django_db
def test_sqlite_keeps_one_table_and_housekeeping_makes_no_months():
    if connection.vendor == "postgresql":
        assert partitions.partitioned()
    else:
        assert not partitions.partitioned() and partitions.ensure() == []
        assert partitions.drop_past(1) == []


@needs_postgres
@pytest.mark.django_db
def test_a_firings_records_go_into_this_months_partition(brand):
    this = _this_month()
    assert [m.name for m in partitions.months()] == [
        partitions.month_of(partitions.add_months(this.starts, ahead)).name
        for ahead in range(3)]
    delays.delay("timekeeping.note", {"n": 1}, brand=brand, at=AT)
    phases.run_once(now=AT + timedelta(minutes=1), phases=False)
    fired = Record.objects.get(brand=brand, kind="timer.fired")
    assert _where(fired.pk) == this.name
    assert this.starts <= fired.written < this.ends  # the database's time, not the clock's


@needs_postgres
@pytest.mark.django_db
def test_housekeeping_makes_the_months_ahead_and_moves_what_the_default_took(brand):
    this = _this_month()
    later = partitions.month_of(partitions.add_months(this.starts, 2))
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE timekeeping_record DETACH PARTITION {later.name}")
        cursor.execute(f"DROP TABLE {later.name}")
    early = Record.objects.create(kind="note", instant=AT, brand=brand,
                                  written=later.starts + timedelta(days=3))
    assert _where(early.pk) == partitions.DEFAULT

    assert partitions.ensure() == [later.name]

    assert _where(early.pk) == later.name
    # The month has every index of the table, not only its key.
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_indexes WHERE tablename = %s", [later.name])
        made = cursor.fetchone()[0]
        cursor.execute("SELECT count(*) FROM pg_indexes WHERE tablename = %s",
                       [partitions.PARENT])
        assert made == cursor.fetchone()[0] == 7
    assert Record.objects.get(pk=early.pk).written == later.starts + timedelta(days=3)
    assert partitions.ensure() == []


@needs_postgres
@pytest.mark.django_db
def test_months_past_the_kept_ones_are_dropped_whole(brand):
    this = _this_month()
    with connection.cursor() as cursor:  # an older database: months before this one
        cursor.execute("ALTER TABLE timekeeping_record DETACH PARTITION "
                       "timekeeping_record_before")
        cursor.execute("DROP TABLE timekeeping_record_before")
    past = [partitions.month_of(partitions.add_months(this.starts, -back))
            for back in (3, 2, 1)]
    for month in past:
        partitions.make(month)
        Record.objects.create(kind="note", instant=AT, brand=brand,
                              written=month.starts + timedelta(hours=1))

    with connection.cursor() as cursor:  # this test's rows, checked before their month goes
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    assert partitions.drop_past(0) == []
    assert partitions.drop_past(2) == [past[0].name, past[1].name]

    assert Record.objects.filter(kind="note").count() == 1
    assert [m.name for m in partitions.months()][0] == past[2].name


@needs_postgres
@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_every_record_and_gives_them_back_reversed(brand):
    def migrate(target):
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate([("timekeeping", target)])

    try:
        migrate("0023_brandtable_declared_in")
        with connection.cursor() as cursor:
            cursor.execute("SELECT relkind FROM pg_class WHERE relname = 'timekeeping_record'")
            assert cursor.fetchone()[0] == "r"
            cursor.executemany(
                "INSERT INTO timekeeping_record (id, kind, instant, brand_id, subject, job, "
                "timer, data) VALUES (%s, 'note', %s, %s, '', '', '', '{}')",
                [(f"rec_old{n}", AT, brand.pk) for n in range(3)])
        migrate("0024_record_partitions")
        assert partitions.partitioned()
        kept = Record.objects.filter(kind="note").order_by("id")
        assert [r.pk for r in kept] == ["rec_old0", "rec_old1", "rec_old2"]
        assert {_where(r.pk) for r in kept} == {partitions.BEFORE}
        assert {r.written for r in kept} == {datetime(1970, 1, 1, tzinfo=UTC)}
        migrate("0023_brandtable_declared_in")
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM timekeeping_record WHERE kind = 'note'")
            assert cursor.fetchone()[0] == 3
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
