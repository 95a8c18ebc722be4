"""How fast the tick fires, against a raw-SQL floor; and what an empty tick costs.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/tick.py

Creates a scratch database beside the one DATABASE_URL names, fills it with 1,000,000 armed
timers over a year and 10 brands (100,000 owed now, a no-op operation), and measures:

- floor_per_s: raw SQL in batches of 1,000 (SELECT … FOR UPDATE SKIP LOCKED, UPDATE, one
  INSERT of a record per timer), firing the 100,000;
- tick_per_s, tick2_per_s: the same 100,000 fired by one `manage.py tick` process, then by two
  at once (from the first TickRun's start to the last one's finish);
- empty_ratio: the median time of a tick that finds nothing owed with 1,000,000 armed timers
  (measured right after the 100,000 fired, no VACUUM) against the same with 1,000.

Ends with one line: tick_per_s=… tick2_per_s=… floor_per_s=… ratio=… empty_ratio=…
Drops the scratch database at the end.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

BRANDS = 10
NOW = datetime.now(UTC).replace(microsecond=0)  # noqa: DTZ005 - a benchmark's own setup


def scratch_url(base: str, name: str) -> str:
    parts = urlparse(base)
    return urlunparse(parts._replace(path=f"/{name}"))


def admin_connect(base: str) -> psycopg.Connection:
    return psycopg.connect(base.replace("postgres://", "postgresql://", 1), autocommit=True)


def postgres_base() -> str:
    """DATABASE_URL, which must name a PostgreSQL server the benchmarks make databases on."""
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith(("postgres://", "postgresql://")):
        raise SystemExit("DATABASE_URL: give a PostgreSQL URL, e.g. "
                         "postgres://postgres@127.0.0.1:5432/postgres")
    return base


@contextmanager
def scratch_database(base: str, name: str, *, template: str | None = None) -> Iterator[str]:
    """A database made for one measurement, dropped after it whatever happens: its URL.
    With `template`, a copy of that database (which no session may be connected to)."""
    copy = f' TEMPLATE "{template}"' if template else ""
    with admin_connect(base) as admin:
        admin.execute(f'CREATE DATABASE "{name}"{copy}')
    try:
        yield scratch_url(base, name)
    finally:
        with admin_connect(base) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def setup_django(url: str) -> None:
    """Django on the scratch database, as a deployment runs it: DEBUG off (on, Django keeps
    every statement it sends, which costs each one time), which the tick processes started
    from here inherit."""
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DEBUG", "false")
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-any-deployment-0123456")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def fill(total: int, owed_now: int) -> list[str]:
    """COPY `total` timers into the scratch database: `owed_now` owed, the rest over a year."""
    from timekeeping.models import Brand

    brands = [Brand.objects.create(name=f"Bench {n}", slug=f"bench-{n}").pk
              for n in range(BRANDS)]
    year = 365 * 86400
    copy_timers(
        (brands[n % BRANDS],
         NOW - timedelta(seconds=(n * 7919) % 86400 + 1) if n < owed_now
         else NOW + timedelta(seconds=1 + (n * 104729) % year))
        for n in range(total))
    return brands


def copy_timers(timers: Iterable[tuple[str, datetime]], *, test_clock: str | None = None,
                first: int = 0) -> int:
    """COPY armed no-op delays, (brand, owed) each, on the brands' real clocks or on
    `test_clock`; their keys are numbered from `first`. Returns how many, after ANALYZE."""
    from django.db import connection

    from timekeeping.basics.public_ids import new_id

    payload = json.dumps({"operation": "timekeeping.noop", "input": {}, "overdue_s": None})
    clock = test_clock or "\\N"
    count = 0
    with connection.cursor() as cursor:
        raw = cursor.connection
        with raw.cursor().copy(
            "COPY timekeeping_timer (id, brand_id, test_clock_id, key, kind, place, owed, state, "
            "owner_type, owner_id, owner_opened, payload, armed_at, bundle, armed_by, ended_by, "
            "attempts, last_error) FROM STDIN"
        ) as copy:
            buffer = io.StringIO()
            for brand, owed in timers:
                buffer.write(
                    f"{new_id('tmr')}\t{brand}\t{clock}\tk{first + count:08d}\tdelay\t5\t"
                    f"{owed.isoformat()}\tarmed\t\t{brand}\t{owed.isoformat()}\t{payload}\t"
                    f"{NOW.isoformat()}\t\t\t\t0\t\n")
                count += 1
                if buffer.tell() > 1 << 20:
                    copy.write(buffer.getvalue())
                    buffer = io.StringIO()
            copy.write(buffer.getvalue())
        cursor.execute("ANALYZE timekeeping_timer")
    return count


def reset_fired() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("UPDATE timekeeping_timer SET state = 'armed', fired = NULL, "
                       "late_by = NULL WHERE state = 'fired'")
        cursor.execute("TRUNCATE timekeeping_record, timekeeping_tickrun")
    with admin_connect(os.environ["DATABASE_URL"]) as admin:
        admin.execute("VACUUM ANALYZE timekeeping_timer")


def floor(brands: list[str]) -> float:
    """The raw-SQL floor: batches of 1,000 with SKIP LOCKED, one UPDATE, a record per timer."""
    from timekeeping.basics.public_ids import new_id

    fired = 0
    started = time.perf_counter()
    with psycopg.connect(os.environ["DATABASE_URL"].replace("postgres://", "postgresql://", 1)
                         ) as conn:
        for brand in brands:
            while True:
                with conn.transaction():
                    rows = conn.execute(
                        "SELECT id, owed FROM timekeeping_timer WHERE brand_id = %s AND "
                        "test_clock_id IS NULL AND state = 'armed' AND owed <= %s ORDER BY owed, "
                        "place, owner_opened, key LIMIT 1000 FOR UPDATE SKIP LOCKED",
                        (brand, NOW),
                    ).fetchall()
                    if not rows:
                        break
                    ids = [row[0] for row in rows]
                    conn.execute(
                        "UPDATE timekeeping_timer SET state = 'fired', fired = %s, "
                        "late_by = %s - owed WHERE id = ANY(%s)", (NOW, NOW, ids))
                    with conn.cursor() as cursor:
                        cursor.executemany(
                            "INSERT INTO timekeeping_record (id, kind, instant, brand_id, subject, "
                            "job, timer, data) VALUES (%s, 'timer.fired', %s, %s, '', '', %s, %s)",
                            [(new_id("rec"), NOW, brand, timer_id, '{"kind": "delay"}')
                             for timer_id in ids],
                        )
                    fired += len(ids)
    return fired / (time.perf_counter() - started)


def tick_processes(count: int) -> float:
    """Fire what is owed with `count` `manage.py tick` processes started together."""
    from timekeeping.models import TickRun

    env = {**os.environ}
    processes = [
        subprocess.Popen([sys.executable, "manage.py", "tick", "--budget", "600"], cwd=ROOT,
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(count)
    ]
    for process in processes:
        out, err = process.communicate()
        if process.returncode:
            raise SystemExit(f"tick failed: {err}")
    runs = list(TickRun.objects.all())
    fired = sum(run.fired for run in runs)
    span = max(run.finished for run in runs) - min(run.started for run in runs)
    return fired / span.total_seconds()


def empty_tick_median(repeats: int) -> float:
    from timekeeping.tick import phases

    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = phases.run_once(now=NOW)
        times.append(time.perf_counter() - started)
        assert result.total("fired") == 0, "the empty tick found something owed"
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timers", type=int, default=1_000_000)
    parser.add_argument("--owed", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=31)
    args = parser.parse_args()
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith(("postgres://", "postgresql://")):
        raise SystemExit("DATABASE_URL: give a PostgreSQL URL, e.g. "
                         "postgres://postgres@127.0.0.1:5432/postgres")
    name = f"keeping_time_bench_{os.getpid()}"
    with admin_connect(base) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        setup_django(scratch_url(base, name))
        began = time.perf_counter()
        brands = fill(args.timers, args.owed)
        print(f"filled {args.timers} timers in {time.perf_counter() - began:.1f}s", flush=True)
        floor_rate = floor(brands)
        print(f"floor: {floor_rate:.0f}/s", flush=True)
        reset_fired()
        one = tick_processes(1)
        print(f"one tick process: {one:.0f}/s", flush=True)
        reset_fired()
        two = tick_processes(2)
        print(f"two tick processes: {two:.0f}/s", flush=True)
        big = empty_tick_median(args.repeats)
        print(f"empty tick, {args.timers} armed: {big * 1000:.2f} ms", flush=True)
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE timekeeping_timer, timekeeping_record, timekeeping_tickrun, "
                           "timekeeping_brand CASCADE")
        fill(args.timers // 1000, args.owed // 1000)
        tick_processes(1)
        small = empty_tick_median(args.repeats)
        print(f"empty tick, {args.timers // 1000} armed: {small * 1000:.2f} ms", flush=True)
        connection.close()
    finally:
        with admin_connect(base) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    print(f"tick_per_s={one:.0f} tick2_per_s={two:.0f} floor_per_s={floor_rate:.0f} "
          f"ratio={one / floor_rate:.2f} empty_ratio={big / small:.2f}")


if __name__ == "__main__":
    main()
