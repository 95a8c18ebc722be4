"""Load held (issue 31): 50 people and programs on the console, the portal and the API while
the tick fires a backlog of 200,000 timers on the same PostgreSQL.

    .venv/bin/python bench/load.py [--database-url postgres://postgres@127.0.0.1:5432/kt_load_bench]

Makes the database the URL names (it must not exist; `--reuse` takes one this benchmark made
and kept with `--keep`) and fills it once as a template: a practice with `--subjects` subjects
and ten dates each (bench/pages.py's fill; the pay dates the customer's, as the tax manifest
says), its members, customers and API keys, and the backlog: `--backlog` owed no-op timers
over 10 other brands (bench/brands.py's fill). Then, each phase on its own copy of it:

1. unloaded: `manage.py tick` fires the backlog, `--unloaded-passes` times (the backlog armed
   again between passes, and the timers' table vacuumed, as bench/tick.py resets it);
2. loaded: the web (gunicorn as deploy/ runs it when it is installed, the `deploy` extra;
   else `manage.py runserver --noreload`), on 127.0.0.1 only, and `--users` locust users
   signed in (a third each on the console, the portal and the API, each waiting `--wait`
   seconds between requests), reading and writing: the at-risk page, the subjects, a
   subject's page, a portal subject's dates, the API's subjects, jobs and records; making a
   subject, ordering its job and postponing its dates, acknowledging a date and undoing it.
   Once every user is signed in, the window opens and the tick fires the backlog, pass after
   pass as in phase 1, until `--seconds` have passed (the last pass ends the window).

Each phase ends by checking that every backlog timer fired once a pass (none left armed, one
`timer.fired` record a pass each). The server runs with DEBUG off and the throttles raised so
they never refuse (their counting still runs); the benchmark prints which settings it set.

Prints per kind of request and in total: requests per second, p50/p95/p99 latency (ms) and
errors; the same while the tick fired; the tick's rate unloaded and loaded. Ends with one line:
rps=… p50_ms=… p95_ms=… p99_ms=… errors=… tick_unloaded=… tick_loaded=… tick_ratio=…
(targets: 0 errors, p95 under 500 ms, tick_ratio at least 0.7). Drops what it made.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import math
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# Locust patches the standard library for gevent when it is imported (the main process only:
# the fill runs in a child with LOCUST_SKIP_MONKEY_PATCH set). psycopg picks how it waits when
# it is first imported, cooperatively only if the patch came first: so locust before psycopg
# (here and in the bench modules below), or every query would stop the users while it runs.
# The users are in bench/load_users.py.
import gevent  # noqa: E402
import psutil  # noqa: E402
from locust import between  # noqa: E402
from locust.env import Environment  # noqa: E402
from locust.runners import Runner  # noqa: E402
from psycopg import connect, waiting  # noqa: E402

from bench.load_users import ApiUser, Cast, ConsoleUser, Person, PortalUser  # noqa: E402
from bench.processes import child_env, together  # noqa: E402
from bench.tick import admin_connect, scratch_database, scratch_url  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/kt_load_bench"
BACKLOG_BRANDS = 10
# Throttles raised past anything the run can reach, so none refuses; API keys, people and
# addresses are still counted on every request, as deployed.
SERVER_SETTINGS = {
    "API_RATE_PER_KEY": "9999999/min", "API_RATE_PER_PERSON": "9999999/min",
    "API_RATE_PER_ADDRESS": "9999999/min", "LINK_RATE_PER_ADDRESS": "9999999/min",
    "AXES_FAILURE_LIMIT": "1000",
    # Plain http on loopback: a deployment's proxy ends TLS and redirects; without these the
    # cookies would be Secure and never sent back over http.
    "SECURE_SSL_REDIRECT": "false", "SESSION_COOKIE_SECURE": "false",
    "CSRF_COOKIE_SECURE": "false", "SECURE_HSTS_SECONDS": "0",
    "ALLOWED_HOSTS": "127.0.0.1",
}


# -- the world: filled once in a child process (Django), then copied for each phase ----------

def fill_child(subjects: int, backlog: int, users: int) -> None:
    """In a child with DATABASE_URL set: migrate, fill, and keep the world's description in
    the database (table kt_load_world), for this run and a later `--reuse`."""
    from bench import brands, pages
    from bench.tick import setup_django

    setup_django(os.environ["DATABASE_URL"])
    made = pages.fill(subjects)
    world = people_and_keys(made["brand"], users)
    world["backlog_brands"] = brands.fill(BACKLOG_BRANDS, backlog // BACKLOG_BRANDS)
    world["sizes"] = {"subjects": subjects, "backlog": backlog, "users": users}
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE kt_load_world (doc text)")
        cursor.execute("INSERT INTO kt_load_world VALUES (%s)", [json.dumps(world)])


def people_and_keys(brand_id: str, users: int) -> dict:
    """Members (managers), customers and API keys, `users` of each, and what they act on."""
    from django.contrib.auth import get_user_model

    from timekeeping.access import keys
    from timekeeping.basics import wallclock
    from timekeeping.models import Brand, Clock, Customer, Job, Member, Subject

    brand = Brand.objects.get(pk=brand_id)
    # The tax manifest's pay date is the buyer's (bench/pages.py writes every date of record).
    Clock.objects.filter(brand=brand, name="pay").update(owner="buyer")
    users_ = get_user_model().objects
    hashed = users_.get(username="owner").password  # one hash for all: no 100 slow hashings
    staff = users_.bulk_create([users_.model(username=f"staff-{n}", password=hashed)
                                for n in range(users)])
    Member.objects.bulk_create([Member(brand=brand, user=user, role="manager") for user in staff])
    opened = list(Subject.objects.filter(brand=brand, clocks__occurrences__status="open")
                  .distinct().order_by("key"))
    buyers = users_.bulk_create([users_.model(username=f"buyer-{n}", password=hashed)
                                 for n in range(users)])
    for n, user in enumerate(buyers):
        Customer.objects.create(brand=brand, user=user).subjects.add(
            opened[n % len(opened)], through_defaults={"brand": brand})
    clocks = {(row.subject_id, row.name): row.pk for row in Clock.objects.filter(brand=brand)}
    now = wallclock.wall_now()
    return {
        "brand": brand.pk,
        "open": [{"subject": subject.pk, "file": clocks[subject.pk, "file"],
                  "pay": clocks[subject.pk, "pay"]} for subject in opened],
        "subjects": list(Subject.objects.filter(brand=brand).values_list("pk", flat=True)),
        "jobs": list(Job.objects.filter(brand=brand).values_list("pk", flat=True)[:500]),
        "keys": [keys.make(brand=brand, name=f"load {n}", by=brand.owner, now=now).secret
                 for n in range(users)],
    }


def claim(admin: str, name: str, args: argparse.Namespace) -> bool:
    """Make the template database `name`: True. With `--reuse`, take the one kept: False.
    A database of that name made by anyone else is refused, and never dropped."""
    with admin_connect(admin) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists and not args.reuse:
            raise SystemExit(f"--database-url: the database {name!r} exists; drop it, name "
                             "another, or add --reuse if this benchmark kept it (--keep)")
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')
    return not exists


def template(admin: str, name: str, args: argparse.Namespace, *, fill: bool) -> dict:
    """Fill the template database `name` (or read the one kept): its world."""
    url = scratch_url(admin, name)
    if fill:
        began = time.perf_counter()
        code = (f"import bench.load as b; b.fill_child({args.subjects}, {args.backlog}, "
                f"{args.users})")
        env = {**child_env(url), "LOCUST_SKIP_MONKEY_PATCH": "1"}
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                              capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"filling {name} failed:\n{done.stderr[-4000:]}")
        with admin_connect(url) as conn:
            conn.execute("VACUUM ANALYZE")
        print(f"template {name}: filled in {time.perf_counter() - began:.0f} s", flush=True)
    with connect(pg(url)) as conn:
        world = json.loads(conn.execute("SELECT doc FROM kt_load_world").fetchone()[0])
    sizes = {"subjects": args.subjects, "backlog": args.backlog, "users": args.users}
    if world["sizes"] != sizes:
        raise SystemExit(f"--reuse: {name} was filled for {world['sizes']}, not {sizes}")
    return world


def pg(url: str) -> str:
    return url.replace("postgres://", "postgresql://", 1)


# -- the tick: passes over the backlog, and the check that each fired it exactly once --------

@dataclass
class Pass:
    began: float  # epoch seconds, as the request log keeps them
    ended: float
    fired: int  # the backlog's timers, from the tick's own runs
    span: float  # from the first of those runs' start to the last one's end

    @property
    def rate(self) -> float:
        return self.fired / self.span if self.span else 0.0


def tick_pass(url: str, backlog_brands: list[str]) -> Pass:
    """One `manage.py tick` process, as cron starts it but with the budget to finish."""
    began = time.time()
    _, outputs = together([[sys.executable, "manage.py", "tick", "--budget", "3600"]],
                          child_env(url))
    ended = time.time()
    faults = [fault for line in outputs[0].splitlines() if '"event": "tick"' in line
              for fault in json.loads(line)["faults"]]
    if faults:
        raise SystemExit(f"the tick recorded faults: {faults[:5]}")
    with connect(pg(url)) as conn:
        fired, span = conn.execute(
            "SELECT coalesce(sum(fired), 0), extract(epoch FROM max(finished) - min(started)) "
            "FROM timekeeping_tickrun WHERE brand_id = ANY(%s) AND started >= to_timestamp(%s)",
            (backlog_brands, began)).fetchone()
    return Pass(began, ended, int(fired), float(span or 0))


def rearm(url: str, backlog_brands: list[str]) -> None:
    """The same backlog owed again, the timers' table vacuumed: each pass starts alike."""
    with connect(pg(url), autocommit=True) as conn:
        conn.execute("UPDATE timekeeping_timer SET state = 'armed', fired = NULL, late_by = NULL "
                     "WHERE brand_id = ANY(%s) AND state = 'fired'", (backlog_brands,))
        conn.execute("VACUUM ANALYZE timekeeping_timer")


