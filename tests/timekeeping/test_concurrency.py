"""Two ticks at once, and a tick killed mid-pass: real processes on PostgreSQL (DESIGN 4)."""

import signal
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from tests.processes import needs_postgres, start_manage
from timekeeping.models import Brand, Record, TickRun, Timer
from timekeeping.tick import phases
from timekeeping.timers import leases

pytestmark = [needs_postgres, pytest.mark.django_db(transaction=True)]

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def arm_owed(brands: list[Brand], per_brand: int) -> list[Timer]:
    """Owed timers in the past, with ties on owed, keys in mixed case and owners opened apart."""
    made = []
    for b, brand in enumerate(brands):
        for n in range(per_brand):
            made.append(Timer(
                brand=brand, key=f"{'aB'[n % 2]}{n:05d}", kind="delay", place=5,
                owed=T0 + timedelta(seconds=n // 3), owner_opened=T0 - timedelta(days=n % 5),
                owner_id=f"ord_{b}_{n}",
                payload={"operation": "timekeeping.note", "input": {"n": n}, "overdue_s": None},
            ))
    Timer.objects.bulk_create(made, batch_size=2000)
    return made


def fired_counts() -> Counter:
    return Counter(Record.objects.filter(kind="timer.fired").values_list("timer", flat=True))


def tie_order(timers: list[Timer]) -> list[str]:
    ordered = sorted(timers, key=lambda t: (t.owed, t.place, t.owner_opened, t.key.encode()))
    return [t.id for t in ordered]


def fired_order(brand: Brand) -> list[str]:
    started = dict(TickRun.objects.filter(brand=brand).values_list("id", "started"))
    records = Record.objects.filter(kind="timer.fired", brand=brand)
    return [r.timer for r in sorted(records, key=lambda r: (started[r.data["run"]],
                                                             r.data["seq"]))]


def two_ticks_fire_each_once_in_order(brands: list[Brand], timers: list[Timer]) -> None:
    """Two `manage.py tick` processes at once: every timer fired once, each brand's in its
    tie order, each brand ticked by one process (its lease; which one is the race's)."""
    ticks = [start_manage("tick"), start_manage("tick")]
    outputs = [process.communicate(timeout=300) for process in ticks]
    assert [process.returncode for process in ticks] == [0, 0], outputs
    counts = fired_counts()
    assert len(counts) == len(timers) and set(counts.values()) == {1}
    assert not Timer.objects.exclude(state="fired").exists()
    by_brand: dict[str, list[Timer]] = {}
    for timer in timers:
        by_brand.setdefault(timer.brand_id, []).append(timer)
    for brand in brands:
        assert fired_order(brand) == tie_order(by_brand[brand.pk])
        assert TickRun.objects.filter(brand=brand, fired__gt=0).count() == 1


def test_it_fires_5000_timers_exactly_once_with_two_ticks_at_once_in_each_brand_order():
    brands = [Brand.objects.create(name=f"Brand {n}", slug=f"brand-{n}") for n in range(10)]
    timers = arm_owed(brands, 500)
    assert len(timers) == 5000
    two_ticks_fire_each_once_in_order(brands, timers)


def test_two_ticks_at_once_fire_300_small_clocks_in_groups_exactly_once_in_order():
    brands = [Brand.objects.create(name=f"Small {n}", slug=f"small-{n}") for n in range(300)]
    timers = arm_owed(brands, 6)
    assert len(timers) == 1800
    two_ticks_fire_each_once_in_order(brands, timers)
    assert not TickRun.objects.filter(finished__isnull=True).exists()
    assert not Brand.objects.exclude(lease_holder="").exists()


def test_it_loses_nothing_and_doubles_nothing_when_a_tick_is_killed_mid_pass():
    brand = Brand.objects.create(name="Killed", slug="killed")
    arm_owed([brand], 30_000)
    victim = start_manage("tick")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done = Record.objects.filter(kind="timer.fired").count()
        if done >= 1000:
            break
        time.sleep(0.01)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    done_when_killed = Record.objects.filter(kind="timer.fired").count()
    assert 0 < done_when_killed < 30_000, "the tick was not caught mid-pass"
    # The killed tick's lease is still live on the clock; its holder is gone, so the next
    # tick takes the clock at once instead of waiting for the lease to run out.
    brand.refresh_from_db()
    assert brand.lease_holder.split(":")[1] == str(victim.pid)
    result = phases.run_once()
    assert not result.skipped
    # The rest may outlast one tick's budget on a slow machine: cron's next ticks go on.
    for _ in range(10):
        if not Timer.objects.filter(state="armed").exists():
            break
        phases.run_once()
    counts = fired_counts()
    assert len(counts) == 30_000 and set(counts.values()) == {1}
    assert Record.objects.filter(kind="note").count() == 30_000
    assert not Timer.objects.exclude(state="fired").exists()
    assert leases.HOST in brand.lease_holder


def test_timer_keys_compare_byte_by_byte_whatever_the_database_collation():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT collation_name FROM information_schema.columns WHERE "
                       "table_name = 'timekeeping_timer' AND column_name = 'key'")
        assert cursor.fetchone() == ("C",)
