"""The grid, skips, failures and renames, on test clocks (runs inline, one after another)."""

from datetime import UTC, datetime, timedelta

import pytest

from timekeeping import manifests
from timekeeping.basics import wallclock
from timekeeping.models import Schedule, ScheduleRun, TestClock
from timekeeping.schedules import action, operate
from timekeeping.schedules.engine import context
from timekeeping.tick import test_clocks

T0 = datetime(2026, 3, 7, 14, tzinfo=UTC)
SEEN: list[tuple[datetime, datetime]] = []


@action("census.count")
def count() -> int:
    run = context()
    SEEN.append((run.due, wallclock.wall_now()))
    return 3


@action("census.explode")
def explode():
    raise RuntimeError("the census office is closed")


def manifest(**items):
    return {"schedules": {"census": {name: {"every": every, "run": run}
                                     for name, (every, run) in items.items()}}}


@pytest.fixture
def world(brand):
    SEEN.clear()
    test_clock = TestClock.objects.create(brand=brand, name="grid", frozen_time=T0)
    return brand, test_clock


def advance(test_clock, to):
    test_clocks.advance(TestClock.objects.get(pk=test_clock.pk), to=to)


def runs(test_clock, name="census.headcount"):
    return list(ScheduleRun.objects.filter(schedule__test_clock=test_clock,
                                           schedule__name=name).order_by("due"))


def test_it_runs_on_a_utc_grid_from_the_first_tick_with_the_clock_fixed_at_the_tick(world):
    brand, test_clock = world
    manifests.load(brand, manifest(headcount=("15m", "count")))
    advance(test_clock, T0 + timedelta(hours=1))
    dues = [run.due for run in runs(test_clock)]
    assert dues == [T0 + timedelta(minutes=m) for m in (15, 30, 45, 60)]
    assert all(run.outcome == "succeeded" and run.items == 3 for run in runs(test_clock))
    assert SEEN == [(due, due) for due in dues]  # clock.now inside a run is the tick's time


def test_it_runs_a_one_day_schedule_every_24_elapsed_hours_across_the_spring_change(world):
    brand, test_clock = world
    manifests.load(brand, manifest(headcount=("1d", "count")))
    advance(test_clock, T0 + timedelta(days=3))
    dues = [run.due for run in runs(test_clock)]
    assert dues == [T0 + timedelta(days=d) for d in (1, 2, 3)]  # 09:00 EST, then 10:00 EDT


def test_it_turns_a_gap_into_one_run_and_moves_on_to_the_grid(world):
    brand, test_clock = world
    manifests.load(brand, manifest(headcount=("15m", "count")))
    advance(test_clock, T0)  # the first tick sees it: due at T0+15m
    TestClock.objects.filter(pk=test_clock.pk).update(frozen_time=T0 + timedelta(hours=3,
                                                                                minutes=5))
    row = Schedule.objects.get(test_clock=test_clock)
    from timekeeping.schedules import engine

    claims, _ = engine.claim_due([row], now=T0 + timedelta(hours=3, minutes=5), holder="h",
                                 lease_until=T0 + timedelta(hours=4))
    engine.run_inline(claims, tick=T0 + timedelta(hours=3, minutes=5))
    assert [run.due for run in runs(test_clock)] == [T0 + timedelta(minutes=15)]
    row.refresh_from_db()
    assert row.next_due == T0 + timedelta(hours=3, minutes=15)


def test_it_records_a_skip_for_each_due_time_while_paused(world):
    brand, test_clock = world
    manifests.load(brand, manifest(headcount=("15m", "count")))
    advance(test_clock, T0)
    Schedule.objects.filter(test_clock=test_clock).update(paused=True)
    advance(test_clock, T0 + timedelta(minutes=30))
    assert [(r.outcome, r.reason) for r in runs(test_clock)] == [("skipped", "paused")] * 2
    Schedule.objects.filter(test_clock=test_clock).update(paused=False)
    advance(test_clock, T0 + timedelta(minutes=45))
    assert runs(test_clock)[-1].outcome == "succeeded"


def test_it_skips_a_due_time_while_a_run_still_holds_the_lease(world):
    brand, test_clock = world
    manifests.load(brand, manifest(headcount=("15m", "count")))
    advance(test_clock, T0)
    Schedule.objects.filter(test_clock=test_clock).update(
        lease_holder="elsewhere:1:x", lease_until=T0 + timedelta(hours=1))
    advance(test_clock, T0 + timedelta(minutes=15))
    assert [(r.outcome, r.reason) for r in runs(test_clock)] == [("skipped", "running")]