def fire_passes(url: str, world: dict, label: str, until: float, most: int) -> list[Pass]:
    """Passes until `until` (epoch seconds) has passed or `most` were made."""
    passes: list[Pass] = []
    while len(passes) < most and (not passes or time.time() < until):
        if passes:
            rearm(url, world["backlog_brands"])
        passes.append(tick_pass(url, world["backlog_brands"]))
        done = passes[-1]
        print(f"{label} pass {len(passes)}: {done.fired} fired in {done.span:.1f} s, "
              f"{done.rate:.0f}/s (process {done.ended - done.began:.1f} s; load average "
              f"{os.getloadavg()[0]:.1f})", flush=True)
    exactly_once(url, world, len(passes))
    return passes


def exactly_once(url: str, world: dict, passes: int) -> None:
    """Every backlog timer fired once a pass, or SystemExit saying what is wrong."""
    total = world["sizes"]["backlog"] // BACKLOG_BRANDS * BACKLOG_BRANDS
    with connect(pg(url)) as conn:
        armed, records, off = conn.execute(
            "SELECT (SELECT count(*) FROM timekeeping_timer WHERE brand_id = ANY(%(b)s) "
            "        AND state <> 'fired'), "
            "(SELECT count(*) FROM timekeeping_record WHERE brand_id = ANY(%(b)s) "
            "        AND kind = 'timer.fired'), "
            "(SELECT count(*) FROM (SELECT timer FROM timekeeping_record WHERE brand_id = "
            " ANY(%(b)s) AND kind = 'timer.fired' GROUP BY timer HAVING count(*) <> %(p)s) AS x)",
            {"b": world["backlog_brands"], "p": passes}).fetchone()
    said = f"{armed} not fired, {records} records for {passes} × {total}, {off} timers off"
    if (armed, records, off) != (0, passes * total, 0):
        raise SystemExit(f"NOT exactly once: {said}")
    print(f"exactly once: {said}", flush=True)


