"""Test clocks' walks (S5, issue 15): asked for at once, walked by the tick in slices; how a
walk's ticks are spaced for schedules (J2, J3); a walk's figures and trace."""

import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from timekeeping import manifests
from timekeeping.models import Record, ScheduleRun, TestClock, Timer
from timekeeping.tick import loop, phases, test_clocks
from timekeeping.timers import delays
from timekeeping.timers.faults import Faults

T0 = datetime(2027, 1, 20, 14, tzinfo=UTC)
NEW_YORK = ZoneInfo("America/New_York")
HEARTBEAT = {"schedules": {"demo": {"heartbeat": {"every": "1m", "run": "heartbeat"}}}}
NOW = datetime(2026, 12, 2, 9, tzinfo=UTC)  # the real clock, for the tick's own books


@pytest.fixture
def beating(brand):
    manifests.load(brand, HEARTBEAT)
    return TestClock.objects.create(brand=brand, name="a year", frozen_time=T0)


def walks_phase(at: datetime = NOW) -> tuple[test_clocks.WalksResult, list]:
    """The tick's walks phase alone (the brand's real-clock heartbeat would run in the
    schedules phase's threads too)."""
    faults = Faults(at)
    done = phases.walk_test_clocks(faults, deadline=time.monotonic() + 50, holder="a tick")
    return done, faults.raised


def runs(test_clock: TestClock) -> list[ScheduleRun]:
    return list(ScheduleRun.objects.filter(schedule__test_clock=test_clock).order_by("tick"))


def grid_after(instant: datetime) -> datetime:
    minutes = (instant - T0) // timedelta(minutes=1) + 1
    return T0 + timedelta(minutes=minutes)


def test_a_year_of_a_one_minute_schedule_is_about_1440_ticks_each_timer_at_its_instant(
        brand, beating):
    # Two timers at odd instants, one in New York's spring-forward night: each fires at its
    # own instant, and the walk ticks there too (the schedule runs with it).
    spring = datetime(2027, 3, 14, 2, 30, tzinfo=NEW_YORK)  # no such local time: 07:30Z
    odd = [datetime(2027, 3, 14, 7, 30, 17, tzinfo=UTC), datetime(2027, 11, 7, 5, 59, 59,
                                                                   tzinfo=UTC)]
    assert spring.astimezone(UTC) == odd[0].replace(second=0)
    ids = [delays.delay("timekeeping.note", {"n": n}, brand=brand, test_clock=beating, at=at,
                        owner=f"ord_{n}") for n, at in enumerate(odd)]
    to = T0 + timedelta(days=365)
    walk = test_clocks.request(beating, to=to)
    assert walk.step_s == 21900  # a year over 1,440: 6 h 5 min
    test_clocks.drive(walk)
    walk.refresh_from_db()
    beating.refresh_from_db()
    assert (walk.state, beating.frozen_time, beating.status) == ("done", to, "ready")
    for timer_id, at in zip(ids, odd, strict=True):
        fired = Timer.objects.get(pk=timer_id)
        assert (fired.state, fired.fired, fired.late_by) == ("fired", at, timedelta(0))
    done = runs(beating)
    ticks = [run.tick for run in done]
    assert set(odd) <= set(ticks)
    assert len(done) == walk.schedule_runs == 1441 + len(odd)
    assert all(run.outcome == "succeeded" for run in done)
    # J3: a tick runs the schedule once however many due times passed, told the first of
    # them, and its next due time is the first grid time (whole minutes from T0, J2) after
    # the tick.
    assert done[0].due == T0 + timedelta(minutes=1)
    assert [run.due for run in done[1:]] == [grid_after(run.tick) for run in done[:-1]]
    assert all(run.due <= run.tick for run in done)
    apart = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    assert min(apart) > timedelta(0) and max(apart) <= timedelta(seconds=walk.step_s)
    assert sum(1 for gap in apart if gap < timedelta(seconds=walk.step_s)) <= 2 * len(odd)
    assert ticks[-1] == to  # it ends with a tick at its target, the schedule due by then
    heartbeats = Counter(Record.objects.filter(kind="heartbeat", test_clock=beating)
                         .values_list("instant", flat=True))
    assert set(heartbeats.values()) == {1} and len(heartbeats) == len(done)


def test_a_walk_of_a_day_or_less_ticks_at_every_due_time(brand, beating):
    walk = test_clocks.request(beating, to=T0 + timedelta(days=1))
    assert walk.step_s == 0
    test_clocks.drive(walk)
    assert [run.tick for run in runs(beating)] == [T0 + timedelta(minutes=m)
                                                  for m in range(1, 1441)]


