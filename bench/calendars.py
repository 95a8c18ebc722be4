"""Calendar arithmetic speed: rolls per second and wall-time resolutions per second.

    .venv/bin/python bench/calendars.py [--n 100000] [--seed 7]

Rolls 100,000 random dates (2026-2035) on the US+DC calendar, then resolves 100,000 random
wall times in America/New_York (a share of them skipped or repeated), and prints one line of
key=value figures. The first roll of each year builds that year's holidays; the figure
includes those builds, as a cold process would.
"""

import argparse
import random
import sys
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from calendars.moments import shift, wall_time  # noqa: E402
from calendars.rules import Calendar  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    start, span = date(2026, 1, 1), (date(2036, 1, 1) - date(2026, 1, 1)).days
    days = [start + timedelta(days=rng.randrange(span)) for _ in range(args.n)]
    times = [f"{rng.randrange(24):02d}:{rng.randrange(60):02d}" for _ in range(args.n)]

    calendar = Calendar(zone="America/New_York", holidays=("US", "DC"))
    began = time.perf_counter()
    rolled = sum(1 for day in days if calendar.roll(day).rolled_from is not None)
    roll_seconds = time.perf_counter() - began

    began = time.perf_counter()
    instants = [wall_time(day, at, "America/New_York") for day, at in zip(days, times, strict=True)]
    wall_seconds = time.perf_counter() - began

    began = time.perf_counter()
    for instant in instants:
        shift(instant, "America/New_York", days=1)
    shift_seconds = time.perf_counter() - began

    print(
        f"n={args.n} rolled={rolled} rolls_per_s={args.n / roll_seconds:.0f} "
        f"wall_times_per_s={args.n / wall_seconds:.0f} "
        f"day_shifts_per_s={args.n / shift_seconds:.0f}"
    )


if __name__ == "__main__":
    main()