# -- the web server ----------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serving(url: str, args: argparse.Namespace
            ) -> Iterator[tuple[str, str, subprocess.Popen]]:
    """The web on 127.0.0.1 as deploy/ runs it: its address, what serves it, its process."""
    port = free_port()
    if importlib.util.find_spec("gunicorn"):
        command = [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind",
                   f"127.0.0.1:{port}", "--workers", str(args.workers), "--timeout", "60"]
        said = f"gunicorn, {args.workers} sync workers (deploy/keeping-time-web.service)"
    else:
        command = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"]
        said = "manage.py runserver --noreload (threaded; gunicorn is not installed)"
    env = {**child_env(url), **SERVER_SETTINGS, "CONN_MAX_AGE": str(args.conn_max_age)}
    with args.server_log.open("w") as log:
        server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log,
                                  stderr=subprocess.STDOUT)
    host = f"http://127.0.0.1:{port}"
    try:
        ready(host, server)
        yield host, said, server
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def ready(host: str, server: subprocess.Popen) -> None:
    for _ in range(240):
        if server.poll() is not None:
            raise SystemExit(f"the web server exited {server.returncode}")
        try:
            with urllib.request.urlopen(f"{host}/accounts/login/", timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        gevent.sleep(0.5)
    raise SystemExit("the web server did not answer within 2 minutes")


# -- what the users met, kept per request --------------------------------------------------------

@dataclass
class Heard:
    """Every answer: when its request began, its kind, how long it took, its error if any."""

    answers: list[tuple[float, str, float, str]] = field(default_factory=list)

    def request(self, request_type, name, response_time, response_length, response=None,
                context=None, exception=None, start_time=None, **_) -> None:
        error = "" if exception is None else str(exception)[:100]
        self.answers.append((start_time or time.time(), name, response_time, error))


def percentile(ordered: list[float], share: float) -> float:
    """The nearest-rank percentile of sorted values."""
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)] if ordered else 0.0


