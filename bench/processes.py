"""1, 2 and 4 tick processes at once over the same owed timers, beside the floor's own scaling
(issue 14, "Processes").

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/processes.py

Fills a template database once with 10 brands and 100,000 owed timers (a no-op operation,
bench/brands.py's fill: 10,000 a brand). Then for each count of processes (1, 2, 4), on a fresh
copy of the template each time (CREATE DATABASE … TEMPLATE):

- pN_per_s: N `manage.py tick` processes started together, each a full tick; timed from the
  start of the first process to the end of the last (Python and Django start-up included);
- floor_pN_per_s: N processes of bench/tick.py's raw-SQL floor started together, each walking
  every brand and claiming batches of 1,000 with FOR UPDATE SKIP LOCKED; process i starts at
  brand i × brands / N, as the tick's leases spread its processes over the brands.

After each run it checks that every timer fired exactly once: no timer left armed, 100,000
fired timers, 100,000 timer.fired records, each on a fired timer and none twice. Any other
count, or a process that fails, stops the benchmark with a non-zero exit.

Ends with one line: p1_per_s=… p2_per_s=… p4_per_s=… ratio2=… ratio4=… floor_p1_per_s=…
floor_p2_per_s=… floor_p4_per_s=… floor_ratio2=… floor_ratio4=… Drops its databases.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

from bench.brands import fill  # noqa: E402
from bench.tick import admin_connect, floor, postgres_base, scratch_database, setup_django  # noqa: E402

PREFIX = "kt_bench_proc"


@dataclass
class Run:
    """One measurement: N processes of the tick or of the floor, and what they left."""

    label: str
    processes: int
    seconds: float
    notes: list[str] = field(default_factory=list)


def child_env(url: str) -> dict[str, str]:
    """A tick process's environment, as a deployment's would be (DEBUG off)."""
    return {**os.environ, "DATABASE_URL": url, "DEBUG": "false", "LOG_FORMAT": "json",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "SECRET_KEY": os.environ.get(
                "SECRET_KEY", "bench-only-secret-key-not-for-any-deployment-0123456")}


def fill_template(url: str, brands: int, timers: int) -> None:
    """Migrate and fill the template, then leave no session on it (a copy needs none)."""
    os.environ.setdefault("SECRET_KEY", child_env(url)["SECRET_KEY"])
    os.environ["DEBUG"] = "false"
    setup_django(url)
    fill(brands, timers // brands)
    from django.db import connection

    connection.close()
    with admin_connect(url) as admin:
        admin.execute("VACUUM ANALYZE")


def together(commands: list[list[str]], env: dict[str, str]) -> tuple[float, list[str]]:
    """Start the commands at once; the seconds from the first start to the last end, and
    each one's output. A process that fails stops the benchmark."""
    started = time.perf_counter()
    running = [subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for command in commands]
    outputs = []
    for process in running:
        out, err = process.communicate()
        if process.returncode:
            raise SystemExit(f"{' '.join(commands[0])} exited {process.returncode}:\n"
                             f"{err[-4000:]}")
        outputs.append(out)
    return time.perf_counter() - started, outputs


def ticks(url: str, count: int) -> Run:
    """`count` tick processes at once; what each did, from its JSON summary and its runs."""
    command = [sys.executable, "manage.py", "tick", "--budget", "3600"]
    seconds, outputs = together([command] * count, child_env(url))
    summaries = [json.loads(line) for out in outputs for line in out.splitlines()
                 if line.startswith("{") and '"event": "tick"' in line]
    run = Run("tick", count, seconds)
    run.notes.append("clocks " + "/".join(str(s["clocks"]) for s in summaries)
                     + ", skipped " + "/".join(str(len(s["skipped"])) for s in summaries)
                     + ", fired " + "/".join(str(s["fired"]) for s in summaries))
    faults = [fault for s in summaries for fault in s["faults"]]
    if faults:
        raise SystemExit(f"the tick recorded faults: {faults}")
    with psycopg.connect(url.replace("postgres://", "postgresql://", 1)) as conn:
        empty, span = conn.execute(
            "SELECT count(*) FILTER (WHERE fired = 0), "
            "extract(epoch FROM max(finished) - min(started)) FROM timekeeping_tickrun"
        ).fetchone()
    run.notes.append(f"{empty} run(s) that found nothing, runs span {span:.1f}s")
    return run


