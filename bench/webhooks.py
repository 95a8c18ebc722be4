"""Webhooks out (issue 30): events a second through the outbox to a receiver on loopback, and
the tick's firing rate with webhooks on against off.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/webhooks.py
    DATABASE_URL=sqlite:// .venv/bin/python bench/webhooks.py --events 1000

On PostgreSQL a scratch database is made beside the one DATABASE_URL names and dropped after;
with any sqlite:// URL, a scratch file in the temporary directory, removed after. Ten brands,
one endpoint each, all pointed at a receiver on 127.0.0.1 that this script starts in a
subprocess of its own (a threaded HTTP server answering 200 at once, so the figures are the
sender's). Each event is a record a timer's operation writes (`row.moved`), the events spread
evenly over the brands, so `--events` events make as many deliveries. Measured:

- tick_off_per_s, tick_on_per_s: timers fired a second by the tick's timers phase
  (`phases.run_once(sweep=False, phases=False)`), the endpoints off, then on. The tick only
  writes the deliveries; it never waits on a receiver (that is the outbox's sweep);
- events_per_s: the deliveries the outbox's sweeps send a second (signed, posted side by side
  by WEBHOOK_WORKERS threads, logged, settled), until none is left;
- post_p50_ms, post_p95_ms: how long a post took, from connecting to the receiver's answer
  (`WebhookAttempt.duration_ms`, the transport's own measure).

With `--profile`, the sweeps' busiest functions (cProfile, by own time) are printed too.
Ends with one line: events=… tick_off_per_s=… tick_on_per_s=… on_off_ratio=… events_per_s=…
post_p50_ms=… post_p95_ms=…
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

BRANDS = 10
NOW = datetime.now(UTC).replace(microsecond=0)  # noqa: DTZ005 - a benchmark's own setup


class _Answer(BaseHTTPRequestHandler):
    """The receiver: reads the body and answers 200 at once."""

    protocol_version = "HTTP/1.1"

    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


def serve() -> None:
    """The receiver's subprocess: prints its port, serves until its stdin closes."""
    ThreadingHTTPServer.request_queue_size = 256  # the sweep opens 16 connections at once
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    server.daemon_threads = True
    print(server.server_port, flush=True)
    import threading

    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