def figures(answers: list[tuple[float, str, float, str]], seconds: float) -> dict:
    times = sorted(answer[2] for answer in answers)
    return {"count": len(answers), "rps": len(answers) / seconds if seconds else 0.0,
            "p50": percentile(times, 0.50), "p95": percentile(times, 0.95),
            "p99": percentile(times, 0.99), "max": times[-1] if times else 0.0,
            "errors": sum(1 for answer in answers if answer[3])}


def table(answers: list, seconds: float, title: str) -> dict:
    """Print the figures per kind and in total; the total's."""
    print(f"\n{title}\n{'kind':<34} {'count':>6} {'rps':>6} {'p50':>6} {'p95':>6} {'p99':>6} "
          f"{'max':>6} {'errors':>6}")
    by_kind = defaultdict(list)
    for answer in answers:
        by_kind[answer[1]].append(answer)
    rows = [(kind, figures(found, seconds)) for kind, found in sorted(by_kind.items())]
    total = figures(answers, seconds)
    for kind, row in [*rows, ("total", total)]:
        print(f"{kind:<34} {row['count']:>6} {row['rps']:>6.1f} {row['p50']:>6.0f} "
              f"{row['p95']:>6.0f} {row['p99']:>6.0f} {row['max']:>6.0f} {row['errors']:>6}")
    return total


# -- the phases ----------------------------------------------------------------------------------

def loaded(base: str, name: str, world: dict, args: argparse.Namespace
           ) -> tuple[Heard, list[Pass], float, float]:
    """The web under load while the tick fires, pass after pass: what was heard, the passes,
    and the window (epoch seconds)."""
    heard = Heard()
    with scratch_database(base, f"{name}_loaded", template=name) as url, \
            serving(url, args) as (host, said, server):
        print(f"web: {said} on {host}; DEBUG off, CONN_MAX_AGE={args.conn_max_age}; set for "
              "the run: " + ", ".join(f"{key}={value}" for key, value in SERVER_SETTINGS.items()),
              flush=True)
        print(f"load: {args.users} users, {args.spawn_rate:g} started a second, each waiting "
              f"{args.wait} s between requests; the window {args.seconds:g} s", flush=True)
        runner = start_users(host, world, args, heard)
        opened, cpu = time.time(), Cpu(server.pid, url.rsplit("/", 1)[1])
        passes = fire_passes(url, world, "loaded", opened + args.seconds, most=10_000)
        gevent.sleep(max(0.0, opened + args.seconds - time.time()))
        closed = time.time()
        cpu.said(closed - opened)
        runner.quit()
        for problem in runner.exceptions.values():  # a user's own code failed: an error too
            heard.answers.append((opened, "exception in a user", 0.0, problem["msg"][:100]))
    return heard, passes, opened, closed


def start_users(host: str, world: dict, args: argparse.Namespace, heard: Heard) -> Runner:
    """Locust's users, started and signed in: a third each on the console, the portal and
    the API (equal weights), each heard as it answers."""
    Cast.world = world
    low, high = (float(part) for part in args.wait.split("-"))
    for user in (Person, ApiUser):
        user.wait_time = between(low, high)
    env = Environment(user_classes=[ConsoleUser, PortalUser, ApiUser], host=host)
    env.events.request.add_listener(heard.request)
    runner = env.create_local_runner()
    runner.start(args.users, spawn_rate=args.spawn_rate)
    signed_in(args.users)
    return runner


