"""Whether the tick and the pages stay flat with years of history (issue 14, "Years of history").

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/history.py

Two scratch databases beside the one DATABASE_URL names, with the same live workload:

- 100 brands, and 100,000 armed timers (a no-op operation) owed from a day to a year ahead;
- on the first brand, bench/pages.py's brand of 1,000 subjects with ten dates each, and the
  measured subject with three past years of its own besides (a tax job a year, its dates kept,
  the rungs that rang and their records), so that its page says the same in both.

"fresh" has nothing more. "old" has `--fired` (10,000,000) fired timers and their
`timer.fired` records besides, spread over the three years before the last week across the 100
brands, COPYed in the order they fired (with the two tables' indexes built again after, in
both databases), then VACUUM ANALYZE. In both, records are partitioned by month as a database
partitioned before its history began keeps them: each record in the month it was written
(when it fired). In `--rounds` rounds, the two databases in turn, each
in a fresh process, it measures:

- empty_ms: the median in-process tick (`tick.phases.run_once`) that finds nothing owed;
- calendar_ms, console_ms: the console's subject page (the subject's calendar and history)
  and the brand's home, through Django's test client, the median of `--repeats` renders;
- fire_per_s: 20,000 owed no-op timers armed on 10 other brands, fired by one `manage.py tick`
  process (from its first TickRun's start to its last one's finish, as bench/tick.py);
- after_ms: the empty tick again right after that firing, before any VACUUM;
- vacuum_s: VACUUM of the tick's tables (timers, records, runs, brands, heartbeats) after
  it (the benchmark's server may run no autovacuum).

Prints how long the fill took, the old database's table and index sizes, each round's
figures, and ends with one line: fired=… empty_ratio=… fire_ratio=… calendar_ratio=…
console_ratio=… (old over fresh of the rounds' medians; fire_ratio is of the time a timer
takes, fresh's rate over old's; target each ≤ 1.2). Drops the scratch databases.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

from bench.pages import ITEMS  # noqa: E402
from bench.tick import (  # noqa: E402
    NOW,
    admin_connect,
    empty_tick_median,
    postgres_base,
    scratch_database,
)

BRANDS = 100
SUBJECTS = 1_000  # the pages brand's, as bench/pages.py fills them
ARMED = 100_000
OWED = 20_000
OWED_BRANDS = 10
YEARS = 3
CHUNK = 200_000
# History ends a week before now: the console's "needs attention" reads the last seven days
# (late timers, lapses), so both databases show the same page.
HISTORY_END = NOW - timedelta(days=8)
HISTORY_START = HISTORY_END - timedelta(days=365 * YEARS)
NOOP = json.dumps({"operation": "timekeeping.noop", "input": {}, "overdue_s": None})
BUNDLE = "7f3c" * 16  # a manifest bundle's sha256, as clock timers carry one
TIMER_COLUMNS = ("id, brand_id, key, kind, place, owed, state, fired, late_by, owner_type, "
                 "owner_id, owner_opened, payload, armed_at, bundle, armed_by, ended_by, "
                 "attempts, last_error")
RECORD_COLUMNS = "id, kind, instant, brand_id, subject, job, timer, data, written"
FIGURES = ("empty_ms", "calendar_ms", "console_ms", "fire_per_s", "after_ms", "vacuum_s")


# -- the fill -------------------------------------------------------------------------------

def fill_brands() -> dict:
    """The pages brand (bench/pages.py's, SUBJECTS subjects) and BRANDS - 1 others."""
    from bench.pages import fill as fill_pages
    from timekeeping.models import Brand

    made = fill_pages(SUBJECTS)
    owner = Brand.objects.get(pk=made["brand"]).owner
    others = Brand.objects.bulk_create([Brand(name=f"History {n}", slug=f"history-{n}",
                                              owner=owner) for n in range(1, BRANDS)])
    return {"brands": [made["brand"], *(brand.pk for brand in others)]}


def fill_live(brands: list[str]) -> str:
    """What both databases share besides the brands: the measured subject's own years and the
    armed timers; the subject's id."""
    from timekeeping.models import Subject

    subject = Subject.objects.get(brand_id=brands[0], key=f"{0:08d}")
    own_years(subject)
    copy_rows("timekeeping_timer", TIMER_COLUMNS, armed_rows(brands))
    return subject.pk


def armed_rows(brands: list[str]):
    """ARMED armed no-op timers owed from a day to a year and a day ahead: none falls due
    while the benchmark runs."""
    from timekeeping.basics.public_ids import new_id

    year = 365 * 86400
    for n in range(ARMED):
        brand = brands[n % len(brands)]
        owed = (NOW + timedelta(days=1, seconds=(n * 104729) % year)).isoformat()
        yield (f"{new_id('tmr')}\t{brand}\tlive{n:08d}\tdelay\t5\t{owed}\tarmed\t\\N\t\\N\t"
               f"\t{brand}\t{owed}\t{NOOP}\t{NOW.isoformat()}\t\t\t\t0\t\n")


def own_years(subject) -> None:
    """The measured subject's past: a tax job for each of the YEARS before this one, each of
    its ten dates kept three days early after two notices, with those rungs' fired timers and
    the records a real year leaves (opened, notices, timers fired, the step, kept, ended)."""
    from calendars.rules import Calendar as Rules
    from timekeeping.models import Clock, Job, Occurrence, Record, Timer

    rules = Rules(zone="America/New_York", holidays=("US", "DC"))
    said = [Record(kind="job.opened", instant=job.opened, brand_id=subject.brand_id,
                   subject=subject.pk, job=job.pk, data={"service": job.service,
                   "period": job.period, "by": "user 1 (owner)", "bundle": job.bundle})
            for job in Job.objects.filter(subject=subject)]
    for occurrence in Occurrence.objects.filter(clock__subject=subject).select_related("clock"):
        for rang in Timer.objects.filter(owner_id=occurrence.label, state=Timer.State.FIRED):
            said.append(Record(kind="clock.notice", instant=rang.fired,
                               brand_id=subject.brand_id, subject=subject.pk,
                               job=occurrence.clock.job_id, data={
                                   "clock": occurrence.clock_id, "name": occurrence.clock.name,
                                   "item": occurrence.item, "due": occurrence.due.isoformat(),
                                   "rung": rang.payload.get("rung")}))
    timers = []
    for years_ago in range(1, YEARS + 1):
        opened = NOW - timedelta(days=365 * years_ago + 120)
        job = Job.objects.create(brand_id=subject.brand_id, subject=subject,
                                 service="annual-return", period=str(2026 - years_ago),
                                 input={"jurisdictions": ITEMS}, bundle=subject.bundle,
                                 opened=opened, state=Job.State.ENDED,
                                 ended=opened + timedelta(days=110))
        due = (opened + timedelta(days=105)).date()
        kept = opened + timedelta(days=102)
        said.append(Record(kind="job.opened", instant=opened, brand_id=subject.brand_id,
                           subject=subject.pk, job=job.pk, data={
                               "service": job.service, "period": job.period,
                               "by": "user 1 (owner)", "bundle": job.bundle}))
        for name, hard in (("file", False), ("pay", True)):
            row = Clock.objects.create(brand_id=subject.brand_id, subject=subject, job=job,
                                       name=name, title=f"{name} the {job.period} return",
                                       owner="of_record", hard=hard, bundle=job.bundle,
                                       opened=opened)
            for item in (ITEMS if name == "file" else [""]):
                occurrence = Occurrence.objects.create(
                    clock=row, item=item, rule_due=due, due=due, late_from=rules.late_from(due),
                    brand_id=subject.brand_id, hard=hard, status=Occurrence.Status.SATISFIED,
                    settled=kept, settled_by="file")
                base = {"clock": row.pk, "name": name, "item": item}
                for rung, days in (("notice 30d", 30), ("notice 7d", 7)):
                    at = kept - timedelta(days=days - 3)
                    timer = Timer(brand_id=subject.brand_id, key=f"{occurrence.label}:{rung}",
                                  kind="clock", place=6, owed=at, state=Timer.State.FIRED,
                                  fired=at, late_by=timedelta(0), owner_type="occurrence",
                                  owner_id=occurrence.label, owner_opened=opened,
                                  bundle=job.bundle, payload={"rung": rung}, armed_at=opened)
                    timers.append(timer)
                    said += [Record(kind="clock.notice", instant=at, brand_id=subject.brand_id,
                                    subject=subject.pk, job=job.pk,
                                    data={**base, "due": due.isoformat(), "rung": rung}),
                             Record(kind="timer.fired", instant=at, brand_id=subject.brand_id,
                                    timer=timer.pk, data={"kind": "clock", "key": timer.key,
                                                          "place": 6, "what": rung})]
                said.append(Record(kind="clock.satisfied", instant=kept,
                                   brand_id=subject.brand_id, subject=subject.pk, job=job.pk,
                                   data={**base, "by": "file", "due": due.isoformat(),
                                         "late": False}))
        said += [Record(kind="step.committed", instant=kept, brand_id=subject.brand_id,
                        subject=subject.pk, job=job.pk, data={"step": "file", "items": ITEMS,
                                                              "by": "user 1 (owner)"}),
                 Record(kind="job.ended", instant=job.ended, brand_id=subject.brand_id,
                        subject=subject.pk, job=job.pk, data={})]
    Timer.objects.bulk_create(timers)
    Record.objects.bulk_create(said)


def history_rows(brands: list[str], start: int, stop: int, total: int) -> tuple[str, str]:
    """Fired timers start…stop of `total` and their `timer.fired` records, as COPY text:
    in the order they fired, round the brands, ten rungs to a date, one in 200 fired more than
    five minutes late (the console's late timers)."""
    from timekeeping.basics.public_ids import new_id

    step = (HISTORY_END - HISTORY_START) / total
    timers, records = io.StringIO(), io.StringIO()
    for n in range(start, stop):
        brand = brands[n % len(brands)]
        owed = HISTORY_START + step * n
        late = 600 + n % 3000 if n % 200 == 0 else n % 7
        fired = (owed + timedelta(seconds=late)).isoformat()
        opened = (owed - timedelta(days=60)).isoformat()
        owner, rung = f"clk_h{n // 10:010d}#US", ("notice 30d", "notice 7d")[n % 2]
        timer, key = new_id("tmr"), f"clk_h{n // 10:010d}#US:{rung}:{n % 10}"
        timers.write(f"{timer}\t{brand}\t{key}\tclock\t6\t{owed.isoformat()}\tfired\t{fired}\t"
                     f"{late} seconds\toccurrence\t{owner}\t{opened}\t{{\"rung\": \"{rung}\"}}\t"
                     f"{opened}\t{BUNDLE}\t\t\t0\t\n")
        records.write(
            f"{new_id('rec')}\ttimer.fired\t{fired}\t{brand}\t\t\t{timer}\t"
            f'{{"kind": "clock", "key": "{key}", "place": 6, "owed": "{owed.isoformat()}", '
            f'"late_by_s": {late}.0, "owner": "{owner}", "pass": 1, '
            f'"run": "tick_h{n // 1000:012d}", "seq": {n % 1000 + 1}, "what": "{rung}"}}\t'
            f"{fired}\n")
    return timers.getvalue(), records.getvalue()


def fill_history(brands: list[str], fired: int) -> None:
    """COPY the history in chunks through its own connection, with the two tables' indexes
    dropped and built again after (in both databases, so both have their indexes built in one
    piece), and without the foreign keys' checks: the rows name only the brands just made."""
    url = os.environ["DATABASE_URL"].replace("postgres://", "postgresql://", 1)
    began = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")
        conn.execute("SET maintenance_work_mem = '1GB'")
        built = drop_indexes(conn, ("timekeeping_timer", "timekeeping_record"))
        for start in range(0, fired, CHUNK):
            timers, records = history_rows(brands, start, min(fired, start + CHUNK), fired)
            with conn.cursor() as cursor:
                with cursor.copy(f"COPY timekeeping_timer ({TIMER_COLUMNS}) FROM STDIN") as copy:
                    copy.write(timers)
                with cursor.copy(f"COPY timekeeping_record ({RECORD_COLUMNS}) FROM STDIN"
                                 ) as copy:
                    copy.write(records)
            done = min(fired, start + CHUNK)
            if done % 1_000_000 < CHUNK:
                print(f"  {done} fired timers in {time.perf_counter() - began:.0f}s",
                      file=sys.stderr, flush=True)
        for statement in built:
            conn.execute(statement)
        print(f"  indexes built again at {time.perf_counter() - began:.0f}s", file=sys.stderr,
              flush=True)


def drop_indexes(conn: psycopg.Connection, tables: tuple[str, ...]) -> list[str]:
    """Drop the tables' primary keys and other indexes: the statements that make them again."""
    again = []
    for table in tables:
        for name, definition in conn.execute(
                "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = "
                "%s::regclass AND contype = 'p'", (table,)).fetchall():
            conn.execute(f'ALTER TABLE {table} DROP CONSTRAINT "{name}"')
            again.append(f'ALTER TABLE {table} ADD CONSTRAINT "{name}" {definition}')
        for name, definition in conn.execute(
                "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index "
                "WHERE indrelid = %s::regclass", (table,)).fetchall():
            conn.execute(f"DROP INDEX {name}")
            # A partitioned table's index is written "ON ONLY" the parent: made again without
            # ONLY, it is made on every partition too.
            again.append(definition.replace(" ON ONLY ", " ON ", 1))
    return again


def copy_rows(table: str, columns: str, rows) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        with cursor.connection.cursor().copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for row in rows:
                copy.write(row)


def monthly_partitions() -> None:
    """Records as a database partitioned since before its history keeps them: a month's
    partition for each month of the history (each record written when it fired), in place of
    the first partition, which is empty in a new database (timekeeping.tick.partitions)."""
    from django.db import connection

    from timekeeping.tick import partitions

    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE timekeeping_record DETACH PARTITION timekeeping_record_before")
        cursor.execute("DROP TABLE timekeeping_record_before")
    month = partitions.month_of(HISTORY_START)
    this = partitions.month_of(partitions.database_now())
    while month.starts < this.starts:
        partitions.make(month)
        month = partitions.month_of(partitions.add_months(month.starts, 1))


def child_fill(fired: int) -> dict:
    """In a fresh process on its own database: migrate, the brands, the history (in the order
    it happened: before what is live), the live workload and VACUUM ANALYZE; the seconds each
    took."""
    setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    monthly_partitions()
    began = time.perf_counter()
    made = fill_brands()
    took = {"live_s": time.perf_counter() - began}
    began = time.perf_counter()
    fill_history(made["brands"], fired)
    took["history_s"] = time.perf_counter() - began
    began = time.perf_counter()
    made["subject"] = fill_live(made["brands"])
    took["live_s"] += time.perf_counter() - began
    connection.close()
    began = time.perf_counter()
    with admin_connect(os.environ["DATABASE_URL"]) as admin:
        admin.execute("VACUUM ANALYZE")
    took["vacuum_analyze_s"] = time.perf_counter() - began
    return {**made, **took}


# -- the measures ---------------------------------------------------------------------------

def setup() -> None:
    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def empty_tick_ms(repeats: int) -> float:
    """The median of `repeats` ticks at NOW that find nothing owed (after one untimed tick,
    which runs what schedules are due)."""
    from timekeeping.tick import phases

    phases.run_once(now=NOW)
    return empty_tick_median(repeats) * 1000


def pages_ms(brand: str, subject: str, repeats: int) -> tuple[float, float]:
    """The console's subject page and the brand's home, as the brand's owner: medians, ms."""
    from django.conf import settings
    from django.test import Client
    from django.test.utils import setup_test_environment

    from bench.pages import median_ms

    setup_test_environment()
    settings.ALLOWED_HOSTS = ["testserver"]
    owner = Client()
    assert owner.login(username="owner", password="pw")
    return (median_ms(owner, f"/console/{brand}/subjects/{subject}/", repeats),
            median_ms(owner, f"/console/{brand}/", repeats))


def arm_owed(brands: list[str], round_no: int) -> None:
    """OWED owed no-op timers on OWED_BRANDS brands (not the pages brand), up to a day late."""
    from django.db import connection

    from timekeeping.basics.public_ids import new_id

    def rows():
        for n in range(OWED):
            brand = brands[1 + n % OWED_BRANDS]
            owed = (NOW - timedelta(seconds=(n * 7919) % 86400 + 1)).isoformat()
            yield (f"{new_id('tmr')}\t{brand}\towed{round_no}-{n:08d}\tdelay\t5\t{owed}\tarmed"
                   f"\t\\N\t\\N\t\t{brand}\t{owed}\t{NOOP}\t{NOW.isoformat()}\t\t\t\t0\t\n")

    copy_rows("timekeeping_timer", TIMER_COLUMNS, rows())
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE timekeeping_timer")


def fire_per_s() -> float:
    """One `manage.py tick` process fires what is owed: timers a second, from its first
    clock's run to its last."""
    from timekeeping.basics import wallclock
    from timekeeping.models import TickRun

    since = wallclock.wall_now()
    done = subprocess.run([sys.executable, "manage.py", "tick", "--budget", "600"], cwd=ROOT,
                          env=dict(os.environ), capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"tick failed: {done.stderr[-4000:]}")
    runs = list(TickRun.objects.filter(started__gte=since, fired__gt=0))
    fired = sum(run.fired for run in runs)
    assert fired == OWED, f"the tick fired {fired} of {OWED}"
    span = max(run.finished for run in runs) - min(run.started for run in runs)
    return fired / span.total_seconds()


def vacuum_s() -> float:
    began = time.perf_counter()
    with admin_connect(os.environ["DATABASE_URL"]) as admin:
        admin.execute("VACUUM timekeeping_timer, timekeeping_record, timekeeping_tickrun, "
                      "timekeeping_brand, timekeeping_heartbeat")
    return time.perf_counter() - began


def child_measure(brands: list[str], subject: str, round_no: int, repeats: int) -> dict:
    """One round on one database, in a fresh process."""
    setup()
    figures = {"empty_ms": empty_tick_ms(repeats)}
    figures["calendar_ms"], figures["console_ms"] = pages_ms(brands[0], subject, repeats)
    arm_owed(brands, round_no)
    figures["fire_per_s"] = fire_per_s()
    figures["after_ms"] = empty_tick_ms(repeats)
    figures["vacuum_s"] = vacuum_s()
    return figures


def in_child(url: str, call: str) -> dict:
    """Run `bench.history.<call>` in a fresh Python on the database at `url`: its dict."""
    code = f"import json, bench.history as b; print('RESULT', json.dumps(b.{call}))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "DATABASE_URL": url})
    sys.stderr.write(done.stderr[-2000:] if done.returncode else done.stderr)
    if done.returncode:
        raise SystemExit(f"{call.split('(')[0]} failed")
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT"))
    return json.loads(line.removeprefix("RESULT "))


# -- what the old database holds ------------------------------------------------------------

def sizes(url: str) -> list[str]:
    """The timer and record tables: rows, heap, indexes and total; then each index. A
    partitioned table's figures are the sums over its partitions; then its largest month."""
    lines = []
    with psycopg.connect(url.replace("postgres://", "postgresql://", 1)) as conn:
        for table in ("timekeeping_timer", "timekeeping_record"):
            leaves = [name for (name,) in conn.execute(
                "SELECT relid::text FROM pg_partition_tree(%s::regclass) WHERE isleaf",
                (table,))] or [table]
            rows, heap, indexes, total = conn.execute(
                f"SELECT (SELECT count(*) FROM {table}), sum(pg_relation_size(leaf)), "
                "sum(pg_indexes_size(leaf)), sum(pg_total_relation_size(leaf)) "
                "FROM unnest(%s::regclass[]) leaf", (leaves,)).fetchone()
            lines.append(f"{table}: {rows} rows, heap {mb(heap)}, indexes {mb(indexes)}, "
                         f"total {mb(total)}")
            for name, size in conn.execute(
                    "SELECT indexrelid::regclass::text, coalesce((SELECT sum(pg_relation_size("
                    "relid)) FROM pg_partition_tree(indexrelid) WHERE isleaf), "
                    "pg_relation_size(indexrelid)) FROM pg_index "
                    "WHERE indrelid = %s::regclass ORDER BY 2 DESC", (table,)):
                lines.append(f"  {name}: {mb(size)}")
            if len(leaves) > 1:
                largest = conn.execute(
                    "SELECT leaf::text, pg_relation_size(leaf), pg_indexes_size(leaf) "
                    "FROM unnest(%s::regclass[]) leaf ORDER BY 3 DESC LIMIT 1",
                    (leaves,)).fetchone()
                lines.append(f"  the largest of its {len(leaves)} partitions, {largest[0]}: "
                             f"heap {mb(largest[1])}, indexes {mb(largest[2])}")
    return lines


def load() -> str:
    """The machine's load averages (1, 5, 15 minutes): other work shares the two cores."""
    return "load " + " ".join(f"{each:.2f}" for each in os.getloadavg())


def mb(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fired", type=int, default=10_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    base = postgres_base()
    pid = os.getpid()
    with (scratch_database(base, f"kt_bench_hist_fresh_{pid}") as fresh,
          scratch_database(base, f"kt_bench_hist_old_{pid}") as old):
        urls = {"fresh": fresh, "old": old}
        made = {}
        for label, fired in (("fresh", 0), ("old", args.fired)):
            made[label] = in_child(urls[label], f"child_fill({fired})")
            print(f"fill {label}: live {made[label]['live_s']:.1f}s, {fired} fired timers and "
                  f"records {made[label]['history_s']:.1f}s, VACUUM ANALYZE "
                  f"{made[label]['vacuum_analyze_s']:.1f}s ({load()})", flush=True)
        for line in sizes(old):
            print(f"old: {line}", flush=True)
        rounds = {"fresh": [], "old": []}
        for round_no in range(1, args.rounds + 1):
            for label in ("fresh", "old"):
                figures = in_child(urls[label], f"child_measure({made[label]['brands']!r}, "
                                                f"{made[label]['subject']!r}, {round_no}, "
                                                f"{args.repeats})")
                rounds[label].append(figures)
                print(f"round {round_no} {label}: " + " ".join(
                    f"{name}={figures[name]:.1f}" for name in FIGURES) + f" ({load()})",
                      flush=True)
    median = {label: {name: statistics.median(each[name] for each in rounds[label])
                      for name in FIGURES} for label in rounds}
    for label in ("fresh", "old"):
        print(f"{label} (median): " + " ".join(
            f"{name}={median[label][name]:.1f}" for name in FIGURES))
    new, aged = median["fresh"], median["old"]
    print(f"fired={args.fired} empty_ratio={aged['empty_ms'] / new['empty_ms']:.2f} "
          f"fire_ratio={new['fire_per_s'] / aged['fire_per_s']:.2f} "
          f"calendar_ratio={aged['calendar_ms'] / new['calendar_ms']:.2f} "
          f"console_ratio={aged['console_ms'] / new['console_ms']:.2f}")


if __name__ == "__main__":
    main()
