"""Real work at scale (issue 32): a tax practice of N clients ordered, fired, minted and walked.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/practice.py \
        [--clients 10000] [--order-sample K] [--walk-clients 1000]

The practice is the demo's (`timekeeping/manifests/examples/tax.json`): each client a taxpayer
filing in three jurisdictions (US, US-CA, US-NY) with a carryforward's expiry, so its annual
return has five dates (three filings, the payment, the expiry) and their reminders. Each
phase runs on a scratch database of its own (none sees another's timers), in a process of its
own, and every tick is `manage.py tick` in a process of its own (`bench.memory.peak_mb`: its
peak memory). A tick on the real clock runs with the wall clock fixed at the phase's instant
(`manage.py shell -c`, inside `wallclock.fixed`): the returns are for 2026, the ticks in 2027
and 2028 (the machine's clock would owe them nothing yet). A tick's seconds are its own, start-
up excluded; its timers phase (`fire_owed`) is timed beside it.

1. order: every client's 2026 return ordered on 5 January 2027 with `clocks.order` (what
   `POST /api/jobs` calls): ms per order, and queries per order counted on a sample (the
   first 50, then ten spread over the rest). `--order-sample K` orders the first K only (and
   the phases after fire theirs).
2. mint: N more clients join the Tax Plan on 25 January 2028 (`plans.subscribe`), and the
   ticks of 1 February 2028 (09:05 in New York, one a minute, the default budget, as cron
   runs them) mint their 2027 returns: ticks until every return is open, jobs opened by each,
   their seconds. A return minted on 1 February already owes its 90-day notices (15 January):
   the same ticks fire them.
3. wave: the clients' notices of January and March fired first (one tick on 31 March, its
   figures printed), then the April wave (reminders, the payment's escalation, the extensions
   `run tentative 3d` files, the dates that lapse) by one tick on 30 April: timers fired per
   second of the timers phase. In the same database, as many no-op delays (`copy_timers`,
   `bench/tick.py`'s) fired by one tick: `fired_ratio` is the real rate over the no-op one.
4. walk: `--walk-clients` clients made on a test clock on 5 January 2027, their returns
   ordered there, and the clock walked a year by `manage.py tick --test-clock … --to …`.
5. memory: each tick's peak; `memory_ratio` is the largest over an empty tick's (a tick on
   the practice's database before anything was ordered).

Ends with one line: queries_per_order=… fired_ratio=… mint_s=… walk_1000_s=… memory_ratio=…
(walk_1000_s is the walk's seconds scaled to 1,000 clients when `--walk-clients` is not 1,000;
the line before says so). `--profile` instead orders `--clients` returns and fires their
April wave in this process, printing the statements per fired timer by where they are sent.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.memory import peak_mb  # noqa: E402
from bench.tick import copy_timers, postgres_base, scratch_database, setup_django  # noqa: E402

SERVICE, PERIOD, PLAN = "annual-return", "2026", "tax-plan"
CLIENT_INPUT = {"jurisdictions": ["US", "US-CA", "US-NY"], "earliest_credit_expiry": "2046-12-31"}
ORDERED = datetime(2027, 1, 5, 14, tzinfo=UTC)  # 09:00 in New York
MARCH_END = datetime(2027, 3, 31, 16, tzinfo=UTC)  # the notices of January and March owed
APRIL_END = datetime(2027, 4, 30, 16, tzinfo=UTC)  # and April's
SUBSCRIBED = datetime(2028, 1, 25, 14, tzinfo=UTC)  # the Tax Plan's first mint: 1 February
MINTED = datetime(2028, 2, 1, 14, 5, tzinfo=UTC)  # 09:05 in New York, the mint owed at 09:00
WHOLE = 86_400  # a budget the measured ticks never reach: they fire all that is owed
SAMPLE_FIRST, SAMPLE_LATER = 50, 10

# A tick of the real clock in a process of its own, the wall clock fixed at `at`: the tick's
# own seconds and its timers phase's (the engine, as bench/tick.py times it), start-up excluded.
TICK_AT = """
import time
from datetime import datetime
from django.core.management import call_command
from timekeeping.basics import wallclock
from timekeeping.tick import phases