def floors(url: str, count: int) -> Run:
    """`count` processes of the raw-SQL floor at once."""
    commands = [[sys.executable, "-c", f"import bench.processes as p; p.floor_child({n}, {count})"]
                for n in range(count)]
    seconds, _ = together(commands, child_env(url))
    return Run("floor", count, seconds)


def floor_child(index: int, count: int) -> None:
    """One floor process: every brand, starting at its own share of them."""
    with psycopg.connect(os.environ["DATABASE_URL"].replace("postgres://", "postgresql://", 1)
                         ) as conn:
        brands = [row[0] for row in conn.execute("SELECT id FROM timekeeping_brand ORDER BY id")]
    start = index * len(brands) // count
    floor(brands[start:] + brands[:start])


def exactly_once(url: str, total: int) -> str:
    """Every timer fired once and recorded once, or SystemExit saying what is wrong."""
    with psycopg.connect(url.replace("postgres://", "postgresql://", 1)) as conn:
        armed, fired, records, recorded, twice = conn.execute(
            "SELECT (SELECT count(*) FROM timekeeping_timer WHERE state = 'armed'), "
            "(SELECT count(*) FROM timekeeping_timer WHERE state = 'fired'), "
            "(SELECT count(*) FROM timekeeping_record WHERE kind = 'timer.fired'), "
            "(SELECT count(DISTINCT r.timer) FROM timekeeping_record r JOIN timekeeping_timer t "
            " ON t.id = r.timer AND t.state = 'fired' WHERE r.kind = 'timer.fired'), "
            "(SELECT count(*) FROM (SELECT timer FROM timekeeping_record "
            " WHERE kind = 'timer.fired' GROUP BY timer HAVING count(*) > 1) AS more)"
        ).fetchone()
    said = (f"{armed} armed, {fired} fired, {records} records, {recorded} fired timers "
            f"recorded, {twice} recorded twice")
    if (armed, fired, records, recorded, twice) != (0, total, total, total, 0):
        raise SystemExit(f"NOT exactly once: {said}")
    return said


def measure(base: str, template: str, label: str, count: int, total: int) -> Run:
    name = f"{PREFIX}_{label}{count}_{os.getpid()}"
    with scratch_database(base, name, template=template) as url:
        run = (ticks if label == "tick" else floors)(url, count)
        run.notes.append("exactly once: " + exactly_once(url, total))
    print(f"{label} × {count}: {run.seconds:.1f}s, {total / run.seconds:.0f}/s; "
          + "; ".join(run.notes), flush=True)
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brands", type=int, default=10)
    parser.add_argument("--timers", type=int, default=100_000)
    parser.add_argument("--counts", default="1,2,4", help="how many processes, e.g. 1,2,4")
    args = parser.parse_args()
    counts = [int(part) for part in args.counts.split(",")]
    base = postgres_base()
    total = args.brands * (args.timers // args.brands)
    rates: dict[str, dict[int, float]] = {"tick": {}, "floor": {}}
    with scratch_database(base, f"{PREFIX}_template_{os.getpid()}") as template_url:
        began = time.perf_counter()
        fill_template(template_url, args.brands, args.timers)
        print(f"template: {args.brands} brands × {args.timers // args.brands} owed timers in "
              f"{time.perf_counter() - began:.1f}s", flush=True)
        template = template_url.rsplit("/", 1)[1]
        for count in counts:  # the tick and the floor side by side, under the same load
            for label in ("tick", "floor"):
                run = measure(base, template, label, count, total)
                rates[label][count] = total / run.seconds
    one = counts[0]
    figures = [f"p{n}_per_s={rates['tick'][n]:.0f}" for n in counts]
    figures += [f"ratio{n}={rates['tick'][n] / rates['tick'][one]:.2f}" for n in counts[1:]]
    figures += [f"floor_p{n}_per_s={rates['floor'][n]:.0f}" for n in counts]
    figures += [f"floor_ratio{n}={rates['floor'][n] / rates['floor'][one]:.2f}"
                for n in counts[1:]]
    print(" ".join(figures))


if __name__ == "__main__":
    main()
