"""How long the timed-move job takes on a big table against a small one, and how fast it moves.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/moves.py

Creates a scratch database beside the one DATABASE_URL names, loads a manifest with an
`orders` table whose placed rows are cancelled at their pickup time, and measures:

- big_ms: one minute's job over 1,000,000 rows of which 500 are due (median of 5 runs; the
  moved rows are put back between runs);
- small_ms: the same over 1,000 rows of which 500 are due;
- moved_per_s: rows moved per second with the 500 cap lifted, over 20,000 due rows;
- across `--connections` connections (100 by default) in one tick (`tick.phases.run_once`, its 50 s
  budget): with one due row each, the tick's time per connection (the job's fixed cost); with
  `--due-each` due rows each (50), the rows moved, the connections left for the next tick,
  and the rows moved per second.

Ends with one line: big_ms=… small_ms=… ratio=… moved_per_s=… connections=… fixed_ms=…
tick_s=… tick_moved=… tick_unreached=… tick_moved_per_s=…  and drops the scratch database.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from tick import admin_connect, scratch_url, setup_django  # noqa: E402

NOW = datetime.now(UTC).replace(microsecond=0)  # noqa: DTZ005 - a benchmark's own setup
MANIFEST = {"tables": {"orders": {
    "columns": [{"ref": "customer", "type": "text", "maxLength": 40},
                {"ref": "pickup_at", "type": "timestamptz"},
                {"ref": "cancel_code", "type": "text", "maxLength": 20, "nullable": True}],
    "states": {"column": "status", "initial": "placed",
               "moves": {"placed": ["confirmed", "cancelled"]},
               "timed": [{"from": "placed", "to": "cancelled", "at": {"column": "pickup_at"},
                          "set": {"cancel_code": "late"}}]}}}}


def venue(slug: str):
    from timekeeping import manifests
    from timekeeping.models import Brand, Connection
    from timekeeping.moves.rows import Venue

    brand = Brand.objects.create(name=slug, slug=slug)
    manifests.load(brand, MANIFEST)
    return Venue.of(Connection.objects.select_related("brand").get(brand=brand))


def fill(place, rows: int, due: int) -> None:
    """COPY rows into the venue's orders: `due` owed before now, the rest over a year ahead."""
    from django.db import connection

    table = place.model("orders")._meta.db_table
    buffer = io.StringIO()
    year = 365 * 86400
    for n in range(rows):
        at = NOW - timedelta(minutes=1 + n) if n < due else \
            NOW + timedelta(seconds=60 + (n * 7919) % year)
        buffer.write(f"c{n}\t{at.isoformat()}\t\\N\tplaced\n")
    buffer.seek(0)
    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY {table} (customer, pickup_at, cancel_code, status) "
                                "FROM STDIN") as copy:
            copy.write(buffer.getvalue())
        cursor.execute(f"ANALYZE {table}")


def put_back(place) -> None:
    from timekeeping.models import RowAudit

    place.model("orders").objects.filter(status="cancelled").update(status="placed",
                                                                    cancel_code=None)
    RowAudit.objects.all().delete()


def job_ms(place, repeats: int, cap: int = 500) -> float:
    from timekeeping.models import Connection
    from timekeeping.moves import job

    times = []
    for n in range(repeats):
        link = Connection.objects.select_related("brand").get(pk=place.link.pk)
        started = time.perf_counter()
        minute = job.run_connection(link, now=NOW + timedelta(seconds=n), holder="bench", cap=cap)
        times.append((time.perf_counter() - started) * 1000)
        assert minute.ran and minute.moved, "the job moved nothing"
        put_back(place)
    return statistics.median(times)


def across_connections(count: int, due_each: int) -> dict:
    """`count` venues, each with one due row, then `due_each` due rows: one tick each time."""
    from timekeeping.models import Connection
    from timekeeping.tick import phases

    Connection.objects.update(paused=True)  # the venues measured before sit this out
    places = [venue(f"many-{n}") for n in range(count)]
    figures = {}
    for label, due in (("fixed", 1), ("tick", due_each)):
        for place in places:
            place.model("orders").objects.all().delete()
            fill(place, due, due)
        started = time.perf_counter()
        result = phases.run_once(now=NOW + timedelta(minutes=len(figures)), sweep=False)
        seconds = time.perf_counter() - started
        moved = result.rows_moved
        figures[label] = (seconds, moved, len(result.moves_unreached))
    fixed_s, _, _ = figures["fixed"]
    tick_s, tick_moved, unreached = figures["tick"]
    return {"connections": count, "fixed_ms": fixed_s * 1000 / count, "tick_s": tick_s,
            "tick_moved": tick_moved, "tick_unreached": unreached,
            "tick_moved_per_s": tick_moved / tick_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--due-each", type=int, default=50)
    args = parser.parse_args()
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith(("postgres://", "postgresql://")):
        raise SystemExit("DATABASE_URL: give a PostgreSQL URL")
    name = f"keeping_time_moves_{os.getpid()}"
    with admin_connect(base) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        setup_django(scratch_url(base, name))
        big, small, fast = venue("big"), venue("small"), venue("fast")
        began = time.perf_counter()
        fill(big, args.rows, 500)
        fill(small, 1000, 500)
        fill(fast, 20_000, 20_000)
        print(f"filled in {time.perf_counter() - began:.1f}s", flush=True)
        big_ms = job_ms(big, args.repeats)
        small_ms = job_ms(small, args.repeats)
        from timekeeping.models import Connection
        from timekeeping.moves import job

        link = Connection.objects.select_related("brand").get(pk=fast.link.pk)
        started = time.perf_counter()
        minute = job.run_connection(link, now=NOW, holder="bench", cap=1_000_000)
        moved_per_s = len(minute.moved) / (time.perf_counter() - started)
        many = across_connections(args.connections, args.due_each)
        from django.db import connection

        connection.close()
    finally:
        with admin_connect(base) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    print(f"big_ms={big_ms:.1f} small_ms={small_ms:.1f} ratio={big_ms / small_ms:.2f} "
          f"moved_per_s={moved_per_s:.0f} connections={many['connections']} "
          f"fixed_ms={many['fixed_ms']:.1f} tick_s={many['tick_s']:.2f} "
          f"tick_moved={many['tick_moved']} tick_unreached={many['tick_unreached']} "
          f"tick_moved_per_s={many['tick_moved_per_s']:.0f}")


if __name__ == "__main__":
    main()