@contextmanager
def receiver() -> Iterator[str]:
    """A receiver on loopback in a subprocess: its URL."""
    process = subprocess.Popen([sys.executable, __file__, "--serve"], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    try:
        port = int(process.stdout.readline())
        yield f"http://127.0.0.1:{port}/hooks"
    finally:
        process.stdin.close()
        process.wait(timeout=10)


@contextmanager
def database(base: str) -> Iterator[str]:
    """A scratch database for the run, dropped after it: its URL."""
    if base.startswith("sqlite:"):
        folder = tempfile.mkdtemp(prefix="kt-bench-webhooks-")
        path = Path(folder) / "bench.sqlite3"
        try:
            yield f"sqlite:///{path}"
        finally:
            for leftover in Path(folder).iterdir():
                leftover.unlink()
            Path(folder).rmdir()
        return
    from tick import scratch_database

    with scratch_database(base, f"keeping_time_bench_webhooks_{os.getpid()}") as url:
        yield url


def setup(url: str) -> None:
    """Django on the scratch database, DEBUG off, plain http to 127.0.0.1 allowed (the
    receiver), and the operation the timers run: it writes one event."""
    os.environ["WEBHOOK_ALLOW_HTTP"] = "true"
    os.environ["WEBHOOK_ALLOW_HOSTS"] = "127.0.0.1"
    from tick import setup_django

    setup_django(url)
    from timekeeping.timers import delays, records

    @delays.operation("bench.event")
    def event(*, input, now, brand):
        records.write("row.moved", brand=brand, instant=now, data={
            "table": "orders", "row": input["row"], "from": "placed", "to": "cancelled",
            "by": "timed move", "who": "timed move"})


def brands() -> list:
    from timekeeping.models import Brand

    return [Brand.objects.create(name=f"Bench {n}", slug=f"bench-{n}") for n in range(BRANDS)]


def arm(made: list, events: int, *, first: int) -> None:
    """`events` timers owed now, spread over the brands, each writing one event."""
    from django.db import transaction

    from timekeeping.timers import delays

    with transaction.atomic():
        for n in range(first, first + events):
            delays.delay("bench.event", {"row": n}, brand=made[n % BRANDS],
                         at=NOW - timedelta(seconds=1 + n % 50), key=f"bench:{n}")


def fire() -> float:
    """The timers phase alone, tick after tick until nothing is owed: fired a second."""
    from timekeeping.tick import phases

    fired, started = 0, time.perf_counter()
    while True:
        result = phases.run_once(now=NOW, sweep=False, phases=False)
        if not result.total("fired"):
            break
        fired += result.total("fired")
    return fired / (time.perf_counter() - started)


def sweep_all(profile: bool) -> tuple[int, float]:
    """The outbox's sweeps until no webhook is left to send: (sent, seconds)."""
    from timekeeping.models import Delivery
    from timekeeping.timers import outbox

    profiler = cProfile.Profile() if profile else None
    sent, started = 0, time.perf_counter()
    if profiler:
        profiler.enable()
    while Delivery.objects.filter(channel="webhook", state="pending").exists():
        result = outbox.sweep(now=datetime.now(UTC), deadline=time.monotonic() + 60)  # noqa: DTZ005
        sent += result.sent
        if not (result.sent or result.retried or result.failed):
            break
    seconds = time.perf_counter() - started
    if profiler:
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(18)
        print(out.getvalue(), flush=True)
    return sent, seconds


def latencies() -> tuple[float, float]:
    from timekeeping.models import WebhookAttempt

    taken = sorted(WebhookAttempt.objects.values_list("duration_ms", flat=True))
    cuts = statistics.quantiles(taken, n=100, method="inclusive")
    return cuts[49], cuts[94]


def run(events: int, profile: bool) -> None:
    from django.db import connection

    from timekeeping.models import Delivery, WebhookAttempt
    from timekeeping.webhooks import endpoints

    made = brands()
    arm(made, events, first=0)
    off = fire()
    print(f"tick, endpoints off: {off:.0f} fired/s", flush=True)
    with receiver() as url:
        for brand in made:
            endpoints.make(brand, url=url, description="bench")
        arm(made, events, first=events)
        on = fire()
        written = Delivery.objects.filter(channel="webhook").count()
        print(f"tick, endpoints on: {on:.0f} fired/s, {written} deliveries written", flush=True)
        sent, seconds = sweep_all(profile)
    failed = WebhookAttempt.objects.exclude(status=200).count()
    p50, p95 = latencies()
    print(f"outbox: {sent} sent in {seconds:.1f}s ({sent / seconds:.0f}/s), {failed} attempts "
          f"not 200; post p50 {p50:.0f} ms, p95 {p95:.0f} ms", flush=True)
    print(f"database={connection.vendor} events={events} tick_off_per_s={off:.0f} "
          f"tick_on_per_s={on:.0f} on_off_ratio={on / off:.2f} events_per_s={sent / seconds:.0f} "
          f"post_p50_ms={p50:.0f} post_p95_ms={p95:.0f}", flush=True)
    connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--profile", action="store_true",
                        help="print the sweeps' busiest functions (cProfile)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    base = os.environ.get("DATABASE_URL", "")
    if not base.startswith(("postgres://", "postgresql://", "sqlite:")):
        raise SystemExit("DATABASE_URL: give a PostgreSQL URL (postgres://postgres@127.0.0.1:"
                         "5432/postgres) or sqlite://")
    with database(base) as url:
        setup(url)
        run(args.events, args.profile)


if __name__ == "__main__":
    main()