spent = [0.0]
fire_owed = phases.fire_owed

def timed(*args, **kwargs):
    began = time.perf_counter()
    try:
        return fire_owed(*args, **kwargs)
    finally:
        spent[0] += time.perf_counter() - began

phases.fire_owed = timed
began = time.perf_counter()
with wallclock.fixed(datetime.fromisoformat({at!r})):
    call_command("tick", "--budget", {budget!r})
print(f"bench tick_s={{time.perf_counter() - began:.3f}} fire_s={{spent[0]:.3f}}")
"""


@dataclass
class Tick:
    fired: int
    mb: float
    wall_s: float  # the process, start-up included
    tick_s: float  # the tick
    fire_s: float  # its timers phase
    kinds: dict

    @property
    def per_s(self) -> float:
        return self.fired / self.fire_s if self.fire_s else 0.0

    def line(self, label: str) -> str:
        kinds = ", ".join(f"{count:,} {kind}" for kind, count in sorted(self.kinds.items()))
        return (f"{label}: {self.fired:,} fired ({kinds or 'none'}) · tick {self.tick_s:.1f} s, "
                f"timers phase {self.fire_s:.1f} s ({self.per_s:,.1f} timers/s) · "
                f"process {self.wall_s:.1f} s · {self.mb:.1f} MB")


def tick_at(at: datetime, budget: float = WHOLE) -> Tick:
    """`manage.py tick` at `at` in a process of its own: what it fired, by kind."""
    from django.db.models import Sum

    from timekeeping.models import TickRun, Timer

    code = TICK_AT.format(at=at.isoformat(), budget=str(budget))
    mb, wall, said = peak_mb(["shell", "-v", "0", "-c", code])
    figures = dict(part.split("=") for part in said.split("last: ", 1)[1].split()[1:])
    # Its clocks' runs, started at `at` (the wall clock it was fixed at): housekeeping purges
    # runs 30 days older than the tick, so a sum over all runs would not do.
    fired = TickRun.objects.filter(started=at).aggregate(n=Sum("fired"))["n"] or 0
    kinds = Counter(Timer.objects.filter(state=Timer.State.FIRED, fired=at)
                    .values_list("kind", flat=True).iterator())
    return Tick(fired, mb, wall, float(figures["tick_s"]), float(figures["fire_s"]),
                dict(kinds))


# -- the practice ------------------------------------------------------------------------------

def practice(slug: str, clients: int, *, test_clock_at: datetime | None = None):
    """A brand on the tax manifest, its owner, and `clients` taxpayers (on a test clock frozen
    at `test_clock_at`, if given), written in bulk: the brand, and the test clock or None."""
    from django.contrib.auth import get_user_model

    from timekeeping import manifests
    from timekeeping.demo import TAX_MANIFEST
    from timekeeping.models import Brand, Member, Subject, TestClock

    owner = get_user_model().objects.create_user(f"{slug}-owner", f"owner@{slug}.example")
    brand = Brand.objects.create(name=f"Practice {slug}", slug=slug, owner=owner, plan="team")
    Member.objects.create(brand=brand, user=owner, role="owner")
    version = manifests.load(brand, json.loads(Path(TAX_MANIFEST).read_text()))
    test_clock = (TestClock.objects.create(brand=brand, name="a year", frozen_time=test_clock_at)
                  if test_clock_at else None)
    Subject.objects.bulk_create(
        [Subject(brand=brand, bundle=version.bundle, plan=brand.plan, test_clock=test_clock,
                 kind="taxpayer", key=f"{n:02d}-{n:07d}", name=f"Client {n}",
                 zone="America/New_York", input=CLIENT_INPUT, owner_name=f"Owner {n}",
                 contact_email=f"client{n}@{slug}.example") for n in range(clients)],
        batch_size=5000)
    analyze()
    return brand, test_clock


def analyze() -> None:
    """Statistics as a database in use has them, so the planner picks each handler's index."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def clients_of(brand):
    from timekeeping.models import Subject

    return list(Subject.objects.filter(brand=brand).select_related("brand", "test_clock")
                .order_by("key"))