def test_it_takes_a_changed_interval_from_whichever_comes_first(world):
    brand, test_clock = world
    manifests.load(brand, manifest(headcount=("1h", "count")))
    advance(test_clock, T0)  # kept due: T0+1h
    advance(test_clock, T0 + timedelta(minutes=10))
    manifests.load(brand, manifest(headcount=("15m", "count")))
    advance(test_clock, T0 + timedelta(minutes=11))  # seen at T0+10m: new due T0+25m
    assert Schedule.objects.get(test_clock=test_clock).next_due == T0 + timedelta(minutes=25)
    manifests.load(brand, manifest(headcount=("2h", "count")))
    advance(test_clock, T0 + timedelta(minutes=20))  # the kept due (T0+25m) comes first
    row = Schedule.objects.get(test_clock=test_clock)
    assert (row.next_due, row.every_s) == (T0 + timedelta(minutes=25), 7200)
    advance(test_clock, T0 + timedelta(hours=3))
    assert [r.due for r in runs(test_clock)] == [T0 + timedelta(minutes=25),
                                                 T0 + timedelta(hours=2, minutes=25)]


def test_it_records_a_failure_and_tries_again_only_at_the_next_due_time(world):
    brand, test_clock = world
    manifests.load(brand, manifest(headcount=("1h", "explode")))
    advance(test_clock, T0 + timedelta(hours=1))
    advance(test_clock, T0 + timedelta(hours=1, minutes=59))
    found = runs(test_clock)
    assert [(r.outcome, r.reason) for r in found] == [
        ("failed", "RuntimeError: the census office is closed")]
    advance(test_clock, T0 + timedelta(hours=2))
    assert len(runs(test_clock)) == 2
    row = Schedule.objects.get(test_clock=test_clock)
    assert "its last failure was due" in operate.why(row, now=T0 + timedelta(hours=2))


def test_it_keeps_state_and_history_when_a_schedule_is_renamed(world):
    brand, test_clock = world
    manifests.load(brand, manifest(headcount=("15m", "count")))
    advance(test_clock, T0 + timedelta(minutes=15))
    before = Schedule.objects.get(test_clock=test_clock)
    manifests.load(brand, manifest(tally=("15m", "count")))
    advance(test_clock, T0 + timedelta(minutes=30))
    after = Schedule.objects.get(test_clock=test_clock, active=True)
    assert after.pk == before.pk and after.name == "census.tally"
    assert after.runs.count() == 2


def test_it_stops_a_schedule_no_longer_declared(world):
    brand, test_clock = world
    manifests.load(brand, manifest(headcount=("15m", "count")))
    advance(test_clock, T0 + timedelta(minutes=15))
    # It has run, so the new version states its removal (a plan refuses it otherwise).
    with pytest.raises(manifests.ManifestInvalid, match="1 problem"):
        manifests.load(brand, {"schedules": {}})
    manifests.load(brand, {"schedules": {}, "removes": ["schedules.census.headcount"]})
    advance(test_clock, T0 + timedelta(hours=1))
    assert len(runs(test_clock)) == 1
    assert not Schedule.objects.get(test_clock=test_clock).active


@pytest.mark.parametrize(
    ("item", "code", "words"),
    [
        ({"every": "0m", "run": "count"}, "schedule.every_invalid", "whole number above zero"),
        ({"every": "1.5h", "run": "count"}, "schedule.every_invalid", "'1.5h'"),
        ({"every": "15 min", "run": "count"}, "schedule.every_invalid", "'15 min'"),
        ({"every": "15m", "run": "nothing"}, "schedule.run_invalid", "'nothing' is not one"),
        ({"every": "15m", "run": "heartbeat"}, "schedule.run_invalid", "'census'"),
        ({"every": "15m", "run": "with_args"}, "schedule.run_invalid", "takes arguments"),
        ({"every": "15m", "run": "count", "cron": "0 9 * * 1"}, "schedule.item_invalid",
         "'cron' is not allowed"),
        ({"every": "15m", "run": "count", "at": "mon 09:00"}, "schedule.item_invalid",
         "not both"),
    ],
)
def test_it_refuses_a_bad_schedule_naming_it_and_the_rule(brand, item, code, words):
    problems = manifests.check({"schedules": {"census": {"headcount": item}}})
    found = [p for p in problems if p.code == code]
    assert found, problems
    assert "schedule census.headcount" in found[0].message and words in found[0].message
    assert found[0].path.startswith("$.schedules.census.headcount")


@action("census.with_args")
def with_args(region):
    return region
