"""The files of deploy/ say what docs/operating.md says: the web through gunicorn on the WSGI
application the settings name, the tick as a oneshot run at each whole minute, each reading
its settings from one environment file, and a container that runs the same."""

import configparser
import re
from pathlib import Path

import pytest
from django.conf import settings

from tests.processes import needs_postgres

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"


def _unit(name: str) -> configparser.ConfigParser:
    unit = configparser.ConfigParser(strict=True, interpolation=None)
    unit.optionxform = str  # systemd's keys are case-sensitive
    unit.read_string((DEPLOY / name).read_text())
    return unit


def test_the_web_runs_gunicorn_on_the_settings_wsgi_application():
    web = _unit("keeping-time-web.service")["Service"]
    wsgi = settings.WSGI_APPLICATION.rsplit(".", 1)
    assert f" {wsgi[0]}:{wsgi[1]} " in web["ExecStart"]
    assert web["ExecStart"].startswith("/srv/keeping-time/.venv/bin/gunicorn ")
    assert web["EnvironmentFile"] == "/etc/keeping-time/env"
    assert web["User"] == "keeping-time" and web["NoNewPrivileges"] == "true"


def test_the_tick_is_a_oneshot_the_timer_starts_at_each_whole_minute():
    tick = _unit("keeping-time-tick.service")["Service"]
    assert tick["Type"] == "oneshot"
    assert tick["ExecStart"].endswith(" manage.py tick")
    assert tick["EnvironmentFile"] == "/etc/keeping-time/env"
    assert int(tick["TimeoutStartSec"]) > 50  # beyond the tick's own budget
    timer = _unit("keeping-time-tick.timer")["Timer"]
    assert timer["OnCalendar"] == "*-*-* *:*:00"
    assert timer["Unit"] == "keeping-time-tick.service"


def test_the_container_copies_every_package_and_serves_the_same_application():
    text = (DEPLOY / "Containerfile").read_text()
    for folder in ("config", "calendars", "money", "timekeeping", "templates", "static"):
        assert re.search(rf"^COPY {folder} \./{folder}$", text, re.MULTILINE), folder
    assert '"gunicorn", "config.wsgi:application"' in text
    assert "pip install --no-cache-dir '.[deploy]'" in text
    assert re.search(r"^USER keeping-time$", text, re.MULTILINE)


@needs_postgres
@pytest.mark.django_db
def test_the_migrations_set_autovacuum_for_the_ticks_hot_tables():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT relname, reloptions FROM pg_class WHERE relname IN "
                       "('timekeeping_timer', 'timekeeping_tickrun', 'timekeeping_brand')")
        options = {name: set(kept or ()) for name, kept in cursor.fetchall()}
    assert options == {
        "timekeeping_timer": {"autovacuum_vacuum_scale_factor=0",
                              "autovacuum_vacuum_threshold=20000",
                              "autovacuum_analyze_scale_factor=0",
                              "autovacuum_analyze_threshold=20000"},
        "timekeeping_tickrun": {"autovacuum_vacuum_scale_factor=0.01",
                                "autovacuum_analyze_scale_factor=0.02"},
        "timekeeping_brand": {"fillfactor=70"},
    }


@needs_postgres
@pytest.mark.django_db
def test_the_history_tables_keep_no_pattern_twins_and_connections_run_without_jit():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT tablename, indexdef FROM pg_indexes WHERE tablename IN "
                       "('timekeeping_timer', 'timekeeping_record')")
        indexes = cursor.fetchall()
        cursor.execute("SHOW jit")
        jit = cursor.fetchone()[0]
    assert {table for table, _ in indexes} == {"timekeeping_timer", "timekeeping_record"}
    assert [definition for _, definition in indexes if "pattern_ops" in definition] == []
    # The keys themselves are still indexed: a brand's or a test clock's removal finds its rows.
    # (The record table's key is (id, written): it is partitioned by month of written.)
    for table, key in (("timekeeping_timer", "(id)"), ("timekeeping_record", "(id, written)")):
        for column in (key, "(brand_id)", "(test_clock_id)"):
            assert any(name == table and definition.endswith(column)
                       for name, definition in indexes), (table, column)
    assert jit == "off"
