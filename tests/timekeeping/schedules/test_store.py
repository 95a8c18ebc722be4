"""SCHEDULES_STORE (SPEC J6): with two real databases and real `manage.py` processes, schedule
state and runs live in the store, while brands and what a run writes stay in the default
database. Set up as docs/schedules.md says: EXTRA_DATABASES, SCHEDULES_STORE, then
`migrate` and `migrate --database store`."""

import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass

import psycopg
import pytest
from django.db import connection

from tests.processes import ROOT, needs_postgres, test_database_url

# The real tick reads the wall clock: instead of waiting a minute, the test moves the due
# time into the past (Django's SQLite text form of an instant, read the same by PostgreSQL).
PAST = "2020-01-01 00:00:00"
LOAD = """
from timekeeping import manifests
from timekeeping.models import Brand
brand = Brand.objects.create(name="Store", slug="store")
manifests.load(brand, {"schedules": {"demo": {"beat": {"every": "1m", "run": "heartbeat"}}}})
"""
# A schedule whose runs fail (issue 31), ticked in one process: its action is registered here.
FAIL = """
from timekeeping import manifests
from timekeeping.basics import wallclock
from timekeeping.models import Brand, Schedule
from timekeeping.schedules import action
from timekeeping.tick import phases

@action("demo.fail")
def fail():
    raise RuntimeError("the books service did not answer")

brand = Brand.objects.get(slug="store")
brand.park_after = 2
brand.save(update_fields=["park_after"])
manifests.load(brand, {"schedules": {"demo": {"beat": {"every": "1m", "run": "heartbeat"},
                                              "fail": {"every": "1m", "run": "fail"}}}})
instant = wallclock.wall_now()
for _ in range(3):  # sees it; fails; fails again after its wait, parked
    with wallclock.fixed(instant):
        phases.run_once(now=instant)
    instant = Schedule.objects.get(name="demo.fail").next_due
"""


@dataclass(frozen=True)
class Databases:
    main: str  # URLs, as a child process is given them
    store: str
    query: Callable[[str, str], list[tuple]]  # (url, sql) -> rows


def sqlite_query(url: str, sql: str) -> list[tuple]:
    with closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as db:
        rows = db.execute(sql).fetchall()
        db.commit()
    return rows


def postgres_query(url: str, sql: str) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as db:
        cursor = db.execute(sql)
        return cursor.fetchall() if cursor.description else []


def manage(databases: Databases, *args: str) -> str:
    env = {**os.environ, "DATABASE_URL": databases.main, "DEBUG": "true",
           "EXTRA_DATABASES": f"store={databases.store}", "SCHEDULES_STORE": "store"}
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def check_state_lives_in_the_store(databases: Databases) -> None:
    manage(databases, "migrate", "--verbosity", "0")
    manage(databases, "migrate", "--database", "store", "--verbosity", "0")
    manage(databases, "shell", "--verbosity", "0", "--command", LOAD)
    manage(databases, "tick")  # sees the schedule: due one minute later
    databases.query(databases.store, f"UPDATE timekeeping_schedule SET next_due = '{PAST}' "
                                     "WHERE name = 'demo.beat'")
    assert "1 schedule run(s), 0 skipped" in manage(databases, "tick")

    in_store = databases.query(databases.store, """
        SELECT s.name, r.outcome FROM timekeeping_schedulerun r
        JOIN timekeeping_schedule s ON s.id = r.schedule_id""")
    assert in_store == [("demo.beat", "succeeded")]
    names = databases.query(databases.store, "SELECT name FROM timekeeping_schedule")
    assert sorted(name for (name,) in names) == ["TickRun.purge", "demo.beat"]
    for table in ("timekeeping_schedule", "timekeeping_schedulerun"):
        assert databases.query(databases.main, f"SELECT COUNT(*) FROM {table}") == [(0,)]
    # The run read its brand from the default database, and wrote its record there.
    assert databases.query(databases.main, """
        SELECT b.slug FROM timekeeping_record r JOIN timekeeping_brand b ON b.id = r.brand_id
        WHERE r.kind = 'heartbeat'""") == [("store",)]
    # The operator's command finds the schedule by its brand's slug (in the default
    # database) and reads its runs (in the store).
    said = manage(databases, "schedules", "why", "demo.beat", "--brand", "store")
    assert said.startswith("demo.beat runs demo.heartbeat every 1m; it runs next at")
    check_backoff_lives_in_the_store(databases)