def test_the_tick_walks_an_advance_in_slices_and_reports_progress(brand, beating):
    ids = [delays.delay("timekeeping.note", {"n": n}, brand=brand, test_clock=beating,
                        at=T0 + timedelta(hours=n), owner=f"ord_{n}") for n in range(1, 49)]
    walk = test_clocks.request(beating, to=T0 + timedelta(days=3), by="a test")
    heard = []
    # The shortest slice there is: a few instants.
    first = test_clocks.walk_slice(walk, holder="a test", deadline=0)
    assert 0 < first.instants < 100 and not first.done
    walk.refresh_from_db()
    assert walk.step_s == 180  # three days over 1,440
    # It ticked for the schedule every 3 minutes from 14:01, and at each timer's hour.
    ticks = sorted({*(run.tick for run in runs(beating)), *Timer.objects.filter(
        test_clock=beating, state="fired").values_list("fired", flat=True)})
    assert len(ticks) == first.instants and ticks[0] == T0 + timedelta(minutes=1)
    assert all(later - earlier <= timedelta(minutes=3) for earlier, later in zip(
        ticks, ticks[1:], strict=False))
    reached = ticks[-1]
    assert (walk.state, walk.slices) == ("walking", 1)
    # The walk stands at the last instant it ticked, or at the next one when the slice's
    # time ran out as it came to fire that instant's timer (the next slice fires it there).
    assert reached <= walk.reached <= reached + timedelta(minutes=3)
    assert walk.share < 0.1 and walk.fired == (reached - T0) // timedelta(hours=1)
    beating.refresh_from_db()
    assert (beating.frozen_time, beating.lease_holder, beating.status) == (
        walk.reached, "", "advancing")
    # The tick walks the rest a slice of at most 10 s at a time; on a slow machine the
    # walks phase's budget may end first, and the next tick's goes on.
    slices = []
    for _ in range(10):
        slices += walks_phase()[0].slices
        walk.refresh_from_db()
        if walk.state != "walking":
            break
    assert {done.walk.pk for done in slices} == {walk.pk}
    assert [done.done for done in slices][-1] is True
    assert not any(done.done for done in slices[:-1])
    assert (walk.state, walk.fired, walk.failed) == ("done", 48, 0)
    assert walk.slices == 1 + len(slices)
    assert all(Timer.objects.get(pk=pk).late_by == timedelta(0) for pk in ids)
    assert walk.line_count == 48 and walk.lines.count() == 48
    assert not walks_phase()[0].slices  # nothing left to walk
    again = test_clocks.request(beating, to=T0 + timedelta(days=4))
    delays.delay("timekeeping.note", {}, brand=brand, test_clock=beating,
                 at=T0 + timedelta(days=3, hours=5), owner="ord_late")
    test_clocks.drive(again, progress=heard.append)
    assert heard[-1].share == 1.0 and heard[-1].fired == 1
    assert [p.reached for p in heard] == sorted(p.reached for p in heard)


def test_a_second_advance_is_refused_naming_the_first_and_a_done_walk_frees_the_clock(
        brand, beating):
    first = test_clocks.request(beating, to=T0 + timedelta(hours=2))
    with pytest.raises(test_clocks.AdvanceRefused) as refused:
        test_clocks.request(beating, to=T0 + timedelta(hours=5))
    assert refused.value.field == "test_clock" and refused.value.walking == first
    assert "advancing to 2027-01-20T16:00:00Z already" in refused.value.message
    assert TestClock.objects.get(pk=beating.pk).status == "advancing"
    test_clocks.drive(first)
    again = test_clocks.request(beating, to=T0 + timedelta(hours=5))
    assert again.start == T0 + timedelta(hours=2)


def test_a_walk_that_keeps_failing_fails_after_three_slices_and_the_clock_says_so(
        brand, beating, monkeypatch):
    walk = test_clocks.request(beating, to=T0 + timedelta(hours=1))

    def broken(*args, **kwargs):
        raise RuntimeError("the clock's row is gone")

    monkeypatch.setattr(test_clocks, "_set_time", broken)
    for n in range(1, 4):
        _, faults = walks_phase(NOW + timedelta(minutes=n))
        assert [fault.where for fault in faults] == [beating.pk]
        walk.refresh_from_db()
        assert walk.tries == n
    assert (walk.state, walk.error) == ("failed", "RuntimeError: the clock's row is gone")
    beating.refresh_from_db()
    assert (beating.status, beating.frozen_time, beating.lease_holder) == (
        "internal_failure", T0, "")
    monkeypatch.undo()
    again = test_clocks.request(beating, to=T0 + timedelta(hours=1))
    test_clocks.drive(again)
    assert TestClock.objects.get(pk=beating.pk).status == "ready"


def test_between_ticks_the_loop_walks_an_advance_asked_for_at_once(brand, test_clock,
                                                                   monkeypatch):
    # The loop lets go of its connection after each look; the test's transaction holds it.
    monkeypatch.setattr(loop, "close_old_connections", lambda: None)
    timer_id = delays.delay("timekeeping.note", {}, brand=brand, test_clock=test_clock,
                            at=test_clock.frozen_time + timedelta(hours=2))
    said: list[str] = []
    loop.walk_between(deadline=time.monotonic() + 30, write=said.append)
    assert said == []  # nothing asked for: not a word
    test_clocks.request(test_clock, to=test_clock.frozen_time + timedelta(hours=3))
    loop.walk_between(deadline=time.monotonic() + 30, write=said.append)
    assert said == [f"walks between ticks · walked {test_clock.pk} to 2028-03-01 15:00:00Z "
                    "(done, 1 fired)"]
    assert Timer.objects.get(pk=timer_id).state == "fired"
