"""Where a batch's milliseconds go when the tick fires (issue 14, "Firing rate").

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/profile_tick.py

Creates a scratch database, fills it as bench/brands.py does (`--brands` brands with `--each`
owed no-op timers: 10 × 2,000 by default, 2,000 × 10 for the cost of many small clocks), fires
them with one in-process `tick.phases.run_once` under cProfile, and times every
statement sent to the database (Django's execute wrapper; COPY included as the cursor call
that sends it). Prints:

- the split: wall time, time inside database calls (round trips included), the rest (Python);
- statements by kind (first words), with count and total milliseconds;
- the functions with the most own time, and the tick's own steps by cumulative time.

Ends with one line: per_s=… db_share=… python_ms_per_1000=… db_ms_per_1000=…
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import time
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.brands import fill  # noqa: E402
from bench.tick import NOW, postgres_base, scratch_database, setup_django  # noqa: E402

HOUR = timedelta(hours=1)  # a budget the measured tick never reaches


class Statements:
    """Django execute wrapper: the time of each statement, by its first two words."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = defaultdict(float)
        self.count: dict[str, int] = defaultdict(int)

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            words = " ".join(str(sql).split()[:2]).replace('"', "")
            self.ms[words] += (time.perf_counter() - started) * 1000
            self.count[words] += 1

    def total_ms(self) -> float:
        return sum(self.ms.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brands", type=int, default=10)
    parser.add_argument("--each", type=int, default=2_000)
    args = parser.parse_args()
    with scratch_database(postgres_base(), "kt_bench_profile") as url:
        setup_django(url)
        from django.db import connection

        from timekeeping.tick import phases
        from timekeeping.timers import records

        fill(args.brands, args.each)
        owed = args.brands * args.each
        statements = Statements()
        copy_ms = [0.0]
        write_clocks = records.write_clocks

        def timed_copy(*a, **k):  # COPY goes around the execute wrapper: timed here
            started = time.perf_counter()
            try:
                return write_clocks(*a, **k)
            finally:
                copy_ms[0] += (time.perf_counter() - started) * 1000

        records.write_clocks = timed_copy
        profile = cProfile.Profile()
        started = time.perf_counter()
        with connection.execute_wrapper(statements):
            profile.enable()
            result = phases.run_once(now=NOW, phases=False, sweep=False, budget=HOUR)
            profile.disable()
        wall_ms = (time.perf_counter() - started) * 1000
        fired = result.total("fired")
        assert fired == owed, f"fired {fired} of {owed}"
        db_ms = statements.total_ms() + copy_ms[0]
        print(f"fired {fired} in {wall_ms:.0f} ms (profiled): database calls {db_ms:.0f} ms "
              f"(COPY of records {copy_ms[0]:.0f} ms), the rest {wall_ms - db_ms:.0f} ms")
        for words, ms in sorted(statements.ms.items(), key=lambda kv: -kv[1]):
            print(f"  {words:40s} {statements.count[words]:6d} × {ms:8.1f} ms")
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out).strip_dirs()
        stats.sort_stats("tottime").print_stats(15)
        stats.sort_stats("cumulative").print_stats("tick/|firing.py|delays.py|kinds.py|"
                                                   "records.py", 20)
        print(out.getvalue())
        # Without the profiler: the rate the figures are fractions of.
        from bench.tick import reset_fired

        reset_fired()
        started = time.perf_counter()
        phases.run_once(now=NOW, phases=False, sweep=False, budget=HOUR)
        plain_s = time.perf_counter() - started
        per_1000 = 1000 / fired
        print(f"brands={args.brands} each={args.each} per_s={fired / plain_s:.0f} "
              f"db_share={db_ms / wall_ms:.2f} "
              f"python_ms_per_1000={(wall_ms - db_ms) * per_1000:.1f} "
              f"db_ms_per_1000={db_ms * per_1000:.1f}")


if __name__ == "__main__":
    main()
