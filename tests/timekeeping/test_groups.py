"""Small brand clocks ticked together (`tick.groups.Group`): the same firings, order and
isolation as a clock ticked alone, for a number of queries that does not grow with the number
of clocks."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from timekeeping.basics import wallclock
from timekeeping.models import Brand, Fault, Record, TickRun, Timer
from timekeeping.tick import groups, phases
from timekeeping.tick.engine import Engine
from timekeeping.timers import delays

# New York on the morning clocks went back (01:30 EDT, then 01:30 EST an hour later).
T0 = datetime(2026, 11, 1, 5, 30, tzinfo=UTC)


@delays.operation("tests.groups.explode")
def explode(*, input, now, brand):
    raise RuntimeError(f"boom {input['n']}")


@delays.operation("tests.groups.chain")
def chain(*, input, now, brand):
    if input["left"]:
        delays.delay("tests.groups.chain", {"left": input["left"] - 1}, brand=brand, at=now,
                     key=f"chain:{input['left'] - 1}")
    return f"{input['left']} left"


def brands(first: int, count: int) -> list[Brand]:
    return [Brand.objects.create(name=f"Group {n}", slug=f"group-{n}")
            for n in range(first, first + count)]


def owe(brand: Brand, count: int, at: datetime, operation: str = "timekeeping.note") -> list[str]:
    """`count` timers owed in reverse key order, so the tie order is not the arming order."""
    return [delays.delay(operation, {"n": n}, brand=brand, at=at - timedelta(seconds=n),
                         key=f"k{n}") for n in range(count)]


def fired_in_order(brand: Brand) -> list[str]:
    records = Record.objects.filter(brand=brand, kind="timer.fired")
    return [r.timer for r in sorted(records, key=lambda r: (r.data["pass"], r.data["seq"]))]


def test_three_clocks_or_twenty_cost_the_tick_the_same_queries(db):
    # (Twenty clocks of two: SQLite's bulk insert splits more records into two statements.)
    few, many = brands(0, 3), brands(3, 20)
    owed_few = {brand.pk: owe(brand, 2, T0) for brand in few}
    with CaptureQueriesContext(connection) as first:
        one = phases.run_once(now=T0, phases=False, sweep=False)
    later = T0 + timedelta(hours=1)  # the same wall time an hour on: 01:30 EST
    owed_many = {brand.pk: owe(brand, 2, later) for brand in many}
    with CaptureQueriesContext(connection) as second:
        two = phases.run_once(now=later, phases=False, sweep=False)
    assert len(second.captured_queries) == len(first.captured_queries)
    assert (one.total("fired"), two.total("fired")) == (6, 40)
    for brand_id, owed in {**owed_few, **owed_many}.items():
        # Owed a second apart, latest key first: the clock fires them oldest first.
        assert fired_in_order(Brand(pk=brand_id)) == owed[::-1]
    runs = TickRun.objects.filter(brand__in=many)
    assert runs.count() == 20
    assert {(run.instant, run.fired, run.passes, run.error) for run in runs} == {
        (later, 2, 1, "")}
    assert not runs.filter(finished__isnull=True).exists()
    assert not Brand.objects.exclude(lease_holder="").exists()


def test_a_clock_in_a_group_fires_its_chain_in_later_passes_alone(db):
    chained, plain = brands(0, 2)
    owe(chained, 1, T0, "tests.groups.chain")
    Timer.objects.filter(brand=chained).update(payload={
        "operation": "tests.groups.chain", "input": {"left": 3}, "overdue_s": None})
    owe(plain, 2, T0)
    result = phases.run_once(now=T0, phases=False, sweep=False)
    runs = {tick_.run.brand_id: tick_.run for tick_ in result.clocks}
    assert (runs[chained.pk].fired, runs[chained.pk].passes) == (4, 4)
    assert (runs[plain.pk].fired, runs[plain.pk].passes) == (2, 1)
    passes = sorted(r.data["pass"] for r in Record.objects.filter(brand=chained,
                                                                   kind="timer.fired"))
    assert passes == [1, 2, 3, 4]
    assert TickRun.objects.filter(brand=chained).count() == 1


def test_a_handler_that_raises_in_a_group_fails_its_timer_only(db):
    broken, fine = brands(0, 2)
    bad = owe(broken, 1, T0, "tests.groups.explode")[0]
    good = delays.delay("timekeeping.note", {}, brand=broken, at=T0, key="good")
    elsewhere = owe(fine, 3, T0)
    result = phases.run_once(now=T0, phases=False, sweep=False)
    assert Timer.objects.get(pk=bad).state == "armed"
    assert Timer.objects.get(pk=bad).attempts == 1
    assert Timer.objects.get(pk=good).state == "fired"
    assert set(Timer.objects.filter(pk__in=elsewhere).values_list("state", flat=True)) == {
        "fired"}
    assert result.total("failed") == 1 and result.faults == []
    failed = Record.objects.get(brand=broken, kind="timer.failed")
    assert failed.timer == bad and "boom 0" in failed.data["error"]


def test_a_clock_leased_by_another_tick_is_skipped_and_the_group_fires(db):
    held, free = brands(0, 2)
    held_timer, free_timer = owe(held, 1, T0)[0], owe(free, 1, T0)[0]
    Brand.objects.filter(pk=held.pk).update(lease_holder="elsewhere:1:abc",
                                            lease_until=wallclock.wall_now() + timedelta(hours=1))
    result = phases.run_once(now=T0, phases=False, sweep=False)
    assert list(result.skipped) == [held.pk]
    assert Timer.objects.get(pk=held_timer).state == "armed"
    assert Timer.objects.get(pk=free_timer).state == "fired"
    assert Brand.objects.get(pk=held.pk).lease_holder == "elsewhere:1:abc"


def test_a_clock_owed_more_than_a_group_takes_ticks_alone_beside_the_group(db, monkeypatch):
    monkeypatch.setattr(groups, "GROUP_OWED", 2)
    large, small = brands(0, 2)
    owe(large, 5, T0)
    owe(small, 2, T0)
    packed, alone = groups.groups(phases.owed_clocks(T0))
    assert ([[b.pk for b in group] for group in packed], [b.pk for b in alone]) == (
        [[small.pk]], [large.pk])
    result = phases.run_once(now=T0, phases=False, sweep=False)
    assert {t.run.brand_id: t.run.fired for t in result.clocks} == {large.pk: 5, small.pk: 2}


@pytest.mark.django_db(transaction=True)
def test_a_clock_that_breaks_in_a_group_fails_alone_and_its_fault_resolves(monkeypatch):
    broken, fine = brands(0, 2)
    stuck, fired = owe(broken, 2, T0), owe(fine, 2, T0)
    firing = Engine._firing

    def breaks(engine, instant, pass_no):
        if engine.brand.pk == broken.pk:
            raise RuntimeError("this clock is broken")
        return firing(engine, instant, pass_no)

    monkeypatch.setattr(Engine, "_firing", breaks)
    first = phases.run_once(now=T0, phases=False, sweep=False)
    assert [f.where for f in first.faults] == [broken.pk]
    assert set(Timer.objects.filter(pk__in=stuck).values_list("state", flat=True)) == {"armed"}
    assert set(Timer.objects.filter(pk__in=fired).values_list("state", flat=True)) == {"fired"}
    assert not Brand.objects.exclude(lease_holder="").exists()
    monkeypatch.setattr(Engine, "_firing", firing)
    phases.run_once(now=T0 + timedelta(minutes=1), phases=False, sweep=False)
    assert set(Timer.objects.filter(pk__in=stuck).values_list("state", flat=True)) == {"fired"}
    assert Fault.objects.get(where=broken.pk).resolved == T0 + timedelta(minutes=1)


def test_a_clock_another_tick_fired_since_the_listing_gets_no_run(db, monkeypatch):
    done, owing = brands(0, 2)
    owe(done, 2, T0)
    owe(owing, 2, T0)
    listed = phases.owed_clocks(T0)
    Timer.objects.filter(brand=done).update(state="fired", fired=T0)  # another tick fired them
    monkeypatch.setattr(phases, "owed_clocks",
                        lambda instant, brand_ids=None, after="", limit=None: listed)
    result = phases.run_once(now=T0, phases=False, sweep=False)
    assert [t.run.brand_id for t in result.clocks] == [owing.pk]
    assert not result.skipped
    assert not TickRun.objects.filter(brand=done).exists()
    assert not Brand.objects.exclude(lease_holder="").exists()


def test_a_clock_a_dead_process_here_leased_is_taken_and_fired_in_the_same_tick(db):
    import subprocess
    import sys

    from timekeeping.timers import leases

    orphan, live, free = brands(0, 3)
    for brand in (orphan, live, free):
        owe(brand, 1, T0)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    until = wallclock.wall_now() + timedelta(hours=1)
    Brand.objects.filter(pk=orphan.pk).update(
        lease_holder=f"{leases.HOST}:{dead.pid}:deadbeef", lease_until=until)
    Brand.objects.filter(pk=live.pk).update(lease_holder="other-host:1:x", lease_until=until)
    result = phases.run_once(now=T0, phases=False, sweep=False)
    assert list(result.skipped) == [live.pk]
    assert sorted(t.run.brand_id for t in result.clocks) == sorted([orphan.pk, free.pk])
    assert set(Timer.objects.filter(brand__in=[orphan, free]).values_list(
        "state", flat=True)) == {"fired"}
    assert Timer.objects.get(brand=live).state == "armed"