def check_backoff_lives_in_the_store(databases: Databases) -> None:
    """A schedule's failures, backoff and parking are written on its row in the store, its
    events in the default database beside its brand (issue 31)."""
    manage(databases, "shell", "--verbosity", "0", "--command", FAIL)
    assert databases.query(databases.store, """
        SELECT attempts, parked IS NOT NULL, last_error LIKE '%books service%'
        FROM timekeeping_schedule WHERE name = 'demo.fail'""") == [(2, True, True)]
    assert databases.query(databases.main, """
        SELECT kind, COUNT(*) FROM timekeeping_record WHERE kind LIKE 'schedule.%'
        GROUP BY kind ORDER BY kind""") == [("schedule.failed", 2), ("schedule.parked", 1)]
    said = manage(databases, "schedules", "retry", "demo.fail", "--brand", "store")
    assert "demo.fail: runs at the next tick" in said
    assert databases.query(databases.store, """
        SELECT parked IS NULL, run_requested FROM timekeeping_schedule
        WHERE name = 'demo.fail'""") in ([(True, True)], [(1, 1)])
    assert databases.query(databases.main, "SELECT COUNT(*) FROM timekeeping_record WHERE "
                                           "kind = 'schedule.retried'") == [(1,)]
    for table in ("timekeeping_schedule", "timekeeping_schedulerun"):
        assert databases.query(databases.main, f"SELECT COUNT(*) FROM {table}") == [(0,)]


def test_it_keeps_schedule_state_and_runs_in_the_store_on_sqlite(tmp_path):
    check_state_lives_in_the_store(Databases(
        main=f"sqlite:///{tmp_path / 'main.sqlite3'}",
        store=f"sqlite:///{tmp_path / 'store.sqlite3'}", query=sqlite_query))


@pytest.fixture
def postgres_databases(transactional_db) -> Iterator[Databases]:
    """The test database as the default one, as for the other process tests (it is emptied
    after the test), and a fresh store named after it (test_kt_h3 -> kt_h3_test_store), so
    runs against other test databases never share it. One new database, not two: each
    DROP DATABASE waits for a checkpoint, which a busy server makes slow."""
    server = test_database_url().rsplit("/", 1)[0]
    store = f"{connection.settings_dict['NAME'].removeprefix('test_')}_test_store"
    # A killed earlier run may have left it behind.
    postgres_query(f"{server}/postgres", f'DROP DATABASE IF EXISTS "{store}"')
    postgres_query(f"{server}/postgres", f'CREATE DATABASE "{store}"')
    try:
        yield Databases(main=test_database_url(), store=f"{server}/{store}",
                        query=postgres_query)
    finally:
        postgres_query(f"{server}/postgres", f'DROP DATABASE IF EXISTS "{store}"')


@needs_postgres
def test_it_keeps_schedule_state_and_runs_in_the_store_on_postgres(postgres_databases):
    check_state_lives_in_the_store(postgres_databases)


def test_the_router_sends_schedules_to_the_store_and_what_they_point_at_to_the_default(
        settings):
    from config.routers import ScheduleStoreRouter
    from timekeeping.models import Brand, Schedule, ScheduleRun, TestClock, Timer

    router, row, brand = ScheduleStoreRouter(), Schedule(), Brand()
    settings.SCHEDULES_STORE = "store"
    for model in (Schedule, ScheduleRun):
        assert router.db_for_read(model) == router.db_for_write(model) == "store"
        assert router.db_for_read(model, instance=brand) == "store"  # brand.schedules
    for model in (Brand, TestClock):  # schedule.brand, schedule.test_clock
        assert router.db_for_read(model, instance=row) == "default"
    assert router.db_for_read(Timer) is None and router.db_for_read(Brand) is None
    assert router.allow_relation(brand, row) is True
    assert router.allow_migrate("store", "timekeeping", model_name="schedulerun") is True
    assert router.allow_migrate("store", "timekeeping", model_name="timer") is None
    settings.SCHEDULES_STORE = None
    assert router.db_for_read(Schedule) is None
    assert router.db_for_read(Brand, instance=row) is None
    assert router.allow_relation(brand, row) is None