def sampled(count: int) -> set[int]:
    """The orders whose statements are counted: the first 50, and ten spread over the rest."""
    later = range(SAMPLE_FIRST, count)
    return set(range(min(SAMPLE_FIRST, count))) | {
        later[len(later) * n // SAMPLE_LATER] for n in range(SAMPLE_LATER) if later}


def order_all(subjects, at: datetime | None) -> dict:
    """Order each subject's return as the API does, at `at` on the real clock (None: on the
    subjects' test clock): the milliseconds of each, and the statements of the sample."""
    from contextlib import nullcontext

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from timekeeping import clocks
    from timekeeping.basics import wallclock

    counted, ms = sampled(len(subjects)), []
    queries: dict[int, int] = {}
    began = time.perf_counter()
    with wallclock.fixed(at) if at else nullcontext():
        for n, subject in enumerate(subjects):
            capture = CaptureQueriesContext(connection) if n in counted else nullcontext()
            started = time.perf_counter()
            with capture:
                clocks.order(brand=subject.brand, service=SERVICE, subject=subject,
                             period=PERIOD, by="the practice")
            ms.append((time.perf_counter() - started) * 1000)
            if n in counted:
                queries[n] = len(capture.captured_queries)
    total = time.perf_counter() - began
    later = [count for n, count in queries.items() if n >= SAMPLE_FIRST]
    return {"orders": len(ms), "seconds": total, "per_s": len(ms) / total,
            "ms_median": statistics.median(ms), "ms_p90": sorted(ms)[int(len(ms) * 0.9)],
            "ms_max": max(ms), "queries_median": statistics.median(queries.values()),
            "queries_min": min(queries.values()), "queries_max": max(queries.values()),
            "queries_later": sorted(later)}


def order_line(label: str, figures: dict) -> str:
    return (f"{label}: {figures['orders']:,} orders in {figures['seconds']:.1f} s "
            f"({figures['per_s']:.1f}/s) · ms per order median {figures['ms_median']:.1f}, "
            f"p90 {figures['ms_p90']:.1f}, max {figures['ms_max']:.1f} · queries per order "
            f"median {figures['queries_median']:g} (min {figures['queries_min']}, max "
            f"{figures['queries_max']}; later orders {figures['queries_later']})")


# -- the phases, each a child process on its own database ------------------------------------

def noon_days(first: datetime, last: datetime):
    """Noon in New York (16:00Z) each day from `first` to `last` on which a timer of the real
    clock is owed: when cron's ticks of that day would find them."""
    from timekeeping.models import Timer

    at = first
    while at <= last:
        if Timer.objects.filter(state=Timer.State.ARMED, test_clock=None, owed__lte=at).exists():
            yield at
        at += timedelta(days=1)


def ticks_daily(first: datetime, last: datetime, label: str) -> Tick:
    """A tick at noon in New York each day from `first` to `last` that owes a timer
    (`noon_days`): their figures summed (their memory, the largest)."""
    ticks = []
    for at in noon_days(first, last):
        ticks.append(tick_at(at))
        print(ticks[-1].line(f"     {at:%d %B}"), flush=True)
    kinds: Counter = Counter()
    for ticked in ticks:
        kinds.update(ticked.kinds)
    combined = Tick(sum(t.fired for t in ticks), max((t.mb for t in ticks), default=0.0),
                    sum(t.wall_s for t in ticks), sum(t.tick_s for t in ticks),
                    sum(t.fire_s for t in ticks), dict(kinds))
    print(combined.line(f"{label}, {len(ticks)} tick(s)"), flush=True)
    return combined


def phase_wave(args) -> dict:
    """Phases 1 and 3: order every client's return, fire the notices of January to March, then
    April's; the same number of no-op delays; and the empty tick before any of it."""
    from timekeeping.models import Brand

    brand, _ = practice("practice", args.clients)
    empty = tick_at(ORDERED)
    print(empty.line("empty tick (the practice, nothing ordered)"), flush=True)
    subjects = clients_of(brand)[: args.order_sample or None]
    ordered = order_all(subjects, ORDERED)
    print(order_line("1. order", ordered), flush=True)
    analyze()
    march = ticks_daily(ORDERED.replace(hour=16), MARCH_END, "   January to March")
    april = ticks_daily(MARCH_END + timedelta(days=1), APRIL_END, "3. the April wave")
    noop_brand = Brand.objects.create(name="No-op", slug="no-op")
    copied = copy_timers((noop_brand.pk, APRIL_END - timedelta(seconds=1 + n % 86_400))
                         for n in range(april.fired))
    noop = tick_at(APRIL_END + timedelta(minutes=1))
    if noop.fired != copied:
        raise SystemExit(f"the no-op tick fired {noop.fired} of {copied}")
    print(noop.line("   no-op delays, as many, one tick"), flush=True)
    ratio = april.per_s / noop.per_s if noop.per_s else 0.0
    print(f"   fired_ratio {ratio:.4f}: {april.per_s:,.1f} real clock timers/s over "
          f"{noop.per_s:,.0f} no-op timers/s", flush=True)
    return {"order": ordered, "empty": asdict(empty), "march": asdict(march),
            "april": asdict(april), "noop": asdict(noop), "fired_ratio": ratio}


def phase_mint(args) -> dict:
    """Phase 2: every client on the Tax Plan, then the ticks of 1 February until every 2027
    return is open (a tick a minute, with cron's default budget)."""
    from timekeeping.basics import wallclock
    from timekeeping.models import Job
    from timekeeping.recurring import plans

    brand, _ = practice("minting", args.clients)
    subjects = clients_of(brand)
    began = time.perf_counter()
    with wallclock.fixed(SUBSCRIBED):
        for subject in subjects:
            plans.subscribe(subject=subject, service=PLAN, anchor=SUBSCRIBED.date(),
                            by="the practice")
    subscribe_s = time.perf_counter() - began
    print(f"2. {len(subjects):,} clients subscribed to the Tax Plan in {subscribe_s:.1f} s "
          f"({subscribe_s * 1000 / len(subjects):.1f} ms each)", flush=True)
    analyze()
    ticks, opened = [], 0
    while opened < len(subjects) and len(ticks) < len(subjects) // 100 + 20:
        ticked = tick_at(MINTED + timedelta(minutes=len(ticks)), budget=args.mint_budget)
        now_open = Job.objects.filter(brand=brand, service=SERVICE).count()
        print(ticked.line(f"   mint tick {len(ticks) + 1}: {now_open - opened:,} returns opened"),
              flush=True)
        ticks.append({**asdict(ticked), "opened": now_open - opened})
        if now_open == opened and not ticked.fired:
            break
        opened = now_open
    mint_s = sum(tick["wall_s"] for tick in ticks)
    print(f"   minted {opened:,} of {len(subjects):,} returns in {len(ticks)} tick(s), "
          f"{mint_s:.1f} s (processes' wall time)", flush=True)
    return {"subscribe_s": subscribe_s, "ticks": ticks, "opened": opened, "mint_s": mint_s}


def phase_walk(args) -> dict:
    """Phase 4: clients on a test clock, their returns ordered there, walked a year."""
    from timekeeping.models import Timer, Walk

    brand, test_clock = practice("walking", args.walk_clients, test_clock_at=ORDERED)
    ordered = order_all(clients_of(brand), None)
    print(order_line("4. order on a test clock", ordered), flush=True)
    analyze()
    to = ORDERED + timedelta(days=365)
    mb, wall, said = peak_mb(["tick", "--test-clock", test_clock.pk,
                              "--to", to.strftime("%Y-%m-%dT%H:%M:%SZ")])
    walk = Walk.objects.get(test_clock=test_clock)
    if walk.state != Walk.State.DONE:
        raise SystemExit(f"the walk ended {walk.state}: {said}")
    fired = Timer.objects.filter(test_clock=test_clock, state=Timer.State.FIRED).count()
    print(f"   walked a year with {args.walk_clients:,} clients: {wall:.1f} s, {fired:,} timers "
          f"fired ({fired / wall:,.1f}/s), {mb:.1f} MB", flush=True)
    return {"order": ordered, "walk_s": wall, "fired": fired, "mb": mb}


def rung_of(timer) -> str:
    """A timer as the profile groups it: its kind, and a clock's rung (a day's ack as one)."""
    if timer.kind != "clock":
        return f"{timer.kind} {timer.key.rsplit(':', 1)[-1]}"
    rung = timer.key.split(":", 1)[1]
    return "clock ack (the next day's)" if rung.startswith("ack:") else f"clock {rung}"


class Where:
    """Django execute wrapper: each statement counted by the innermost product function that
    sends it (and that function's caller), and by the rung of the timer being fired."""

    def __init__(self) -> None:
        self.sent: Counter = Counter()
        self.pairs: Counter = Counter()
        self.ms: Counter = Counter()
        self.by_rung: Counter = Counter()
        self.rung = "the batch (select, flush)"

    def __call__(self, execute, sql, params, many, context):
        product, frame = [], sys._getframe(1)
        while frame is not None:
            path = frame.f_code.co_filename
            if "/timekeeping/" in path:
                product.append(f"{path.split('/timekeeping/', 1)[1]}:{frame.f_code.co_name}")
            frame = frame.f_back
        inner = product[0] if product else "elsewhere"
        self.sent[inner] += 1
        self.pairs[f"{inner} <- {product[1] if len(product) > 1 else '?'}"] += 1
        self.by_rung[self.rung] += 1
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.ms[inner] += (time.perf_counter() - started) * 1000

    def firing(self, fire, fired: Counter, ms: Counter):
        """`Firing.fire`, each call timed and its statements counted under the timer's rung."""
        def timed(batch, timer):
            self.rung, started = rung_of(timer), time.perf_counter()
            try:
                return fire(batch, timer)
            finally:
                fired[self.rung] += 1
                ms[self.rung] += (time.perf_counter() - started) * 1000
                self.rung = "the batch (select, flush)"
        return timed


def phase_profile(args) -> dict:
    """The April wave of `--clients` clients fired in this process (a tick each day at noon,
    no outbox sweep) under cProfile, each statement counted by where it is sent and by the
    rung it is sent for (`Where`): what a fired timer costs, and where."""
    import cProfile

    from django.db import connection

    from timekeeping.basics import wallclock
    from timekeeping.tick import phases
    from timekeeping.timers.firing import Firing

    brand, _ = practice("practice", args.clients)
    order_all(clients_of(brand), ORDERED)
    analyze()
    whole = timedelta(seconds=WHOLE)
    for at in noon_days(ORDERED.replace(hour=16), MARCH_END):
        with wallclock.fixed(at):
            phases.run_once(now=at, budget=whole, sweep=False)
    where, profile, calls, ms = Where(), cProfile.Profile(), Counter(), Counter()
    Firing.fire = where.firing(Firing.fire, calls, ms)
    fired, began = 0, time.perf_counter()
    with connection.execute_wrapper(where):
        for at in noon_days(MARCH_END + timedelta(days=1), APRIL_END):
            with wallclock.fixed(at):
                profile.enable()
                fired += phases.run_once(now=at, budget=whole, sweep=False).total("fired")
                profile.disable()
    profiled(where, profile, fired, time.perf_counter() - began, calls, ms, args.clients)
    return {"fired": fired, "statements": sum(where.sent.values())}


def profiled(where: Where, profile, fired: int, seconds: float, calls: Counter, ms: Counter,
             clients: int) -> None:
    import io
    import pstats

    total = sum(where.sent.values())
    print(f"April wave of {clients:,} clients, a tick a day: {fired:,} fired in {seconds:.1f} s "
          f"profiled; {total:,} statements, {total / fired:.2f} per fired timer")
    print("by rung: handler calls, statements per call, ms per call (profiled):")
    for rung, count in calls.most_common():
        print(f"  {count:6,} × {where.by_rung[rung] / count:6.1f} st {ms[rung] / count:7.1f} ms"
              f"  {rung}")
    print(f"  the batches' own (select, flush): {where.by_rung['the batch (select, flush)']:,} st")
    for title, counts in (("sent from", where.sent), ("sent from <- its caller", where.pairs)):
        print(f"statements per fired timer, {title} (ms per fired timer in the database):")
        for name, count in counts.most_common(20):
            spent = f" {where.ms[name] / fired:6.2f} ms" if name in where.ms else " " * 10
            print(f"  {count / fired:7.2f}{spent}  {name}")
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats("tottime").print_stats(15)
    stats.sort_stats("cumulative").print_stats("/(timekeeping|calendars)/", 30)
    print(out.getvalue().replace(str(ROOT) + "/", ""), flush=True)


PHASES = {"wave": phase_wave, "mint": phase_mint, "walk": phase_walk, "profile": phase_profile}


def child(args) -> None:
    setup_django(os.environ["DATABASE_URL"])
    result = PHASES[args.child](args)
    from django.db import connection

    connection.close()
    print("RESULT " + json.dumps(result), flush=True)


def run_phase(base: str, name: str, argv: list[str]) -> dict:
    """A phase in a child process, on a scratch database of its own; its lines as they come."""
    with scratch_database(base, f"kt_practice_{name}_{os.getpid()}") as url:
        process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--child", name, *argv], cwd=ROOT,
            env={**os.environ, "DATABASE_URL": url, "DEBUG": "false"}, stdout=subprocess.PIPE,
            text=True)
        result = None
        for line in process.stdout:
            if line.startswith("RESULT "):
                result = json.loads(line[len("RESULT "):])
            else:
                print(line, end="", flush=True)
        if process.wait() or result is None:
            raise SystemExit(f"the {name} phase failed")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=10_000)
    parser.add_argument("--order-sample", type=int, default=0,
                        help="order only the first K clients' returns (default: all)")
    parser.add_argument("--walk-clients", type=int, default=1_000)
    parser.add_argument("--mint-budget", type=float, default=50.0,
                        help="each mint tick's budget in seconds (default 50, cron's)")
    parser.add_argument("--phases", default="wave,mint,walk")
    parser.add_argument("--profile", action="store_true",
                        help="profile the April wave of --clients clients in one process")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    argv = [f"--clients={args.clients}", f"--order-sample={args.order_sample}",
            f"--walk-clients={args.walk_clients}", f"--mint-budget={args.mint_budget}"]
    base = postgres_base()
    began = time.perf_counter()
    wanted = ["profile"] if args.profile else args.phases.split(",")
    results = {name: run_phase(base, name, argv) for name in wanted}
    if args.profile:
        return
    summary(results, args, time.perf_counter() - began)


