"""Erasing a subject with years of history (issue 31 item 4): how long one erasure takes, and
what it reads and rewrites, on PostgreSQL with the records partitioned by month.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/erase.py

A scratch database is made beside the one DATABASE_URL names and dropped after. One brand
(the tax manifest) keeps the subject to erase, with `--jobs` jobs ordered through the product
(each opens its dates, reminders, ask and task), `--records` records of its own (one in ten
naming its customer, as a customer's action does), and `--others` records and `--emails` sent
emails of the brand's other subjects (one in twenty emails naming the subject, as a digest
does). The erasure runs once; its figure is the wall time of the whole transaction.
Ends with one line: records=… emails=… erase_ms=… rewritten=… timers=… dropped=…
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

NOW = datetime.now(UTC).replace(microsecond=0)  # noqa: DTZ005 - a benchmark's own setup


def fill(jobs: int, own: int, others: int, emails: int):
    """The brand and the subject to erase."""
    import copy
    import json

    from timekeeping import clocks, manifests
    from timekeeping.basics import wallclock
    from timekeeping.demo import TAX_MANIFEST
    from timekeeping.models import Brand, Customer, Delivery, Record
    from timekeeping.subjects import making

    brand = Brand.objects.create(name="Northwind Filing", slug="northwind")
    manifests.load(brand, copy.deepcopy(json.loads(TAX_MANIFEST.read_text())))
    with wallclock.fixed(NOW):
        subject = making.make(brand, kind="taxpayer", key="12-3456789", name="Juniper Labs",
                              contact_email="books@juniper.example", owner_name="Sam Reyes")
        for n in range(jobs):
            clocks.order(brand=brand, service="annual-return", subject=subject,
                         period=str(2030 + n), input={"jurisdictions": ["US", "US-CA"]})
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("books@juniper.example",
                                                email="books@juniper.example")
    Customer.objects.create(brand=brand, user=user).subjects.add(
        subject, through_defaults={"brand": brand})
    start = NOW - timedelta(days=3650)
    Record.objects.bulk_create([
        Record(kind="clock.acknowledged", instant=start + timedelta(minutes=n), brand=brand,
               subject=subject.pk, data={"by": f"user {user.pk} (books@juniper.example)"
                                         if n % 10 == 0 else "user 1 (owner)", "item": "US"})
        for n in range(own)], batch_size=5000)
    Record.objects.bulk_create([
        Record(kind="clock.acknowledged", instant=start + timedelta(minutes=n), brand=brand,
               subject=f"sbj_other{n % 500:011d}", data={"by": "user 1 (owner)"})
        for n in range(others)], batch_size=5000)
    Delivery.objects.bulk_create([
        Delivery(brand=brand, channel=Delivery.Channel.EMAIL, state="succeeded",
                 payload={"to": ["owner@northwind.example"], "subject": "Daily digest",
                          "body": ("Juniper Labs: pay the tax" if n % 20 == 0 else
                                   "Cedar Mill: pay the tax")},
                 idempotency_key=f"digest:bench:{n}", next_attempt=start, created=start)
        for n in range(emails)], batch_size=5000)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return subject


def _passing(execute, sql, params, many, context):
    return execute(sql, params, many, context)


def _timing(spent: dict[str, list[float]]):
    """A wrapper that adds each statement's time to `spent`, by the statement's first words."""
    def timing(execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            key = " ".join(sql.split()[:8])[:90]
            spent.setdefault(key, []).append((time.perf_counter() - started) * 1000)
    return timing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--others", type=int, default=500_000)
    parser.add_argument("--emails", type=int, default=50_000)
    parser.add_argument("--statements", action="store_true",
                        help="print where the time went, by statement")
    args = parser.parse_args()
    from tick import postgres_base, scratch_database, setup_django

    with scratch_database(postgres_base(), f"keeping_time_bench_erase_{os.getpid()}") as url:
        setup_django(url)
        from django.db import connection

        from timekeeping.models import Record
        from timekeeping.subjects import erasing

        subject = fill(args.jobs, args.records, args.others, args.emails)
        own = Record.objects.filter(subject=subject.pk).count()
        spent: dict[str, list[float]] = {}
        started = time.perf_counter()
        with connection.execute_wrapper(_timing(spent) if args.statements else _passing):
            done = erasing.erase(subject, by="the bench")
        took = (time.perf_counter() - started) * 1000
        for sql, each in sorted(spent.items(), key=lambda item: -sum(item[1]))[:8]:
            print(f"  {sum(each):8.1f} ms  {len(each):6,}×  {sql}")
        print(f"erased a subject with {args.jobs} jobs and {own:,} records, beside "
              f"{args.others:,} records and {args.emails:,} emails of its brand: "
              f"{took:,.0f} ms")
        print(f"  {done.counts()}")
        print(f"records={own} emails={args.emails} erase_ms={took:.0f} "
              f"rewritten={done.records} timers={done.timers} dropped={done.emails}")


if __name__ == "__main__":
    main()