class Cpu:
    """Where the machine's CPU went from now on, read from every process once a second: the
    web (the server's processes), the tick (this process's other children), locust (this
    process), PostgreSQL's processes for the benchmark's database and the rest of PostgreSQL
    (other databases, its own processes), and the machine's other work. A process that begins
    and ends between two readings (a backend for one request, with CONN_MAX_AGE 0) is counted
    only in the machine's total, as unseen."""

    PARTS = ("the web", "the tick", "PostgreSQL, this database", "locust",
             "PostgreSQL, the rest", "other work")

    def __init__(self, server: int, database: str) -> None:
        self.server, self.database = psutil.Process(server), database
        self.seen: dict[tuple[int, float], tuple[str, float]] = {}
        self.spent: Counter[str] = Counter()
        self.began = self.machine()
        self.opened = time.time()
        self.watching = gevent.spawn(self.watch)

    @staticmethod
    def machine() -> tuple[float, float]:
        times = psutil.cpu_times()
        return sum(times) - times.idle - getattr(times, "iowait", 0.0), times.idle

    def part(self, process: psutil.Process, web: set[int], children: set[int]) -> str:
        if process.pid in web:
            return "the web"
        if process.pid in children:
            return "the tick"
        if process.pid == os.getpid():
            return "locust"
        if process.name() != "postgres":
            return "other work"
        mine = self.database in " ".join(process.cmdline())
        return "PostgreSQL, this database" if mine else "PostgreSQL, the rest"

    def read(self) -> None:
        web = {self.server.pid, *(each.pid for each in self.server.children(recursive=True))}
        children = {each.pid for each in psutil.Process().children(recursive=True)} - web
        for process in psutil.process_iter():
            try:
                key = (process.pid, process.create_time())
                total = sum(process.cpu_times()[:2])
                part = self.seen[key][0] if key in self.seen else self.part(process, web,
                                                                             children)
            except psutil.Error:
                continue
            before = self.seen.get(key, (part, 0.0 if key[1] > self.opened else total))[1]
            self.spent[part] += total - before
            self.seen[key] = (part, total)

    def watch(self) -> None:
        self.read()
        while True:
            gevent.sleep(1.0)
            self.read()

    def said(self, seconds: float) -> None:
        self.watching.kill()
        self.read()
        busy, idle = (now - then for now, then in zip(self.machine(), self.began, strict=True))
        unseen = busy - sum(self.spent.values())
        print(f"CPU in the window, of {psutil.cpu_count()} cores × {seconds:.0f} s: "
              + ", ".join(f"{part} {self.spent[part]:.0f} s" for part in self.PARTS)
              + f", unseen {unseen:.0f} s, idle {idle:.0f} s; load average "
              f"{os.getloadavg()[0]:.1f}", flush=True)


def signed_in(users: int) -> None:
    began = time.time()
    while Cast.signed_in < users:
        if time.time() - began > 600:
            raise SystemExit(f"only {Cast.signed_in} of {users} users signed in in 10 minutes")
        gevent.sleep(0.5)
    print(f"{users} users signed in after {time.time() - began:.0f} s", flush=True)


def report(heard: Heard, passes: list[Pass], unloaded: list[Pass], opened: float,
           closed: float) -> None:
    inside = [answer for answer in heard.answers if opened <= answer[0] < closed]
    total = table(inside, closed - opened, f"the window: {closed - opened:.0f} s "
                  "(ms; rps over the window)")
    firing = [answer for answer in inside
              if any(run.began <= answer[0] < run.ended for run in passes)]
    fired_for = sum(run.ended - run.began for run in passes)
    during = figures(firing, fired_for)
    print(f"\nwhile a tick process ran ({fired_for:.0f} s of the window): {during['count']} "
          f"requests, {during['rps']:.1f}/s, p50 {during['p50']:.0f} ms, p95 "
          f"{during['p95']:.0f} ms, p99 {during['p99']:.0f} ms, {during['errors']} errors")
    errors = Counter((answer[1], answer[3]) for answer in inside if answer[3])
    for (kind, error), count in errors.most_common(20):
        print(f"error: {count} × {kind}: {error}")
    starts = sorted([opened, *(answer[0] for answer in inside), closed])
    print(f"longest stretch with no request begun: "  # the users' or the server's stall
          f"{max(b - a for a, b in itertools.pairwise(starts)):.1f} s")
    before = [answer for answer in heard.answers if answer[0] < opened]
    signing = figures(before, 1.0)
    print(f"before the window (while the users signed in): {signing['count']} requests, p50 "
          f"{signing['p50']:.0f} ms, max {signing['max']:.0f} ms, {signing['errors']} errors")
    quiet, busy = rate(unloaded), rate(passes)
    print(f"tick: unloaded {quiet:.0f}/s over {len(unloaded)} pass(es), loaded {busy:.0f}/s "
          f"over {len(passes)}; ratio {busy / quiet:.2f}")
    print(f"rps={total['rps']:.1f} p50_ms={total['p50']:.0f} p95_ms={total['p95']:.0f} "
          f"p99_ms={total['p99']:.0f} errors={total['errors']} tick_unloaded={quiet:.0f} "
          f"tick_loaded={busy:.0f} tick_ratio={busy / quiet:.2f}")


