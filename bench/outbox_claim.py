"""The outbox's claim (issue 31, "Fair shares"): how long one claim of 100 takes with 36,000
deliveries due, oldest first across all brands (the claim before) against brands in turn with
live mail first (`timekeeping.timers.outbox._claim`), and how many claims each needs before a
quiet brand's single email is taken.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/outbox_claim.py

A scratch database is made beside the one DATABASE_URL names and dropped after. The due mail:
one brand's burst of 30,000, a test clock's walk of 3,652 on a second brand, 2,347 spread over
50 other brands, and last one quiet brand's single email (36,000 in all). Each claim runs in a
transaction rolled back, so every repeat sees the same rows; the figures are the median and the
slowest of `--repeats`.
Ends with one line: due=… before_ms=… after_ms=… before_claims_to_quiet=… after_claims_to_quiet=…
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

NOW = datetime.now(UTC).replace(microsecond=0)  # noqa: DTZ005 - a benchmark's own setup
LIMIT = 100


def fill() -> str:
    """The due mail; the quiet brand's id."""
    from timekeeping.models import Brand, Delivery, TestClock
    from timekeeping.timers import outbox

    loud = Brand.objects.create(name="Loud", slug="loud")
    walker = Brand.objects.create(name="Walker", slug="walker")
    clock = TestClock.objects.create(brand=walker, name="walk", frozen_time=NOW)
    others = [Brand.objects.create(name=f"Other {n}", slug=f"other-{n}") for n in range(50)]
    quiet = Brand.objects.create(name="Quiet", slug="quiet")
    rows: list[tuple[Brand, dict]] = [(loud, {}) for _ in range(30_000)]
    rows += [(walker, {outbox.WORLD_KEY: clock.pk}) for _ in range(3_652)]
    rows += [(others[n % 50], {}) for n in range(2_347)]
    rows.append((quiet, {}))
    start = NOW - timedelta(hours=1)
    Delivery.objects.bulk_create([
        Delivery(brand=brand, channel=Delivery.Channel.EMAIL,
                 payload={"to": ["x@example.test"], "subject": "s", "body": "b", **extra},
                 idempotency_key=f"bench:{n}", next_attempt=start,
                 created=start + timedelta(milliseconds=n))
        for n, (brand, extra) in enumerate(rows)
    ], batch_size=5000)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE timekeeping_delivery")
    return quiet.pk


def claim_before(now: datetime, limit: int) -> list:
    """The claim as it was: the oldest due across all brands."""
    from django.db.models import Q

    from timekeeping.models import Delivery
    from timekeeping.timers import outbox

    due = Q(state=Delivery.State.PENDING, next_attempt__lte=now) | outbox.sending_past_lease(now)
    return list(Delivery.objects.select_for_update(skip_locked=True).filter(due)
                .order_by("created")[:limit])


def explain() -> None:
    """The plan of the ranking `_claim` reads, with its timings."""
    from django.db import connection, transaction
    from django.db.models import Case, F, IntegerField, Q, Value, When, Window
    from django.db.models.functions import RowNumber

    from timekeeping.models import Delivery
    from timekeeping.timers import outbox

    due = Q(state="pending", next_attempt__lte=NOW) | outbox.sending_past_lease(NOW)
    practice = Case(When(payload__has_key=outbox.WORLD_KEY, then=Value(1)), default=Value(0),
                    output_field=IntegerField())
    ranked = (Delivery.objects.filter(due).alias(practice=practice).annotate(
        turn=Window(RowNumber(), partition_by=[F("brand_id"), practice],
                    order_by=[F("created").asc(), F("id").asc()]))
        .order_by("practice", "turn", "created", "id").values_list("id", flat=True)[:400])
    sql, params = ranked.query.sql_with_params()
    with transaction.atomic(), connection.cursor() as cursor:
        outbox._sort_in_memory()
        cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", params)
        print("\n".join(row[0] for row in cursor.fetchall()))


def statements() -> None:
    """How long each statement of one claim takes (the claim rolled back)."""
    from django.db import connection, transaction

    from timekeeping.timers import outbox

    def timing(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            print(f"  {(time.perf_counter() - started) * 1000:7.1f} ms  {sql[:70]}")

    with connection.execute_wrapper(timing), transaction.atomic():
        outbox._claim(NOW, LIMIT)
        transaction.set_rollback(True)


def timed(claim, repeats: int) -> list[float]:
    from django.db import transaction

    figures = []
    for _ in range(repeats):
        with transaction.atomic():
            started = time.perf_counter()
            claim(NOW, LIMIT)
            figures.append((time.perf_counter() - started) * 1000)
            transaction.set_rollback(True)
    return figures


def claims_to(quiet: str, claim) -> int:
    """Claims (each marked sent, all rolled back after) until the quiet brand's email is taken."""
    from django.db import transaction

    from timekeeping.models import Delivery

    with transaction.atomic():
        for n in range(1, 1000):
            taken = claim(NOW, LIMIT)
            Delivery.objects.filter(pk__in=[d.pk for d in taken]).update(state="succeeded")
            if any(d.brand_id == quiet for d in taken) or not taken:
                transaction.set_rollback(True)
                return n
        transaction.set_rollback(True)
    return -1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--explain", action="store_true",
                        help="print PostgreSQL's plan of the claim's ranking too")
    args = parser.parse_args()
    from tick import postgres_base, scratch_database, setup_django

    with scratch_database(postgres_base(), f"keeping_time_bench_outbox_{os.getpid()}") as url:
        setup_django(url)
        from timekeeping.models import Delivery
        from timekeeping.timers import outbox

        quiet = fill()
        before, after = timed(claim_before, args.repeats), timed(outbox._claim, args.repeats)
        if args.explain:
            explain()
            statements()
        print(f"claim of {LIMIT} with {Delivery.objects.count():,} due, "
              f"{args.repeats} repeats (median / slowest):")
        print(f"  before (oldest first):   {statistics.median(before):7.1f} ms / "
              f"{max(before):7.1f} ms")
        print(f"  after (brands in turn):  {statistics.median(after):7.1f} ms / "
              f"{max(after):7.1f} ms")
        before_n, after_n = claims_to(quiet, claim_before), claims_to(quiet, outbox._claim)
        print(f"  claims until the quiet brand's email is taken: before {before_n}, "
              f"after {after_n}")
        print(f"due={Delivery.objects.count()} before_ms={statistics.median(before):.1f} "
              f"after_ms={statistics.median(after):.1f} before_claims_to_quiet={before_n} "
              f"after_claims_to_quiet={after_n}")


if __name__ == "__main__":
    main()
