"""What the tick costs per tick, per brand clock and per fired timer, split between the tick
process and the database: the default costs of bench/simulate.py (issue 14, the simulation).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/costs.py

The PostgreSQL server must run on this machine: the database's share is read as the CPU of
the tick's own backend (utime + stime in /proc/<pg_backend_pid()>/stat), the tick process's as
its own CPU (time.process_time), and both beside the wall clock. Each part is measured by
calling the tick's functions in a process of its own on a scratch database of its own
(Django is set up once per process):

- tick: the median of 5 ticks that find nothing owed (run_once, after one that keeps house),
  plus the start-up of `manage.py tick` (a process that ticks the same empty database, its
  wall time and CPU by getrusage, less the empty tick in it; the database's side of start-up,
  a connection, is taken as nothing);
- clock and timer: 1,000 brands with 10 owed timers each and 10 brands with 2,000 each
  (bench/brands.py's fill), one run_once each; the empty tick taken off both, the two
  equations give the cost of a brand clock and of a timer;
- skip: the 1,000 clocks ticked while another live process holds every lease (run_once, the
  empty tick taken off): what a process pays for a clock it finds leased;
- retick: the 1,000 clocks ticked again one by one (tick_clock) once nothing is owed: what a
  process pays for a clock another process ticked since it listed it (an empty run).

Wall time is the tick process's time (its CPU and its waits on the database); the database's
other processes (WAL writer, checkpointer, autovacuum) are not counted.

Ends with one line of milliseconds, the options bench/simulate.py takes: per_tick_ms=…
per_tick_db_ms=… per_clock_ms=… per_clock_db_ms=… per_timer_ms=… per_timer_db_ms=…
per_visit_ms=… per_visit_db_ms=… (a visit is a skip), then retick_ms=… retick_db_ms=… and the
tick process's CPU of each (…_cpu_ms=…). Drops its databases.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.brands import fill  # noqa: E402
from bench.processes import child_env  # noqa: E402
from bench.tick import admin_connect, postgres_base, scratch_database, setup_django  # noqa: E402

PREFIX = "kt_bench_cost"
BUDGET = timedelta(hours=1)  # not the default 50 s: a busy machine must not leave clocks unticked
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Cost:
    """Seconds of wall clock, of the tick process's CPU and of its database backend's CPU."""

    wall: float
    cpu: float
    db: float

    def __sub__(self, other: Cost) -> Cost:
        return Cost(self.wall - other.wall, self.cpu - other.cpu, self.db - other.db)

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.wall + other.wall, self.cpu + other.cpu, self.db + other.db)

    def scaled(self, factor: float) -> Cost:
        return Cost(self.wall * factor, self.cpu * factor, self.db * factor)


def backend_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS_PER_SECOND


class Meter:
    """Reads the three clocks around a piece of work done on Django's connection."""

    def __init__(self) -> None:
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            self.pid = cursor.fetchone()[0]
        if not Path(f"/proc/{self.pid}").exists():
            raise SystemExit("the database's backend is not a process on this machine: "
                             "bench/costs.py needs the PostgreSQL server here")
        self.spent: Cost | None = None

    def now(self) -> Cost:
        return Cost(time.perf_counter(), time.process_time(), backend_cpu(self.pid))

    @contextmanager
    def measure(self) -> Iterator[None]:
        before = self.now()
        yield
        self.spent = self.now() - before


def setup(url: str) -> None:
    os.environ.update({key: child_env(url)[key] for key in ("SECRET_KEY", "DEBUG")})
    setup_django(url)


def vacuum() -> None:
    with admin_connect(os.environ["DATABASE_URL"]) as admin:
        admin.execute("VACUUM ANALYZE")


def empty_ticks(meter: Meter, repeats: int = 5) -> Cost:
    """The median empty tick, after one that keeps house (hourly) and warms the caches."""
    from timekeeping.tick import phases

    phases.run_once()
    spent = []
    for _ in range(repeats):
        with meter.measure():
            phases.run_once()
        spent.append(meter.spent)
    return Cost(*(statistics.median(getattr(cost, name) for cost in spent)
                  for name in ("wall", "cpu", "db")))


