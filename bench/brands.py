"""What the tick's per-clock costs come to with many brands (issue 14, "Many brands").

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/brands.py

The same 100,000 owed timers (a no-op operation), spread two ways in two scratch databases:
100 brands with 1,000 each, and 10,000 brands with 10 each. Each is fired by one
`manage.py tick` process, timed from its start to its end (process start-up included in both),
and the same timers again with the raw-SQL floor of bench/tick.py, brand by brand.

Ends with one line: few_s=… many_s=… ratio=… (target ≤ 2) floor_few_s=… floor_many_s=…
floor_ratio=… Drops the scratch databases.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.tick import (  # noqa: E402
    NOW,
    admin_connect,
    floor,
    postgres_base,
    reset_fired,
    scratch_database,
)


def fill(brands: int, each: int) -> list[str]:
    """`brands` brands (one owner), `each` owed timers on each, COPYed in."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from timekeeping.basics.public_ids import new_id
    from timekeeping.models import Brand

    owner = get_user_model().objects.create_user("bench-owner")
    made = Brand.objects.bulk_create(
        [Brand(name=f"Bench {n}", slug=f"bench-{n}", owner=owner) for n in range(brands)],
        batch_size=5000)
    ids = [brand.pk for brand in made]
    payload = json.dumps({"operation": "timekeeping.noop", "input": {}, "overdue_s": None})
    buffer = io.StringIO()
    for n in range(brands * each):
        brand = ids[n % brands]
        owed = NOW - timedelta(seconds=(n * 7919) % 86400 + 1)
        buffer.write(
            f"{new_id('tmr')}\t{brand}\tk{n:08d}\tdelay\t5\t{owed.isoformat()}\tarmed\t\t"
            f"{brand}\t{owed.isoformat()}\t{payload}\t{NOW.isoformat()}\t\t\t\t0\t\n")
    buffer.seek(0)
    with connection.cursor() as cursor:
        with cursor.connection.cursor().copy(
            "COPY timekeeping_timer (id, brand_id, key, kind, place, owed, state, owner_type, "
            "owner_id, owner_opened, payload, armed_at, bundle, armed_by, ended_by, attempts, "
            "last_error) FROM STDIN") as copy:
            while chunk := buffer.read(1 << 20):
                copy.write(chunk)
        cursor.execute("ANALYZE")
    return ids


def child(brands: int, each: int) -> tuple[float, float, int]:
    """In a fresh process on its own database: fill, one tick process, the floor."""
    os.environ.setdefault("DEBUG", "false")
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-any-deployment-0123456")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    ids = fill(brands, each)
    with admin_connect(os.environ["DATABASE_URL"]) as admin:
        admin.execute("VACUUM ANALYZE")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "manage.py", "tick", "--budget", "3600"], cwd=ROOT,
                          env=dict(os.environ), capture_output=True, text=True)
    took = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(done.stderr[-4000:])
    from timekeeping.models import Timer

    fired = Timer.objects.filter(state="fired").count()
    reset_fired()
    per_s = floor(ids)
    return took, brands * each / per_s, fired


def measure(url: str, brands: int, each: int) -> tuple[float, float, int]:
    code = f"import bench.brands as b; print('RESULT', *b.child({brands}, {each}))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "DATABASE_URL": url})
    if done.returncode:
        raise SystemExit(done.stderr[-4000:])
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT"))
    _, took, floor_s, fired = line.split()
    return float(took), float(floor_s), int(fired)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timers", type=int, default=100_000)
    parser.add_argument("--few", type=int, default=100)
    parser.add_argument("--many", type=int, default=10_000)
    args = parser.parse_args()
    base = postgres_base()
    figures = {}
    for label, brands in (("few", args.few), ("many", args.many)):
        with scratch_database(base, f"keeping_time_brands_{label}_{os.getpid()}") as url:
            figures[label] = measure(url, brands, args.timers // brands)
        took, floor_s, fired = figures[label]
        print(f"{label}: {brands} brands × {args.timers // brands}: tick {took:.1f}s "
              f"({fired} fired), floor {floor_s:.1f}s", flush=True)
    (few, floor_few, _), (many, floor_many, _) = figures["few"], figures["many"]
    print(f"few_s={few:.1f} many_s={many:.1f} ratio={many / few:.2f} "
          f"floor_few_s={floor_few:.1f} floor_many_s={floor_many:.1f} "
          f"floor_ratio={floor_many / floor_few:.2f}")


if __name__ == "__main__":
    main()
