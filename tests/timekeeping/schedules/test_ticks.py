"""Schedules on the real tick: runs in threads with their own connections, so these tests
commit (transactional), and on PostgreSQL two tick processes share the work."""

import threading
import time
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from tests.processes import needs_postgres, start_manage
from timekeeping import manifests
from timekeeping.basics import wallclock
from timekeeping.models import Brand, Delivery, Record, Schedule, ScheduleRun, TickRun
from timekeeping.schedules import action, engine, operate
from timekeeping.tick import phases
from timekeeping.timers import leases

pytestmark = pytest.mark.django_db(transaction=True)
T0 = datetime(2026, 11, 30, 14, tzinfo=UTC)
# Handshakes, not sleeps: what these tests assert about threads holds however slow the
# machine is. The timeouts only bound how long a broken build takes to fail.
WAIT_S = 30
BOTH_INSIDE = threading.Barrier(2, timeout=WAIT_S)  # two `ops.meet` runs, each in its action
RELEASE_STUCK = threading.Event()  # until set, an `ops.stuck` run stays inside its action


@action("ops.meet")
def meet():
    BOTH_INSIDE.wait()  # passes only while another run is inside this action too


@action("ops.stuck")
def stuck():
    RELEASE_STUCK.wait(WAIT_S)


@action("ops.note")
def note() -> int:
    return 1


def ticks(*instants):
    results = []
    for instant in instants:
        with wallclock.fixed(instant):
            results.append(phases.run_once(now=instant))
    return results


@pytest.fixture
def brand():
    return Brand.objects.create(name="Ops", slug="ops")


def load(brand, **items):
    manifests.load(brand, {"schedules": {"ops": {name: {"every": every, "run": run}
                                                 for name, (every, run) in items.items()}}})


def test_it_makes_missed_ticks_one_run_and_the_next_due_time_on_the_grid(brand):
    load(brand, census=("15m", "note"))
    ticks(T0, T0 + timedelta(hours=3, minutes=5))  # three hours of downtime
    runs = ScheduleRun.objects.filter(schedule__name="ops.census")
    assert [(r.due, r.outcome, r.items) for r in runs] == [
        (T0 + timedelta(minutes=15), "succeeded", 1)]
    assert runs[0].tick == T0 + timedelta(hours=3, minutes=5)
    row = Schedule.objects.get(name="ops.census")
    assert row.next_due == T0 + timedelta(hours=3, minutes=15)
    assert row.last_tick == T0 + timedelta(hours=3, minutes=5)


def test_it_runs_due_schedules_side_by_side(brand):
    BOTH_INSIDE.reset()
    load(brand, a=("1m", "meet"), b=("1m", "meet"))
    _, second = ticks(T0, T0 + timedelta(minutes=1))
    # Each run waits at the barrier for the other: one after the other, both would fail.
    assert sorted((r.schedule.name, r.outcome) for r in second.schedule_runs) == [
        ("ops.a", "succeeded"), ("ops.b", "succeeded")]


def test_it_ends_a_run_that_outlasts_the_tick_budget_as_deadline_exceeded(brand):
    load(brand, jam=("1m", "stuck"))
    ticks(T0)
    RELEASE_STUCK.clear()
    at = T0 + timedelta(minutes=1)
    try:
        # The budget is passed explicitly; the run cannot end before it runs out, because it
        # waits for RELEASE_STUCK.
        with wallclock.fixed(at):
            done = engine.run_due(now=at, deadline=time.monotonic() + 0.1,
                                  holder=leases.holder_name())
        assert [(r.outcome, r.reason) for r in done.runs] == [("failed", "deadline_exceeded")]
        assert Schedule.objects.get(name="ops.jam").lease_holder == ""
    finally:
        RELEASE_STUCK.set()
    for thread in threading.enumerate():  # let the stuck run end while the database is ours
        if thread.name == "schedule ops.jam":
            thread.join(WAIT_S)
            assert not thread.is_alive()
    # It finished late, and that changed nothing: one failure, counted once (issue 31).
    assert ScheduleRun.objects.get(schedule__name="ops.jam").reason == "deadline_exceeded"
    jam = Schedule.objects.get(name="ops.jam")
    assert (jam.attempts, jam.last_error) == (1, "deadline_exceeded")


