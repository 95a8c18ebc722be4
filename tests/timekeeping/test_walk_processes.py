"""A test clock's walk killed midway and taken on by two tick processes at once: real
processes on PostgreSQL (issue 15). Nothing fires twice, nothing is lost, the walk's figures
count each timer once, and no two slices of the walk overlap."""

import signal
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from tests.processes import needs_postgres, start_manage
from timekeeping import manifests, test_clocks, tick
from timekeeping.models import Brand, Record, ScheduleRun, TestClock, TickRun, Timer, Walk

pytestmark = [needs_postgres, pytest.mark.django_db(transaction=True)]

T0 = datetime(2027, 1, 20, 14, tzinfo=UTC)
TIMERS = 1200  # one a minute, each at its own instant


def a_clock_with_timers(slug: str, count: int) -> TestClock:
    """A brand with a one-minute schedule, and a test clock with `count` timers, one a
    minute, each at its own instant."""
    brand = Brand.objects.create(name=slug, slug=slug)
    manifests.load(brand, {"schedules": {"demo": {"heartbeat": {"every": "1m",
                                                                "run": "heartbeat"}}}})
    test_clock = TestClock.objects.create(brand=brand, name="killed", frozen_time=T0)
    Timer.objects.bulk_create([
        Timer(brand=brand, test_clock=test_clock, key=f"k{n:05d}", kind="delay", place=5,
              owed=T0 + timedelta(minutes=n, seconds=30), owner_opened=T0,
              owner_id=f"ord_{n}", payload={"operation": "timekeeping.note",
                                            "input": {"n": n}, "overdue_s": None})
        for n in range(count)])
    return test_clock


def kill_when_fired(victim, test_clock: TestClock, fired: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and Record.objects.filter(
            kind="timer.fired", test_clock=test_clock).count() < fired:
        time.sleep(0.01)
    victim.send_signal(signal.SIGKILL)
    victim.wait()


def fired_once_each(test_clock: TestClock, count: int) -> None:
    fired = Counter(Record.objects.filter(kind="timer.fired", test_clock=test_clock)
                    .values_list("timer", flat=True))
    assert len(fired) == count and set(fired.values()) == {1}
    assert not Timer.objects.filter(test_clock=test_clock).exclude(state="fired").exists()


def test_a_walk_killed_midway_is_taken_on_where_it_stopped_and_nothing_fires_twice():
    test_clock = a_clock_with_timers("walked", TIMERS)
    to = T0 + timedelta(hours=22)
    walk = test_clocks.request(test_clock, to=to, by="a test")

    victim = start_manage("tick")
    kill_when_fired(victim, test_clock, 150)
    walk.refresh_from_db()
    fired_when_killed = Record.objects.filter(kind="timer.fired", test_clock=test_clock).count()
    assert walk.state == "walking" and 0 < fired_when_killed < TIMERS, "not caught midway"
    test_clock.refresh_from_db()
    assert test_clock.lease_holder.split(":")[1] == str(victim.pid)
    # What the walk says it fired is what fired: each instant commits with its figures.
    assert walk.fired == fired_when_killed

    takers = [start_manage("tick"), start_manage("tick")]
    outputs = [process.communicate(timeout=300) for process in takers]
    assert [process.returncode for process in takers] == [0, 0], outputs
    walk.refresh_from_db()
    test_clock.refresh_from_db()
    assert (walk.state, walk.fired, walk.failed, walk.error) == ("done", TIMERS, 0, "")
    assert (test_clock.frozen_time, test_clock.status, test_clock.lease_holder) == (
        to, "ready", "")
    fired_once_each(test_clock, TIMERS)
    assert all(late == timedelta(0) for late in Timer.objects.filter(
        test_clock=test_clock).values_list("late_by", flat=True))
    notes = Counter(Record.objects.filter(kind="note", test_clock=test_clock)
                    .values_list("data__input__n", flat=True))
    assert len(notes) == TIMERS and set(notes.values()) == {1}
    # The schedule ran once a minute (a walk of a day or less ticks at every due time), and
    # never twice at one instant, though a run may have been lost with the killed slice.
    beats = Counter(Record.objects.filter(kind="heartbeat", test_clock=test_clock)
                    .values_list("instant", flat=True))
    assert set(beats.values()) == {1}
    runs = ScheduleRun.objects.filter(schedule__test_clock=test_clock)
    assert runs.count() == 22 * 60 and runs.exclude(outcome="succeeded").count() <= 1
    # One process at a time: the slices' runs do not overlap, the killed one's left
    # unfinished and marked abandoned when the clock was taken on.
    slices = list(TickRun.objects.filter(test_clock=test_clock).order_by("started"))
    assert slices[0].holder.split(":")[1] == str(victim.pid)
    assert slices[0].error.startswith("abandoned")
    for earlier, later in zip(slices[1:], slices[2:], strict=False):
        assert earlier.finished <= later.started
    assert Walk.objects.get(pk=walk.pk).slices == len(slices) - 1


def test_an_advance_from_the_command_killed_midway_is_finished_by_the_tick():
    test_clock = a_clock_with_timers("commanded", 600)
    to = T0 + timedelta(hours=11)
    victim = start_manage("tick", "--test-clock", test_clock.pk, "--to", "2027-01-21T01:00Z")
    kill_when_fired(victim, test_clock, 100)
    walk = Walk.objects.get(test_clock=test_clock)
    assert (walk.state, walk.by, walk.to) == ("walking", "manage.py tick", to)
    assert 0 < walk.fired < 600
    done = tick.run_once()
    assert [slice_.done for slice_ in done.walks.slices] == [True]
    walk.refresh_from_db()
    assert (walk.state, walk.fired) == ("done", 600)
    fired_once_each(test_clock, 600)
    assert TestClock.objects.get(pk=test_clock.pk).frozen_time == to
