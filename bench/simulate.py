"""A day of 100,000 brands' timers replayed through the tick's measured costs: the tick
processes and database cores it needs (issue 14, "The path past one database").

    .venv/bin/python bench/simulate.py [--brands 100000] [--per-clock-ms 0.41] …

No database: a model, seeded, the same output for the same options.

The day (UTC, minute by minute; no daylight saving time):
- each brand lives in one time zone, drawn from ZONES: 26 offsets from UTC-10 to UTC+12,
  half and three-quarter hours included, weighted by where businesses are (our guess);
- each brand has timers due that day, drawn from a log-normal whose mean is
  --timers-per-brand (50) and whose spread is --spread (1.0: a few brands are 20 times the
  mean, many are under half of it);
- each timer is owed, in the brand's own zone, at 09:00 (a deadline, --at-nine 0.4), at
  midnight (a notice, --at-midnight 0.2), at a whole hour of the working day 10:00–17:00
  (--on-the-hour 0.2), or else at any minute of the day (the rest, 0.2).
A minute's load is the brand clocks with a timer owed in it and the timers owed in it: the
tick of that minute fires them.

The costs, each in ms of the tick process's wall time (its CPU and its waits on the
database) and in ms of the database's CPU (the `…-db-ms` options), are bench/costs.py's
final line on a quiet machine (2 December 2026, small clocks ticking in groups):
- per tick (--per-tick-ms 864, --per-tick-db-ms 0): a `manage.py tick` process's start-up
  (mostly imports) and its tick with nothing owed, paid by each process each minute;
- per brand clock ticked (--per-clock-ms 0.41, --per-clock-db-ms 0.13);
- per fired timer (--per-timer-ms 0.093, --per-timer-db-ms 0.040): one tick process fires
  10,354 timers/s in bench/tick.py of the same day;
- per visit (--per-visit-ms 0.082, --per-visit-db-ms 0.020): what a process pays for a clock
  another process holds (its share of the one query that reads a group's lease holders). A
  clock another process already fired costs its share of one more query; one fired between
  that query and the firing costs an empty run (bench/costs.py's retick, 5.9 ms), which
  bench/processes.py counts (0 to 2 a run) and the model leaves out.
  --per-visit-ms 0 --per-visit-db-ms 0 model processes that divide the clocks.

With N processes, each one's minute costs per tick + (clocks × per clock + timers × per timer)
/ N + clocks × (N − 1) / N × per visit; it must fit the tick's 50 s budget (--budget). The
processes needed are the least N that fits the worst minute (none fits when clocks × per
visit alone passes the budget). The database's seconds in a minute are the same sum of its
parts with N processes; the cores it needs are the worst minute's seconds / 60, and the cores
to provision keep them --db-busy (0.7) busy at most: the headroom covers the ticks' work
falling within 50 s of the minute, and the rest of the product. A minute that does not fit
is not carried into the next: the model asks every minute to fit. Timers are no-ops, as in
the benchmarks: handlers that send or write cost more.

Re-run with new costs by passing bench/costs.py's final line as options (per_clock_ms=3 →
--per-clock-ms 3).

Ends with one line: brands=… timers_per_day=… peak_clocks_per_min=… peak_timers_per_min=…
processes=… db_cores=… db_cores_provisioned=… processes_divided=… db_cores_divided=… (the
last two with --per-visit-ms 0; processes=none when no count fits).
"""

from __future__ import annotations

import argparse
import math
import random
from dataclasses import dataclass, replace

MINUTES = 24 * 60
# (offset from UTC in minutes, weight): where the brands are, a guess at businesses' spread.
ZONES = [
    (-600, 1.0), (-480, 8.0), (-420, 4.0), (-360, 7.0), (-300, 10.0), (-240, 3.0),
    (-210, 0.3), (-180, 6.0), (0, 8.0), (60, 14.0), (120, 6.0), (180, 4.0), (210, 0.5),
    (240, 1.5), (270, 0.2), (300, 1.5), (330, 8.0), (345, 0.3), (360, 0.5), (390, 0.2),
    (420, 3.0), (480, 12.0), (540, 5.0), (570, 0.3), (600, 2.0), (720, 0.7),
]
WORKING_HOURS = range(10, 18)