def test_it_fails_a_run_lost_with_its_process_as_lease_expired(brand):
    load(brand, census=("15m", "note"))
    ticks(T0)
    row = Schedule.objects.get(name="ops.census")
    lost = ScheduleRun.objects.create(schedule=row, due=T0, tick=T0, started=T0,
                                      outcome="running", holder="gone:1:x")
    Schedule.objects.filter(pk=row.pk).update(lease_holder="gone:1:x",
                                              lease_until=T0 + timedelta(minutes=2))
    ticks(T0 + timedelta(minutes=1))
    assert ScheduleRun.objects.get(pk=lost.pk).outcome == "running"  # its lease still lives
    ticks(T0 + timedelta(minutes=3))
    lost.refresh_from_db()
    assert (lost.outcome, lost.reason) == ("failed", "lease_expired")
    # A failure of the schedule, counted toward its backoff (issue 31).
    census = Schedule.objects.get(name="ops.census")
    assert (census.attempts, census.last_error) == (1, "lease_expired")


def test_it_runs_a_schedule_by_hand_at_the_next_tick_without_moving_the_grid(brand):
    load(brand, census=("1h", "note"))
    ticks(T0)
    operate.run_by_hand(operate.find("ops.census"))
    ticks(T0 + timedelta(minutes=5))
    run = ScheduleRun.objects.get(schedule__name="ops.census")
    assert run.by_hand and run.outcome == "succeeded"
    assert Schedule.objects.get(name="ops.census").next_due == T0 + timedelta(hours=1)


def test_it_purges_old_tick_runs_hourly_and_counts_them(brand):
    ticks(T0)
    purge = Schedule.objects.get(name="TickRun.purge")
    assert (purge.every_s, purge.brand_id) == (3600, None)
    TickRun.objects.bulk_create([TickRun(brand=brand, instant=T0, started=T0 - timedelta(
        days=31 + n % 3)) for n in range(1200)])
    TickRun.objects.create(brand=brand, instant=T0, started=T0 - timedelta(days=2))
    ticks(T0 + timedelta(hours=1))
    run = ScheduleRun.objects.get(schedule=purge)
    assert (run.outcome, run.items) == ("succeeded", 1200)
    assert TickRun.objects.count() == 1


def test_it_keeps_house_hourly_within_its_caps(brand):
    old = T0 - timedelta(days=31)
    row = Schedule.objects.create(key="x", name="x", action="ops.note", every_s=60)
    ScheduleRun.objects.bulk_create([ScheduleRun(schedule=row, due=old, tick=old,
                                                 outcome="succeeded") for _ in range(10_500)])
    Delivery.objects.create(brand=brand, channel="email", payload={}, idempotency_key="a",
                            state="succeeded", next_attempt=old, delivered=T0 - timedelta(days=2))
    Delivery.objects.create(brand=brand, channel="email", payload={}, idempotency_key="b",
                            state="failed", next_attempt=old)
    first, second, third = ticks(T0, T0 + timedelta(minutes=1), T0 + timedelta(minutes=2))
    assert first.housekeeping.deleted == {"schedule runs": 10_000}
    assert not first.housekeeping.finished
    assert second.housekeeping.deleted == {"schedule runs": 500, "delivered outbox rows": 1}
    assert second.housekeeping.finished and not third.housekeeping.ran
    assert list(Delivery.objects.values_list("idempotency_key", flat=True)) == ["b"]


