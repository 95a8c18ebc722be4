"""The settings are checked the way a deployment meets them: in a fresh process."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "DEBUG": "False",
    "SECRET_KEY": "x7#Lq-2vN!pR9zT4wK8mB3cF6hJ1dS5gY0aE-uI&oP%lZ^nV*tQ_rW@sX+yU=jM",
    "ALLOWED_HOSTS": "time.example.com",
    "DATABASE_URL": "sqlite:////tmp/keeping-time-settings-check.sqlite3",
}
# With a second database, which asks for the schedules' store to be named.
WITH_A_VENUE = {**PRODUCTION, "EXTRA_DATABASES": "venue=sqlite:////tmp/keeping-time-venue.sqlite3"}


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    # Start from a clean environment so the developer's own variables (and no .env values
    # for these names) decide nothing here.
    base = {k: v for k, v in os.environ.items() if k not in PRODUCTION and k != "EMAIL_URL"}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_it_passes_the_deploy_check_with_only_the_production_values():
    done = manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_it_names_the_missing_secret_key_when_debug_is_off():
    env = {**PRODUCTION, "SECRET_KEY": ""}
    done = manage("check", env=env)
    assert done.returncode != 0
    assert "SECRET_KEY" in done.stderr and "must be set when DEBUG is off" in done.stderr


def test_it_lets_a_proxy_take_over_the_https_redirect():
    env = {**PRODUCTION, "SECURE_SSL_REDIRECT": "False"}
    done = manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert done.returncode != 0
    assert "security.W008" in done.stdout + done.stderr


def test_it_names_a_malformed_extra_database():
    done = manage("check", env={**PRODUCTION, "EXTRA_DATABASES": "postgres://nowhere/x"})
    assert done.returncode != 0
    assert "EXTRA_DATABASES: write alias=URL pairs" in done.stderr


def test_it_registers_extra_databases_and_asks_for_the_schedules_store():
    extra = WITH_A_VENUE
    done = manage("check", env=extra)
    assert done.returncode != 0 and "schedule.store_required" in done.stderr + done.stdout
    assert manage("check", env={**extra, "SCHEDULES_STORE": "default"}).returncode == 0


def test_the_tick_runs_the_products_checks_before_it_fires():
    # The tick skips Django's own checks (they import the whole site each minute) but not the
    # product's: with the schedules' store unnamed it refuses before it touches a timer.
    extra = WITH_A_VENUE
    done = manage("tick", env=extra)
    assert done.returncode != 0 and "schedule.store_required" in done.stderr + done.stdout


def _database_options(env: dict[str, str]) -> str:
    done = manage("shell", "-c", "from django.conf import settings; "
                  "print(repr(settings.DATABASES['default'].get('OPTIONS', {}).get('options')))",
                  env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_postgresql_connections_run_without_jit_unless_asked():
    url = "postgres://someone@db.example.com:5432/keeping_time"
    assert _database_options({**PRODUCTION, "DATABASE_URL": url}) == "'-c jit=off'"
    assert _database_options({**PRODUCTION, "DATABASE_URL": url, "DATABASE_JIT": "true"}) == "None"
    own = url + "?options=-c%20jit%3Don%20-c%20work_mem%3D8MB"
    assert _database_options({**PRODUCTION, "DATABASE_URL": own}) == "'-c jit=on -c work_mem=8MB'"
    sqlite = _database_options(PRODUCTION)
    assert sqlite == "None"


def test_it_reads_the_throttles_from_the_environment_and_names_a_bad_one():
    said = manage("shell", "-c", "from django.conf import settings as s; print("
                  "s.AXES_FAILURE_LIMIT, s.AXES_COOLOFF_TIME, s.THROTTLE_RATES['key'], "
                  "s.THROTTLE_RATES['anon'])",
                  env={**PRODUCTION, "AXES_FAILURE_LIMIT": "7", "AXES_COOLOFF_MINUTES": "30",
                       "API_RATE_PER_KEY": "50/s"})
    assert said.stdout.splitlines()[-1].split() == ["7", "0:30:00", "50/s", "120/min"], said.stderr
    for name, value in (("API_RATE_PER_ADDRESS", "lots"), ("AXES_COOLOFF_MINUTES", "0"),
                        ("AXES_FAILURE_LIMIT", "0")):
        done = manage("check", env={**PRODUCTION, name: value})
        assert done.returncode != 0 and f"{name}: " in done.stderr