def startup(empty: Cost) -> Cost:
    """A whole `manage.py tick` on the empty database, less the empty tick inside it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "manage.py", "tick"], cwd=ROOT, capture_output=True,
                          text=True, env=child_env(os.environ["DATABASE_URL"]))
    wall = time.perf_counter() - started
    if done.returncode:
        raise SystemExit(done.stderr[-4000:])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return Cost(wall - empty.wall, cpu - empty.cpu, 0.0)


def fired_by_run_once(meter: Meter, expected: int) -> Cost:
    from timekeeping.tick import phases

    with meter.measure():
        result = phases.run_once(budget=BUDGET)
    if result.total("fired") != expected:
        raise SystemExit(f"expected {expected} fired, the tick fired {result.total('fired')}")
    return meter.spent


def skipped(meter: Meter, clocks: int) -> Cost:
    """Every clock leased by a live process elsewhere: the tick skips them all."""
    from django.utils import timezone

    from timekeeping.models import Brand
    from timekeeping.tick import phases

    Brand.objects.update(lease_holder="elsewhere:1:bench",
                         lease_until=timezone.now() + timedelta(hours=1))
    with meter.measure():
        result = phases.run_once(budget=BUDGET)
    Brand.objects.update(lease_holder="", lease_until=None)
    if len(result.skipped) != clocks:
        raise SystemExit(f"expected {clocks} skipped, the tick skipped {len(result.skipped)}")
    return meter.spent


def reticked(meter: Meter) -> Cost:
    """Each clock ticked again, one by one, with nothing owed on it."""
    from django.utils import timezone

    from timekeeping.models import Brand
    from timekeeping.tick import clock
    from timekeeping.timers import leases

    brands = list(Brand.objects.select_related("owner"))
    instant, deadline = timezone.now(), time.monotonic() + 600
    with meter.measure():
        for brand in brands:
            clock.tick_clock(brand, instant=instant, deadline=deadline,
                             holder=leases.holder_name())
    return meter.spent


def child(brands: int, each: int, visits: bool) -> dict[str, Cost]:
    """In a fresh process on its own database: the empty tick, then `brands` × `each`."""
    setup(os.environ["DATABASE_URL"])
    meter = Meter()
    parts = {"empty": empty_ticks(meter)}
    parts["startup"] = startup(parts["empty"])
    fill(brands, each)
    vacuum()
    meter = Meter()  # VACUUM left Django's connection as it was; read its pid again anyway
    if visits:
        parts["skip"] = skipped(meter, brands)
    parts["fire"] = fired_by_run_once(meter, brands * each)
    if visits:
        parts["retick"] = reticked(meter)
    return parts


def measure(base: str, label: str, brands: int, each: int, visits: bool) -> dict[str, Cost]:
    code = (f"import bench.costs as c, json; parts = c.child({brands}, {each}, {visits}); "
            "print('RESULT', json.dumps({k: [v.wall, v.cpu, v.db] for k, v in parts.items()}))")
    with scratch_database(base, f"{PREFIX}_{label}_{os.getpid()}") as url:
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                              text=True, env={**os.environ, "DATABASE_URL": url})
    if done.returncode:
        raise SystemExit(done.stderr[-4000:])
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT"))
    return {key: Cost(*value) for key, value in json.loads(line.split(" ", 1)[1]).items()}


def solve(many: Cost, few: Cost, clocks: tuple[int, int], timers: tuple[int, int]
          ) -> tuple[Cost, Cost]:
    """A clock's cost and a timer's from two runs (Cramer's rule on each of the three
    clocks): run = clocks × per clock + timers × per timer."""
    determinant = clocks[0] * timers[1] - clocks[1] * timers[0]

    def one(name: str) -> tuple[float, float]:
        first, second = getattr(many, name), getattr(few, name)
        return ((first * timers[1] - second * timers[0]) / determinant,
                (second * clocks[0] - first * clocks[1]) / determinant)

    walls, cpus, dbs = one("wall"), one("cpu"), one("db")
    return Cost(walls[0], cpus[0], dbs[0]), Cost(walls[1], cpus[1], dbs[1])


def figures(name: str, cost: Cost) -> list[str]:
    return [f"{name}_ms={cost.wall * 1000:.3f}", f"{name}_db_ms={cost.db * 1000:.3f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brands", type=int, default=1000, help="brands of the many-clocks run")
    parser.add_argument("--each", type=int, default=10, help="owed timers on each of those")
    parser.add_argument("--few", type=int, default=10, help="brands of the few-clocks run")
    parser.add_argument("--few-each", type=int, default=2000, help="owed timers on each of those")
    args = parser.parse_args()
    base = postgres_base()
    many = measure(base, "many", args.brands, args.each, visits=True)
    few = measure(base, "few", args.few, args.few_each, visits=False)
    empty = Cost(*(statistics.mean(getattr(run["empty"], name) for run in (many, few))
                   for name in ("wall", "cpu", "db")))
    clock, timer = solve(many["fire"] - empty, few["fire"] - empty,
                         (args.brands, args.few),
                         (args.brands * args.each, args.few * args.few_each))
    per = {
        "per_tick": empty + many["startup"],
        "per_clock": clock,
        "per_timer": timer,
        "per_visit": (many["skip"] - empty).scaled(1 / args.brands),
        "retick": many["retick"].scaled(1 / args.brands),
    }
    for name, cost in {**{f"run {k}": v for k, v in many.items()},
                       **{f"run few {k}": v for k, v in few.items()}, **per}.items():
        print(f"{name}: wall {cost.wall * 1000:.2f} ms, tick process CPU {cost.cpu * 1000:.2f} ms, "
              f"database CPU {cost.db * 1000:.2f} ms", flush=True)
    line = [figure for name, cost in per.items() for figure in figures(name, cost)]
    line += [f"{name}_cpu_ms={cost.cpu * 1000:.3f}" for name, cost in per.items()]
    print(" ".join(line))


if __name__ == "__main__":
    main()
