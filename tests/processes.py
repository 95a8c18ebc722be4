"""Running `manage.py` in real separate processes against the test database (PostgreSQL)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent

needs_postgres = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="needs PostgreSQL: concurrent tick processes and SKIP LOCKED (set DATABASE_URL)",
)


def test_database_url() -> str:
    """The URL of the database the tests run on, for a child process."""
    conf = connection.settings_dict
    user = conf.get("USER") or "postgres"
    host = conf.get("HOST") or "127.0.0.1"
    port = conf.get("PORT") or 5432
    password = f":{conf['PASSWORD']}" if conf.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{host}:{port}/{conf['NAME']}"


test_database_url.__test__ = False  # a helper, not a test


def start_manage(*args: str, env: dict | None = None) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": test_database_url(), "DEBUG": "true", **(env or {})}
    return subprocess.Popen(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
