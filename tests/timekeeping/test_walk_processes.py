"""A test clock's walk killed midway and taken on by two tick processes at once: real
processes on PostgreSQL (issue 15). Nothing fires twice, nothing is lost, the walk's figures
count each timer once, and no two slices of the walk overlap."""

import signal
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from tests.processes import needs_postgres, start_manage
from timekeeping import manifests
from timekeeping.models import Brand, Record, ScheduleRun, TestClock, TickRun, Timer, Walk
from timekeeping.tick import phases, test_clocks

pytestmark = [needs_postgres, pytest.mark.django_db(transaction=True)]

T0 = datetime(2027, 1, 20, 14, tzinfo=UTC)
TIMERS = 1200  # one a minute, each at its own instant
TICKS = 20  # ticks a walk may take to finish here: a slice is bounded by time, not by work


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


def noted_once_each(test_clock: TestClock, count: int) -> None:
    notes = Counter(Record.objects.filter(kind="note", test_clock=test_clock)
                    .values_list("data__input__n", flat=True))
    assert len(notes) == count and set(notes.values()) == {1}


def beat_once_a_minute(test_clock: TestClock, *, hours: int) -> None:
    """The schedule ran once a minute (a walk of a day or less ticks at every due time), and
    never twice at one instant, though a run may have been lost with the killed slice."""
    beats = Counter(Record.objects.filter(kind="heartbeat", test_clock=test_clock)
                    .values_list("instant", flat=True))
    assert set(beats.values()) == {1}
    runs = ScheduleRun.objects.filter(schedule__test_clock=test_clock)
    assert runs.count() == hours * 60 and runs.exclude(outcome="succeeded").count() <= 1


def tick_until_walked(walk: Walk) -> list[bool]:
    """Tick as cron would until `walk` ends (at most TICKS ticks); each slice's `done`, in
    order. How many slices that takes depends on how fast the machine is today."""
    done: list[bool] = []
    for _ in range(TICKS):
        done += [slice_.done for slice_ in phases.run_once().walks.slices
                 if slice_.walk.pk == walk.pk]
        walk.refresh_from_db()
        if walk.state != Walk.State.WALKING:
            break
    return done


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
    # The two ticks' budgets may not reach the walk's end on a slow machine: cron's next
    # ticks would go on with it, as these do.
    tick_until_walked(walk)
    walk.refresh_from_db()
    test_clock.refresh_from_db()
    assert (walk.state, walk.fired, walk.failed, walk.error) == ("done", TIMERS, 0, "")
    assert (test_clock.frozen_time, test_clock.status, test_clock.lease_holder) == (
        to, "ready", "")
    fired_once_each(test_clock, TIMERS)
    assert all(late == timedelta(0) for late in Timer.objects.filter(
        test_clock=test_clock).values_list("late_by", flat=True))
    noted_once_each(test_clock, TIMERS)
    beat_once_a_minute(test_clock, hours=22)
    # One process at a time: the slices' runs do not overlap, the killed one's left
    # unfinished and marked abandoned when the clock was taken on.
    slices = list(TickRun.objects.filter(test_clock=test_clock).order_by("started"))
    # The victim's slices come first; the one it was killed in (its last: a slice is bounded
    # by time, so it may have finished others before) is the only one abandoned.
    victims = [run for run in slices if run.holder.split(":")[1] == str(victim.pid)]
    assert victims == slices[:len(victims)]
    assert [run.error.startswith("abandoned") for run in slices] == [
        run is victims[-1] for run in slices]
    for earlier, later in zip(slices[1:], slices[2:], strict=False):
        assert earlier.finished <= later.started
    assert Walk.objects.get(pk=walk.pk).slices == len(slices) - 1


def test_an_advance_from_the_command_killed_midway_is_finished_by_the_tick(monkeypatch):
    # Slices of a quarter second (the tick's is 10 s): this tick walks the rest of the walk
    # in several slices on any machine, and the test holds for however many it takes.
    monkeypatch.setattr(test_clocks, "SLICE", timedelta(milliseconds=250))
    test_clock = a_clock_with_timers("commanded", 600)
    to = T0 + timedelta(hours=11)
    victim = start_manage("tick", "--test-clock", test_clock.pk, "--to", "2027-01-21T01:00Z")
    kill_when_fired(victim, test_clock, 100)
    walk = Walk.objects.get(test_clock=test_clock)
    assert (walk.state, walk.by, walk.to) == ("walking", "manage.py tick", to)
    assert 0 < walk.fired < 600
    # The tick finishes it in one slice or more (a slice is bounded by time): only the last
    # slice ends the walk.
    slices = tick_until_walked(walk)
    assert slices and slices[-1] is True and not any(slices[:-1]), slices
    assert (walk.state, walk.fired, walk.failed, walk.error) == ("done", 600, 0, "")
    fired_once_each(test_clock, 600)
    noted_once_each(test_clock, 600)
    beat_once_a_minute(test_clock, hours=11)
    test_clock.refresh_from_db()
    assert (test_clock.frozen_time, test_clock.status, test_clock.lease_holder) == (
        to, "ready", "")
