"""The tick's memory by backlog (issue 16, DESIGN decision 4): one `manage.py tick` process's
peak resident memory, as the kernel counts it (VmHWM, which the process writes as it exits).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/memory.py

On a scratch database with 10 brands, each measurement starts one process, as cron does (DEBUG
off), after the owed timers are copied in:

- empty: a tick that finds nothing owed;
- fire_1k, fire_100k, fire_500k: a tick firing that many owed no-op delays, with a budget long
  enough (900 s) to fire them all, as a tick after an outage does;
- trace_100k: the 100,000 again with `--trace`, its output read and thrown away;
- walk_year: `manage.py tick --test-clock … --to …` walking a test clock a year, with 100,000
  no-op delays on it at 10,000 instants (`--walk-timers`);
- brands: a tick firing one owed no-op delay on each of 20,000 more brands (`--brands`).

Each run's firing rate is printed beside its memory. Ends with one line: empty_mb=…
fire_1k_mb=… fire_100k_mb=… fire_500k_mb=… trace_100k_mb=… walk_year_mb=… brands_mb=…
ratio=…, where
ratio is the 500,000's peak over the empty tick's. Drops the scratch database at the end.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.tick import (  # noqa: E402
    BRANDS,
    NOW,
    copy_timers,
    postgres_base,
    scratch_database,
    setup_django,
)

YEAR = timedelta(days=365)


# `manage.py` run so that, as it exits, it writes its own peak resident memory (VmHWM, the
# high-water mark of the memory of the program exec'd, in kB) to standard error. Not the
# child's `ru_maxrss` from `wait4`: Linux starts a child's count at its parent's size (the
# memory it was forked from), and this benchmark's own process holds the brands it made.
PEAK = """
import atexit, runpy, sys

def peak():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                sys.stderr.write(f"peak_kb={line.split()[1]}\\n")

atexit.register(peak)
sys.argv = ["manage.py", *sys.argv[1:]]
runpy.run_path("manage.py", run_name="__main__")
"""


def peak_mb(args: list[str]) -> tuple[float, float, str]:
    """Run `manage.py` with `args` in a process of its own: its peak resident memory in MB,
    its wall time in seconds, and what it printed."""
    began = time.perf_counter()
    with tempfile.TemporaryFile("w+") as errors:
        process = subprocess.Popen([sys.executable, "-c", PEAK, *args], cwd=ROOT,
                                   env={**os.environ}, stdout=subprocess.PIPE, stderr=errors,
                                   text=True)
        printed = 0
        last = ""
        for line in process.stdout:  # read as it is written, and kept only in part
            printed += 1
            last = line if not line.startswith("  ") else last
        code = process.wait()
        wall = time.perf_counter() - began
        errors.seek(0)
        peaks = [int(line.split("=")[1]) for line in errors if line.startswith("peak_kb=")]
    if code or not peaks:
        raise SystemExit(f"manage.py {' '.join(args)} failed ({printed} lines; last: {last})")
    return peaks[-1] / 1024, wall, f"{printed} line(s), last: {last.strip()[:160]}"


def reset() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE timekeeping_timer, timekeeping_record, timekeeping_tickrun, "
                       "timekeeping_walkline, timekeeping_walk CASCADE")
        cursor.execute("VACUUM ANALYZE timekeeping_timer")


def fired() -> int:
    from django.db.models import Sum

    from timekeeping.models import TickRun

    return TickRun.objects.aggregate(n=Sum("fired"))["n"] or 0


def fire(brands: list[str], owed: int, *, trace: bool = False) -> tuple[float, float]:
    """A tick firing `owed` owed timers: its peak MB and its firing rate."""
    reset()
    copy_timers((brands[n % BRANDS], NOW - timedelta(seconds=(n * 7919) % 86400 + 1))
                for n in range(owed))
    args = ["tick", "--budget", "900", *(["--trace"] if trace else [])]
    mb, wall, said = peak_mb(args)
    if fired() != owed:
        raise SystemExit(f"expected {owed} fired, the tick fired {fired()}: {said}")
    rate = owed / wall if owed else 0
    print(f"{'trace' if trace else 'fire'} {owed:,}: {mb:.1f} MB, {wall:.1f} s "
          f"({rate:,.0f} timers/s with start-up) · {said}", flush=True)
    return mb, rate


def walk_year(brand: str, timers: int, instants: int) -> float:
    """A test clock walked a year by the command, `timers` on it at `instants` instants."""
    from timekeeping.models import TestClock, Walk

    reset()
    TestClock.objects.all().delete()
    test_clock = TestClock.objects.create(brand_id=brand, name="a year", frozen_time=NOW)
    step = YEAR / instants
    copy_timers(((brand, NOW + step * (1 + n % instants)) for n in range(timers)),
                test_clock=test_clock.pk)
    to = NOW + YEAR
    mb, wall, said = peak_mb(["tick", "--test-clock", test_clock.pk,
                              "--to", to.strftime("%Y-%m-%dT%H:%M:%SZ")])
    walk = Walk.objects.get(test_clock=test_clock)
    if walk.state != Walk.State.DONE or walk.fired != timers:
        raise SystemExit(f"the walk ended {walk.state} with {walk.fired} fired: {said}")
    print(f"walk a year, {timers:,} timers at {instants:,} instants: {mb:.1f} MB, "
          f"{wall:.1f} s · {said}", flush=True)
    return mb


def many_brands(count: int) -> float:
    """A tick firing one owed timer on each of `count` new brands."""
    from timekeeping.models import Brand

    reset()
    made = Brand.objects.bulk_create([Brand(name=f"Many {n}", slug=f"many-{n}")
                                      for n in range(count)])
    copy_timers((brand.pk, NOW - timedelta(seconds=1 + n % 600))
                for n, brand in enumerate(made))
    mb, wall, said = peak_mb(["tick", "--budget", "900"])
    if fired() != count:
        raise SystemExit(f"expected {count} fired, the tick fired {fired()}: {said}")
    print(f"{count:,} brands, one timer each: {mb:.1f} MB, {wall:.1f} s · {said}", flush=True)
    return mb


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--walk-timers", type=int, default=100_000)
    parser.add_argument("--walk-instants", type=int, default=10_000)
    parser.add_argument("--brands", type=int, default=20_000)
    parser.add_argument("--largest", type=int, default=500_000,
                        help="the largest backlog fired (default 500,000)")
    args = parser.parse_args()
    base = postgres_base()
    with scratch_database(base, f"keeping_time_bench_memory_{os.getpid()}") as url:
        setup_django(url)
        from django.db import connection

        from timekeeping.models import Brand

        brands = [Brand.objects.create(name=f"Bench {n}", slug=f"bench-{n}").pk
                  for n in range(BRANDS)]
        empty, _ = fire(brands, 0)
        small, _ = fire(brands, 1_000)
        middle, _ = fire(brands, 100_000)
        largest, rate = fire(brands, args.largest)
        traced, _ = fire(brands, 100_000, trace=True)
        walked = walk_year(brands[0], args.walk_timers, args.walk_instants)
        spread = many_brands(args.brands)
        connection.close()
    print(f"empty_mb={empty:.1f} fire_1k_mb={small:.1f} fire_100k_mb={middle:.1f} "
          f"fire_500k_mb={largest:.1f} trace_100k_mb={traced:.1f} walk_year_mb={walked:.1f} "
          f"brands_mb={spread:.1f} "
          f"ratio={largest / empty:.2f} fire_500k_per_s={rate:.0f} largest={args.largest}")


if __name__ == "__main__":
    main()