def rate(passes: list[Pass]) -> float:
    return sum(run.fired for run in passes) / sum(run.span for run in passes)


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=DEFAULT_URL,
                        help="the template database to make (copies beside it per phase)")
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--spawn-rate", type=float, default=10, help="users started a second")
    parser.add_argument("--seconds", type=float, default=300, help="the loaded window")
    parser.add_argument("--backlog", type=int, default=200_000)
    parser.add_argument("--subjects", type=int, default=1000)
    parser.add_argument("--wait", default="5-15",
                        help="seconds a user waits between requests, from-to")
    parser.add_argument("--workers", type=int, default=3, help="gunicorn's workers")
    parser.add_argument("--conn-max-age", type=int, default=0,
                        help="the server's CONN_MAX_AGE (0, the default: a connection a request)")
    parser.add_argument("--unloaded-passes", type=int, default=2)
    parser.add_argument("--server-log", type=Path, default=Path("/tmp/kt_load_server.log"))
    parser.add_argument("--answers", type=Path,
                        help="also write every answer and the passes to this file (JSON)")
    parser.add_argument("--keep", action="store_true", help="keep the filled template")
    parser.add_argument("--reuse", action="store_true", help="take the template kept")
    args = parser.parse_args()
    if not args.database_url.startswith(("postgres://", "postgresql://")):
        raise SystemExit("--database-url: a PostgreSQL URL, e.g. " + DEFAULT_URL)
    if not re.fullmatch(r"\d+(\.\d+)?-\d+(\.\d+)?", args.wait):
        raise SystemExit(f"--wait: seconds from-to, e.g. 5-15, not {args.wait!r}")
    if args.subjects < 10 * math.ceil(args.users / 3):
        # One subject in ten has open dates (bench/pages.py), one for each user of a door.
        raise SystemExit(f"--subjects: at least {10 * math.ceil(args.users / 3)} for "
                         f"{args.users} users, so that each acts on dates of its own")
    return args


def main() -> None:
    if waiting.wait is getattr(waiting, "wait_c", None):
        raise SystemExit("psycopg was imported before locust patched the standard library: "
                         "its queries would stop the users while they run")
    args = arguments()
    name = args.database_url.rsplit("/", 1)[1]
    admin = scratch_url(args.database_url, "postgres")
    made = claim(admin, name, args)  # from here on the template is the benchmark's own
    try:
        world = template(admin, name, args, fill=made)
        print(f"world: one brand of {args.subjects} subjects ({len(world['open'])} with open "
              f"dates), {args.users} members, customers and API keys each; backlog "
              f"{args.backlog} owed timers over {BACKLOG_BRANDS} brands", flush=True)
        with scratch_database(admin, f"{name}_unloaded", template=name) as url:
            unloaded = fire_passes(url, world, "unloaded", math.inf, most=args.unloaded_passes)
        heard, passes, opened, closed = loaded(admin, name, world, args)
    finally:
        if not args.keep:
            with admin_connect(admin) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    report(heard, passes, unloaded, opened, closed)
    if args.answers:  # for reading the run again: when each slow answer came, beside the passes
        args.answers.write_text(json.dumps({
            "window": [opened, closed], "answers": heard.answers,
            "passes": [[run.began, run.ended, run.fired, run.span] for run in passes]}))


if __name__ == "__main__":
    main()