def summary(results: dict, args, seconds: float) -> None:
    wave, mint, walk = results.get("wave"), results.get("mint"), results.get("walk")
    peaks = {"empty": wave["empty"]["mb"] if wave else 0.0}
    if wave:
        peaks |= {label: wave[label]["mb"] for label in ("march", "april", "noop")}
    if mint:
        peaks["mint"] = max(tick["mb"] for tick in mint["ticks"])
    if walk:
        peaks["walk"] = walk["mb"]
    largest = max((label for label in peaks if label != "empty"), key=peaks.get, default="empty")
    print("5. peak memory (MB): " + ", ".join(f"{label} {mb:.1f}" for label, mb in peaks.items())
          + f"; the largest is {largest}'s", flush=True)
    walk_1000 = walk["walk_s"] * 1000 / args.walk_clients if walk else 0.0
    if walk and args.walk_clients != 1000:
        print(f"walk_1000_s scaled from {args.walk_clients:,} clients' {walk['walk_s']:.1f} s")
    print(f"clients={args.clients} ordered={wave['order']['orders'] if wave else 0} "
          f"walk_clients={args.walk_clients} run_s={seconds:.0f}")
    ratio = peaks[largest] / peaks["empty"] if peaks["empty"] else 0.0
    print(f"queries_per_order={wave['order']['queries_median'] if wave else 0:g} "
          f"fired_ratio={wave['fired_ratio'] if wave else 0:.4f} "
          f"mint_s={mint['mint_s'] if mint else 0:.1f} walk_1000_s={walk_1000:.1f} "
          f"memory_ratio={ratio:.2f}")


if __name__ == "__main__":
    main()