@dataclass(frozen=True)
class Costs:
    """Milliseconds of the tick process's wall time, and of the database's CPU."""

    tick: float
    tick_db: float
    clock: float
    clock_db: float
    timer: float
    timer_db: float
    visit: float
    visit_db: float


@dataclass
class Day:
    clocks: list[int]
    timers: list[int]
    total: int = 0
    largest: int = 0  # the most timers one clock has owed in one minute


def brand_minutes(rng: random.Random, count: int, shape: tuple[float, float, float]
                  ) -> dict[int, int]:
    """A brand's timers by the local minute they are owed."""
    nine, midnight, hourly = shape
    owed: dict[int, int] = {}
    for draw in (rng.random() for _ in range(count)):
        if draw < nine:
            minute = 9 * 60
        elif draw < nine + midnight:
            minute = 0
        elif draw < nine + midnight + hourly:
            minute = rng.choice(WORKING_HOURS) * 60
        else:
            minute = rng.randrange(MINUTES)
        owed[minute] = owed.get(minute, 0) + 1
    return owed


def day(brands: int, per_brand: float, spread: float, shape: tuple[float, float, float],
        seed: int) -> Day:
    """Each minute of the UTC day: the brand clocks with timers owed, and those timers."""
    rng = random.Random(seed)
    offsets, weights = zip(*ZONES, strict=True)
    mu = math.log(per_brand) - spread**2 / 2  # a log-normal whose mean is per_brand
    result = Day([0] * MINUTES, [0] * MINUTES)
    for offset in rng.choices(offsets, weights, k=brands):
        count = max(1, round(rng.lognormvariate(mu, spread)))
        for local, timers in brand_minutes(rng, count, shape).items():
            minute = (local - offset) % MINUTES  # local time back to UTC
            result.clocks[minute] += 1
            result.timers[minute] += timers
            result.largest = max(result.largest, timers)
        result.total += count
    return result


def process_seconds(clocks: int, timers: int, costs: Costs, processes: int) -> float:
    """One process's share of a minute: its own tick, its share of the work, its visits."""
    work = clocks * costs.clock + timers * costs.timer
    visits = clocks * (processes - 1) / processes * costs.visit
    return (costs.tick + work / processes + visits) / 1000


def processes_needed(clocks: int, timers: int, costs: Costs, budget: float) -> int | None:
    """The least count of processes whose minute fits the budget; None when none does."""
    work = clocks * costs.clock + timers * costs.timer
    visits = clocks * costs.visit
    room = budget * 1000 - costs.tick - visits
    if work - visits <= 0 or room <= 0:
        return 1 if costs.tick + work <= budget * 1000 else None
    return max(1, math.ceil((work - visits) / room - 1e-9))


def database_seconds(clocks: int, timers: int, costs: Costs, processes: int) -> float:
    return (processes * costs.tick_db + clocks * costs.clock_db + timers * costs.timer_db
            + clocks * (processes - 1) * costs.visit_db) / 1000