@pytest.mark.usefixtures("drop_venue_tables")
def test_the_demo_shows_a_heartbeat_each_minute(settings):
    settings.DEBUG = True  # the demo loads only in development
    call_command("demo", stdout=StringIO())
    first, second = ticks(T0, T0 + timedelta(minutes=1))
    assert [r.schedule.name for r in second.schedule_runs] == ["demo.heartbeat"]
    assert "schedule demo.heartbeat due 2026-11-30 14:01:00Z: succeeded" in second.run_lines()[0]
    beat = Record.objects.get(kind="heartbeat")
    assert beat.brand.slug == "demo" and beat.instant == T0 + timedelta(minutes=1)


def test_the_operator_commands_list_pause_resume_run_and_say_why(brand):
    load(brand, census=("15m", "note"))
    ticks(T0)

    def run(*args):
        out = StringIO()
        call_command("schedules", *args, stdout=out)
        return out.getvalue()

    assert "ops.census" in run("list") and "every 15m" in run("list")
    run("pause", "ops.census")
    with wallclock.fixed(T0):
        assert "it is paused" in run("why", "ops.census")
    ticks(T0 + timedelta(minutes=15))
    assert "skipped (paused)" in run("history", "ops.census")
    run("resume", "ops.census")
    run("run", "ops.census")
    with wallclock.fixed(T0 + timedelta(minutes=16)):
        said = run("why", "ops.census")
    assert "a run by hand is asked for" in said and "its last skip was due" in said
    assert said.endswith("14:15:00Z: paused.\n")


def test_it_warns_when_ticks_stopped(brand):
    assert "No tick has run yet" in operate.ticks_stopped(T0)
    ticks(T0)
    # TICK_STALE_SECONDS, five minutes by default, as for /health/tick and /metrics.
    assert operate.ticks_stopped(T0 + timedelta(minutes=5)) is None
    assert "Ticks stopped" in operate.ticks_stopped(T0 + timedelta(minutes=5, seconds=1))


@needs_postgres
def test_four_tick_processes_give_one_run_per_due_time(brand):
    # Every day, not every minute: the children tick on the real clock, so with a day between
    # due times a child that a loaded machine starts late still finds only this one due.
    manifests.load(brand, {"schedules": {"demo": {"beat": {"every": "1d", "run": "heartbeat"}}}})
    now = datetime.now(UTC)  # noqa: DTZ005 - the child processes tick on the real clock
    ticks(now)
    due = now - timedelta(seconds=5)
    Schedule.objects.filter(name="demo.beat").update(next_due=due)
    processes = [start_manage("tick") for _ in range(4)]
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    runs = ScheduleRun.objects.filter(schedule__name="demo.beat")
    assert [(r.due, r.outcome) for r in runs] == [(due, "succeeded")]
    assert Record.objects.filter(kind="heartbeat", brand=brand).count() == 1


def test_a_replica_pulse_is_not_called_again_while_it_runs():
    from timekeeping.schedules import pulses

    calls = []
    inside, release = threading.Event(), threading.Event()

    @pulses.pulse("cache.refresh", every="1s", scope="replica")
    def refresh():
        calls.append(1)
        inside.set()
        release.wait(WAIT_S)

    pulses.run_replica_pulses(T0)  # arms it
    worker = threading.Thread(target=pulses.run_replica_pulses, args=(T0 + timedelta(seconds=1),))
    worker.start()
    try:
        assert inside.wait(WAIT_S)  # the worker's call is inside refresh, and stays there
        assert pulses.run_replica_pulses(T0 + timedelta(seconds=2)) == []
    finally:
        release.set()
        worker.join(WAIT_S)
    assert calls == [1]


@needs_postgres
def test_ticks_that_first_see_a_schedule_at_once_make_one_state_row(brand):
    load(brand, census=("15m", "note"))
    processes = [start_manage("tick") for _ in range(4)]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    assert Schedule.objects.filter(name="TickRun.purge").count() == 1
    assert Schedule.objects.filter(name="ops.census").count() == 1
