"""How the console home and a portal page render as a brand grows (issue 11).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres .venv/bin/python bench/pages.py

Makes two scratch databases beside the one DATABASE_URL names: a brand with 100 subjects and
1,000 occurrences, and one with 10,000 subjects and 100,000 occurrences (ten dates a subject:
nine filing items and a hard payment date; nine subjects in ten kept theirs already, the tenth
has its dates ahead over two years, some near, some passed, each with the rung that rang). In
each it renders, through Django's test client, the owner's console home and a customer's portal
page (one subject) and takes the median of repeated renders.

Ends with one line: console_small_ms=… console_big_ms=… console_ratio=… portal_small_ms=…
portal_big_ms=… portal_ratio=… (target: both ratios ≤ 1.5). Drops the scratch databases.
"""

from __future__ import annotations

import argparse
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

from bench.tick import postgres_base, scratch_database  # noqa: E402

ITEMS = ["US", "US-CA", "US-NY", "US-NJ", "US-TX", "US-WA", "US-IL", "US-MA", "US-PA"]
TAX = json.loads((ROOT / "timekeeping" / "manifests" / "examples" / "tax.json").read_text())


def fill(subjects: int) -> dict:
    """One brand and its people, `subjects` subjects with ten dates each, written in bulk."""
    from django.contrib.auth import get_user_model

    from calendars.rules import Calendar as Rules
    from timekeeping import manifests
    from timekeeping.basics import wallclock
    from timekeeping.models import (
        Brand,
        Clock,
        Customer,
        Job,
        Member,
        Occurrence,
        Subject,
        Timer,
    )

    now = wallclock.wall_now()
    users = get_user_model().objects
    owner = users.create_user("owner", password="pw")
    buyer = users.create_user("buyer", password="pw")
    brand = Brand.objects.create(name="Bench brand", slug="bench", owner=owner)
    Member.objects.create(brand=brand, user=owner, role="owner")
    version = manifests.load(brand, TAX)
    rules = Rules(zone="America/New_York", holidays=("US", "DC"))
    people = Subject.objects.bulk_create(
        [Subject(brand=brand, kind="taxpayer", key=f"{n:08d}", name=f"Subject {n}",
                 zone="America/New_York", bundle=version.bundle) for n in range(subjects)],
        batch_size=5000)
    jobs = Job.objects.bulk_create(
        [Job(brand=brand, subject=subject, service="annual-return", period="2026",
             input={"jurisdictions": ITEMS}, bundle=version.bundle, opened=now)
         for subject in people], batch_size=5000)
    clocks, occurrences, rungs = [], [], []
    for job in jobs:
        for name, hard in (("file", False), ("pay", True)):
            clocks.append(Clock(brand=brand, subject=job.subject, job=job, name=name,
                                title=f"{name} the 2026 return", owner="of_record", hard=hard,
                                bundle=version.bundle, opened=now))
    Clock.objects.bulk_create(clocks, batch_size=5000)
    for n, row in enumerate(clocks):
        subject_n = n // 2
        open_ = subject_n % 10 == 0
        offset = (subject_n * 37) % 730 - 20  # from 20 days ago to two years ahead
        due = (now + timedelta(days=offset)).date()
        for item in (ITEMS if row.name == "file" else [""]):
            occurrences.append(Occurrence(
                clock=row, item=item, rule_due=due, due=due, late_from=rules.late_from(due),
                brand=brand, hard=row.hard, miss_cost=32400 if row.name == "file" else 0,
                status="open" if open_ else "satisfied", settled=None if open_ else now,
                settled_by="" if open_ else "file"))
    Occurrence.objects.bulk_create(occurrences, batch_size=5000)
    for occurrence in occurrences:
        if occurrence.status == "open":
            rungs.append(Timer(brand=brand, key=f"{occurrence.label}:notice 30d", kind="clock",
                               place=6, owed=now - timedelta(days=1), state="fired",
                               fired=now - timedelta(days=1), owner_type="occurrence",
                               owner_id=occurrence.label, owner_opened=now,
                               payload={"rung": "notice 30d"}))
    Timer.objects.bulk_create(rungs, batch_size=5000)
    open_subject = people[0]
    Customer.objects.create(brand=brand, user=buyer).subjects.add(
        open_subject, through_defaults={"brand": brand})
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return {"brand": brand.pk, "occurrences": len(occurrences)}


def median_ms(client, path: str, repeats: int) -> float:
    for _ in range(2):  # warm: templates compiled, manifests cached
        assert client.get(path).status_code == 200, path
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        answer = client.get(path)
        times.append(time.perf_counter() - started)
        assert answer.status_code == 200, path
    return statistics.median(times) * 1000


def measure(url: str, subjects: int, repeats: int) -> tuple[float, float]:
    """Fill and measure in a child process, so each database gets a fresh Django."""
    code = (f"import bench.pages as b; print('RESULT', *b.child({subjects}, {repeats}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "DATABASE_URL": url, "DEBUG": "true"})
    if done.returncode:
        raise SystemExit(done.stderr[-4000:])
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT"))
    _, console, portal = line.split()
    return float(console), float(portal)


def child(subjects: int, repeats: int) -> tuple[float, float]:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import setup_test_environment

    call_command("migrate", verbosity=0)
    setup_test_environment()
    settings.ALLOWED_HOSTS = ["testserver"]
    began = time.perf_counter()
    made = fill(subjects)
    print(f"{subjects} subjects, {made['occurrences']} occurrences in "
          f"{time.perf_counter() - began:.1f}s", file=sys.stderr)
    owner, buyer = Client(), Client()
    owner.login(username="owner", password="pw")
    buyer.login(username="buyer", password="pw")
    return (median_ms(owner, f"/console/{made['brand']}/", repeats),
            median_ms(buyer, "/portal/", repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=100)
    parser.add_argument("--big", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    base = postgres_base()
    figures = {}
    for label, subjects in (("small", args.small), ("big", args.big)):
        with scratch_database(base, f"keeping_time_pages_{label}_{os.getpid()}") as url:
            figures[label] = measure(url, subjects, args.repeats)
        print(f"{label}: console {figures[label][0]:.1f} ms, portal "
              f"{figures[label][1]:.1f} ms", flush=True)
    (cs, ps), (cb, pb) = figures["small"], figures["big"]
    print(f"console_small_ms={cs:.1f} console_big_ms={cb:.1f} console_ratio={cb / cs:.2f} "
          f"portal_small_ms={ps:.1f} portal_big_ms={pb:.1f} portal_ratio={pb / ps:.2f}")


if __name__ == "__main__":
    main()