def fleet(load: Day, costs: Costs, budget: float) -> tuple[int | None, float | None]:
    """The processes the worst minute needs, and the database's cores in the worst minute
    with that many processes running every minute."""
    needed = [processes_needed(c, t, costs, budget) for c, t in zip(load.clocks, load.timers,
                                                                   strict=True)]
    if None in needed:
        return None, None
    processes = max(needed)
    busiest = max(database_seconds(c, t, costs, processes)
                  for c, t in zip(load.clocks, load.timers, strict=True))
    return processes, busiest / 60


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def print_load(load: Day, costs: Costs) -> None:
    series = {
        "clocks": load.clocks, "timers": load.timers,
        "tick, s": [process_seconds(c, t, costs, 1)
                           for c, t in zip(load.clocks, load.timers, strict=True)],
        "database, s": [database_seconds(c, t, costs, 1)
                        for c, t in zip(load.clocks, load.timers, strict=True)],
    }
    print("per minute (one process)    p50        p90        p99        max")
    for name, values in series.items():
        print(f"{name:<23}" + "".join(f"{percentile(values, share):>11,.1f}"
                                      for share in (0.5, 0.9, 0.99, 1.0)))
    for what, series in (("clocks", load.clocks), ("timers", load.timers)):
        peak = max(range(MINUTES), key=series.__getitem__)
        print(f"peak minute for {what}, {peak // 60:02d}:{peak % 60:02d} UTC: "
              f"{load.clocks[peak]:,} clocks, {load.timers[peak]:,} timers")
    print(f"the largest clock in any minute: {load.largest:,} timers "
          f"({load.largest * costs.timer / 1000:.2f} s in one process)")


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add = parser.add_argument
    add("--brands", type=int, default=100_000)
    add("--timers-per-brand", type=float, default=50.0, help="the mean timers a brand a day")
    add("--spread", type=float, default=1.0, help="sigma of the log-normal of brands' sizes")
    add("--at-nine", type=float, default=0.4)
    add("--at-midnight", type=float, default=0.2)
    add("--on-the-hour", type=float, default=0.2)
    add("--seed", type=int, default=14)
    add("--budget", type=float, default=50.0, help="seconds a tick may spend")
    add("--db-busy", type=float, default=0.7, help="the most the database's cores may be busy")
    for name, default in (("tick", 864.0), ("tick-db", 0.0), ("clock", 0.41),
                          ("clock-db", 0.13), ("timer", 0.093), ("timer-db", 0.040),
                          ("visit", 0.082), ("visit-db", 0.020)):
        add(f"--per-{name}-ms", type=float, default=default)
    args = parser.parse_args()
    if args.at_nine + args.at_midnight + args.on_the_hour > 1:
        parser.error("--at-nine, --at-midnight and --on-the-hour add up to more than 1")
    return args


def main() -> None:
    args = parse()
    costs = Costs(args.per_tick_ms, args.per_tick_db_ms, args.per_clock_ms,
                  args.per_clock_db_ms, args.per_timer_ms, args.per_timer_db_ms,
                  args.per_visit_ms, args.per_visit_db_ms)
    load = day(args.brands, args.timers_per_brand, args.spread,
               (args.at_nine, args.at_midnight, args.on_the_hour), args.seed)
    print(f"{args.brands:,} brands, {load.total:,} timers in the day; costs (ms, process/"
          f"database): tick {costs.tick}/{costs.tick_db}, clock {costs.clock}/{costs.clock_db}, "
          f"timer {costs.timer}/{costs.timer_db}, visit {costs.visit}/{costs.visit_db}")
    print_load(load, costs)
    processes, cores = fleet(load, costs, args.budget)
    divided, divided_cores = fleet(load, replace(costs, visit=0.0, visit_db=0.0), args.budget)
    peak = max(range(MINUTES), key=load.clocks.__getitem__)
    if processes is None:
        print(f"no count of processes fits the peak minute: each process visits its "
              f"{load.clocks[peak]:,} clocks ({load.clocks[peak] * costs.visit / 1000:.0f} s of "
              f"visits alone, against a budget of {args.budget:.0f} s)")
    print(f"with clocks divided between processes (--per-visit-ms 0): {divided} process(es), "
          f"{divided_cores:.2f} database cores in the worst minute, "
          f"{math.ceil(divided_cores / args.db_busy)} to provision")
    provisioned = (f"{math.ceil(cores / args.db_busy)}" if cores is not None else "none")
    print(f"brands={args.brands} timers_per_day={load.total} "
          f"peak_clocks_per_min={max(load.clocks)} peak_timers_per_min={max(load.timers)} "
          f"processes={processes or 'none'} db_cores={_figure(cores)} "
          f"db_cores_provisioned={provisioned} processes_divided={divided} "
          f"db_cores_divided={_figure(divided_cores)}")


def _figure(value: float | None) -> str:
    return "none" if value is None else f"{value:.2f}"


if __name__ == "__main__":
    main()
