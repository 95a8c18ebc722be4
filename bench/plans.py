"""The plan PostgreSQL keeps for each prepared read keyed by a job or an owner (issue 32).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/plans.py \
        [--clients 300] [--small 40]

A prepared statement is planned for its values a few times a connection, then PostgreSQL may
keep one generic plan, made without the values: it estimates `brand_id = $1` from the number
of brands, not from how many rows the brand has. A read whose generic plan scans a brand's
index is fast on a small brand and slow on a large one, so a read keyed by a job or an owner is
prepared (`compiled.Read(prepared=True)`) only when its generic plan starts from the job's or
the owner's own index.

On a scratch database with one practice of `--clients` clients on the real clock, one as
large on a test clock, and `--small` practices of two clients (`bench/practice.py`'s, every
return ordered, statistics taken), each read is planned generically (`plan_cache_mode =
force_generic_plan`) and run for a job of the large practice, a small one and the test clock.
Prints the indexes each plan scans and the rows each gave. Exits non-zero if a prepared read's
plan scans an index of a brand.

What it found (6 December 2026): a job's dates, read with `brand_id` asked of the date (or of
its clock), kept a plan that scanned the brand's 1,500 to 1,800 dates (or clocks) beside the
job's five; with the brand asked of the job, found by its id, the plan starts from the job.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.practice import ORDERED, analyze, clients_of, order_all, practice  # noqa: E402
from bench.tick import postgres_base, scratch_database, setup_django  # noqa: E402

# What a plan's line scans: an index (a bitmap's, or one read in order), or a table read whole.
SCANS = re.compile(r"(?:Bitmap Index Scan on|Scan using|(Seq) Scan on) (\S+).*actual rows=(\d+)")


def reads():
    """(name, read, prepared, the values for a job and one of its timers)."""
    from timekeeping.clocks.steps import ENDING, KEEPABLE, MOVABLE
    from timekeeping.jobs import asks, deadlines, tasks
    from timekeeping.jobs.lifecycle import STARTED
    from timekeeping.timers.arming import OWNERS_TIMERS

    def by_job(job, _timer):
        return {"brand": job.brand_id, "job": job.pk}

    def of_job(job, _timer):
        return {"job": job.pk}

    def by_owner(job, timer):
        return {"brand": job.brand_id, "test_clock": job.test_clock_id, "owner": job.pk,
                "keys": [timer.key, f"{timer.key}:another"]}

    return [("deadlines that follow a date", deadlines.FOLLOWING, by_job),
            ("steps started", STARTED, by_job),
            ("an owner's timers", OWNERS_TIMERS, by_owner),
            ("dates a step may keep", KEEPABLE, by_job),
            ("dates a step may move", MOVABLE, by_job),
            ("a job's open dates as it ends", ENDING, by_job),
            ("a job's open deadlines as it ends", deadlines.OPEN_OF_JOB, of_job),
            ("a job's open asks as it ends", asks.OPEN_OF_JOB, of_job),
            ("a job's open tasks as it ends", tasks.OPEN_OF_JOB, of_job)]


def generic_plan(read, values: dict) -> list[str]:
    """EXPLAIN ANALYZE of the read's statement, prepared and planned without its values."""
    from django.db import connection, transaction

    with transaction.atomic():
        shape = read.shape(values)
    params = shape.params(values)
    numbered = iter(range(1, len(params) + 1))
    sql = re.sub(r"%s", lambda _: f"${next(numbered)}", shape.sql)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor.execute(f"PREPARE generic AS {sql}")
        cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE generic("
                       f"{', '.join(['%s'] * len(params))})", params)
        plan = [row[0] for row in cursor.fetchall()]
        cursor.execute("DEALLOCATE generic")
    return plan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--clients", type=int, default=300)
    parser.add_argument("--small", type=int, default=40)
    args = parser.parse_args()
    with scratch_database(postgres_base(), "bench_plans") as url:
        setup_django(url)
        from timekeeping.models import Job, Timer

        large, _ = practice("large", args.clients)
        order_all(clients_of(large), ORDERED)
        walked, _ = practice("walked", args.clients, test_clock_at=ORDERED)
        order_all(clients_of(walked), None)
        for n in range(args.small):
            small, _ = practice(f"small{n}", 2)
            order_all(clients_of(small), ORDERED)
        analyze()
        wrong = 0
        for slug in ("large", "small0", "walked"):
            job = Job.objects.filter(brand__slug=slug).order_by("pk").first()
            timer = Timer.objects.filter(owner_id=job.pk).order_by("pk").first()
            for name, read, values in reads():
                scans = [found.groups() for line in generic_plan(read, values(job, timer))
                         if (found := SCANS.search(line))]
                wrong += read.prepared and any(not seq and "brand" in index
                                               for seq, index, _ in scans)
                shown = ", ".join(f"{index}{' (whole)' if seq else ''}: {rows}"
                                  for seq, index, rows in scans)
                kept = "prepared" if read.prepared else "planned each time"
                print(f"{slug:7} {name:30} {kept:18} {shown}")
        print(f"prepared reads whose kept plan scans a brand's index: {wrong}")
        sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
