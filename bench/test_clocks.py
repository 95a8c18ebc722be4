"""A year's walk of a test clock, against the same walk in the code of another revision.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python \
        bench/test_clocks.py [--subjects 1000] [--baseline 3ebabab --baseline-days 7]

The brand: the tax practice's services (`timekeeping/manifests/examples/tax.json`), the venue's
tables (`venue.json`) and a one-minute schedule (the demo's heartbeat). On one test clock,
`--subjects` taxpayers join the Tax Plan on its first day, so the year mints each one's
returns and estimates, with their dates, rungs and notices. Then the clock is advanced a year
(`test_clocks.advance`: asked for and walked in one process, slice after slice), twice:

- `heartbeat`: the brand with the schedule alone (no subjects), a year;
- `full`: with the subjects, a year.

Each run is a process of its own on a scratch database, timed from the advance to its end:
wall seconds, timers fired, timers fired per second, the walk's ticks (instants walked) and
its schedule runs. With `--baseline REV`, the same runs in the code of git revision REV (a
worktree made for it), walked `--baseline-days` days only, since the old walk ticks at every
due time of the schedule (a year of it takes over an hour): its figures per day walked are
printed, and the year they come to at that rate.

Ends with one line: heartbeat_s=… full_s=… full_fired=… full_per_s=… [baseline_…].
Drops its scratch databases at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START = datetime(2027, 1, 20, 14, tzinfo=UTC)  # 09:00 in New York, the plan's first day


def worker(args) -> None:
    """One measured run, in the tree `args.root`, printing one JSON line."""
    sys.path.insert(0, args.root)
    os.chdir(args.root)
    os.environ["DATABASE_URL"] = args.url
    os.environ["DEBUG"] = "false"
    os.environ.setdefault("SECRET_KEY", "bench-only-secret-key-not-for-any-deployment-0123456")
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from timekeeping.demo import TAX_INPUT, TAX_MANIFEST, VENUE_MANIFEST
    from timekeeping.manifests import load
    from timekeeping.models import Brand, ScheduleRun, Subject, TestClock, Timer
    from timekeeping.recurring import plans
    from timekeeping.tick import test_clocks

    document = json.loads(Path(TAX_MANIFEST).read_text())
    document["tables"] = json.loads(Path(VENUE_MANIFEST).read_text())["tables"]
    document["schedules"] = {"demo": {"heartbeat": {"every": "1m", "run": "heartbeat"}}}
    brand = Brand.objects.create(name="Bench practice", slug="bench-practice")
    load(brand, document)
    test_clock = TestClock.objects.create(brand=brand, name="a year", frozen_time=START)
    began = time.monotonic()
    for n in range(args.subjects):
        subject = Subject.objects.create(
            brand=brand, test_clock=test_clock, kind="taxpayer", key=f"{n:06d}",
            name=f"Taxpayer {n}", zone="America/New_York", input=TAX_INPUT)
        plans.subscribe(subject=subject, service="tax-plan", anchor=START.date(), by="bench")
    setup_s = time.monotonic() - began
    from django.db import connection

    with connection.cursor() as cursor:
        # Statistics as a database in use has them: the planner picks each handler's index,
        # not a scan of the brand's timers it thought were few.
        cursor.execute("ANALYZE")
    began = time.monotonic()
    ticked = test_clocks.advance(test_clock, to=START + timedelta(days=args.days))
    wall = time.monotonic() - began
    fired = Timer.objects.filter(test_clock=test_clock, state="fired").count()
    print(json.dumps({
        "setup_s": round(setup_s, 1), "wall_s": round(wall, 2), "fired": fired,
        "run_fired": ticked.run.fired, "passes": ticked.run.passes,
        "schedule_runs": ScheduleRun.objects.filter(schedule__test_clock=test_clock).count(),
        "armed_left": Timer.objects.filter(test_clock=test_clock, state="armed").count(),
    }), flush=True)


def measure(root: Path, base: str, name: str, *, subjects: int, days: int) -> dict:
    sys.path.insert(0, str(ROOT))
    from bench.tick import scratch_database

    with scratch_database(base, name) as url:
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--worker", "--root", str(root),
             "--url", url, "--subjects", str(subjects), "--days", str(days)],
            capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{name} failed:\n{done.stderr[-3000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures["per_s"] = round(figures["fired"] / figures["wall_s"]) if figures["wall_s"] else 0
    print(f"{name}: {figures}", flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subjects", type=int, default=1000)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--baseline", help="a git revision to measure the same walk in")
    parser.add_argument("--baseline-days", type=int, default=7)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    sys.path.insert(0, str(ROOT))
    from bench.tick import postgres_base

    base = postgres_base()
    heartbeat = measure(ROOT, base, "bench_walk_heartbeat", subjects=0, days=args.days)
    full = measure(ROOT, base, "bench_walk_full", subjects=args.subjects, days=args.days)
    line = (f"heartbeat_s={heartbeat['wall_s']} heartbeat_runs={heartbeat['schedule_runs']} "
            f"full_s={full['wall_s']} full_fired={full['fired']} full_per_s={full['per_s']} "
            f"full_runs={full['schedule_runs']}")
    if args.baseline:
        with tempfile.TemporaryDirectory() as where:
            tree = Path(where) / "tree"
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree),
                            args.baseline], check=True, capture_output=True)
            try:
                days = args.baseline_days
                old_beat = measure(tree, base, "bench_walk_old_heartbeat", subjects=0,
                                   days=days)
                old_full = measure(tree, base, "bench_walk_old_full", subjects=args.subjects,
                                   days=days)
                new_days = measure(ROOT, base, "bench_walk_new_full_days",
                                   subjects=args.subjects, days=days)
            finally:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(tree)], check=False, capture_output=True)
        year = args.days / days
        line += (f" baseline={args.baseline} baseline_days={days} "
                 f"old_heartbeat_s={old_beat['wall_s']} old_full_s={old_full['wall_s']} "
                 f"new_full_s={new_days['wall_s']} "
                 f"old_heartbeat_year_s={old_beat['wall_s'] * year:.0f} "
                 f"old_full_year_s={old_full['wall_s'] * year:.0f} "
                 f"old_full_per_s={old_full['per_s']} new_days_per_s={new_days['per_s']}")
    print(line)


if __name__ == "__main__":
    main()
