"""The tick through its public steps: delays, `tick.phases.run_once`, test clocks, records."""

from datetime import UTC, date, datetime, timedelta

import pytest

from calendars.moments import shift, wall_time
from timekeeping.basics import wallclock
from timekeeping.models import Delivery, Record, TickRun, Timer
from timekeeping.tick import phases, test_clocks
from timekeeping.timers import arming, delays, kinds
from timekeeping.timers.firing import Firing
from timekeeping.timers.kinds import Place

T0 = datetime(2026, 11, 30, 14, tzinfo=UTC)
NY = "America/New_York"


@delays.operation("tests.explode")
def explode(*, input, now, brand):
    if input.get("explode"):
        raise RuntimeError(f"boom {input['n']}")
    return "fine"


@delays.operation("tests.chain")
def chain(*, input, now, brand):
    """Arms the next link owed at once, `left` more times."""
    if input["left"]:
        delays.delay("tests.chain", {"left": input["left"] - 1}, brand=brand, at=now,
                     key=f"chain:{input['left'] - 1}")
    return f"{input['left']} left"


@delays.operation("tests.daily_at_nine")
def daily_at_nine(*, input, now, brand):
    """Re-arms itself one calendar day later at 09:00 New York time (across DST)."""
    if input["left"]:
        at = shift(now, NY, days=1)
        delays.delay("tests.daily_at_nine", {"left": input["left"] - 1}, brand=brand, at=at,
                     key=f"nine:{input['left']}")
    return "rang"


def fired_records(brand):
    return list(Record.objects.filter(brand=brand, kind="timer.fired"))


def fire_order(brand):
    records = sorted(fired_records(brand), key=lambda r: (r.data["run"], r.data["seq"]))
    return [record.timer for record in records]


def test_it_fires_an_owed_delay_once_and_records_it(brand):
    timer_id = delays.delay("timekeeping.note", {"order": 7}, brand=brand,
                            at=T0 - timedelta(minutes=5))
    result = phases.run_once(now=T0)
    again = phases.run_once(now=T0 + timedelta(minutes=1))
    timer = Timer.objects.get(pk=timer_id)
    assert timer.state == "fired"
    assert timer.fired == T0
    assert timer.late_by == timedelta(minutes=5)
    assert [r.timer for r in fired_records(brand)] == [timer_id]
    assert Record.objects.get(brand=brand, kind="note").data == {"input": {"order": 7}}
    assert result.total("fired") == 1 and again.total("fired") == 0
    run = TickRun.objects.get(brand=brand)
    assert (run.fired, run.passes, run.failed, run.runaway) == (1, 1, 0, False)


def test_it_leaves_a_timer_owed_later_armed(brand):
    timer_id = delays.delay("timekeeping.note", {}, brand=brand, at=T0 + timedelta(seconds=1))
    phases.run_once(now=T0)
    assert Timer.objects.get(pk=timer_id).state == "armed"
    phases.run_once(now=T0 + timedelta(seconds=1))
    assert Timer.objects.get(pk=timer_id).state == "fired"


def test_it_arms_a_key_once(brand):
    first = delays.delay("timekeeping.note", {"n": 1}, brand=brand, at=T0, key="order:7")
    second = delays.delay("timekeeping.note", {"n": 2}, brand=brand, at=T0 + timedelta(1),
                          key="order:7")
    assert first == second
    assert Timer.objects.get(pk=first).payload["input"] == {"n": 1}
    assert Timer.objects.filter(brand=brand).count() == 1


def test_it_cancels_an_armed_delay_and_never_fires_it(brand):
    timer_id = delays.delay("timekeeping.note", {}, brand=brand, at=T0)
    assert delays.cancel(timer_id) is True
    assert delays.cancel(timer_id) is False
    phases.run_once(now=T0 + timedelta(hours=1))
    assert Timer.objects.get(pk=timer_id).state == "cancelled"
    assert not fired_records(brand)


def test_it_drops_a_delay_reached_past_its_overdue_bound_and_never_runs_it(brand):
    dropped = delays.delay("timekeeping.note", {"n": 1}, brand=brand, at=T0,
                           overdue=timedelta(minutes=10))
    kept = delays.delay("timekeeping.note", {"n": 2}, brand=brand, at=T0, overdue=None)
    within = delays.delay("timekeeping.note", {"n": 3}, brand=brand, at=T0, overdue=3 * 3600)
    phases.run_once(now=T0 + timedelta(hours=2))
    assert Timer.objects.get(pk=dropped).state == "dropped"
    assert Timer.objects.get(pk=kept).state == "fired"
    assert Timer.objects.get(pk=within).state == "fired"
    assert Record.objects.filter(kind="timer.dropped", timer=dropped).count() == 1
    inputs = sorted(r.data["input"]["n"] for r in Record.objects.filter(kind="note"))
    assert inputs == [2, 3]


def test_it_refuses_a_delay_to_an_unknown_operation_or_a_naive_instant(brand):
    with pytest.raises(LookupError, match="operation: no operation named 'shop.nothing'"):
        delays.delay("shop.nothing", {}, brand=brand, at=T0)
    with pytest.raises(ValueError, match="at: give an aware instant"):
        delays.delay("timekeeping.note", {}, brand=brand, at=datetime(2026, 1, 1))  # noqa: DTZ001
    assert not Timer.objects.exists()


# -- the order -------------------------------------------------------------------------------

ORDER_SEEN: list[str] = []


def _order_handler(timer, firing: Firing) -> str:
    ORDER_SEEN.append(timer.key)
    return "seen"


for _place in Place:
    kinds.register(f"test_place_{_place.value}", place=_place,
                   describe=lambda timer: timer.key)(_order_handler)


def test_it_fires_one_instant_in_place_then_owner_opened_then_key_byte_order(brand):
    opened = T0 - timedelta(days=3)
    armed = []
    for place in reversed(Place):
        for key in ("a", "B", "_", "Z"):  # bytes: "B" 0x42 < "Z" 0x5a < "_" 0x5f < "a" 0x61
            armed.append(arming.arm(brand=brand, kind=f"test_place_{place.value}",
                                    key=f"{place.value}:{key}", owed=T0, owner_opened=opened))
    later_owner = arming.arm(brand=brand, kind="test_place_1", key="1:0-later-owner", owed=T0,
                             owner_opened=opened + timedelta(seconds=1))
    earlier_owed = arming.arm(brand=brand, kind="test_place_8", key="8:earlier", owed=T0
                              - timedelta(microseconds=1), owner_opened=opened)
    ORDER_SEEN.clear()
    phases.run_once(now=T0)
    expected = ["8:earlier"]
    for place in Place:
        expected += [f"{place.value}:{key}" for key in ("B", "Z", "_", "a")]
        if place == Place.CYCLE:
            expected.append("1:0-later-owner")
    assert ORDER_SEEN == expected
    assert fire_order(brand) == [
        t.id for t in sorted(armed + [later_owner, earlier_owed],
                             key=lambda t: expected.index(t.key))
    ]


def test_it_keeps_the_order_across_batches(brand):
    for n in range(25):
        arming.arm(brand=brand, kind="test_place_3", key=f"k{n:02d}", owed=T0 - timedelta(
            seconds=25 - n), owner_opened=T0)
    ORDER_SEEN.clear()
    phases.run_once(now=T0, batch_size=4)
    assert ORDER_SEEN == [f"k{n:02d}" for n in range(25)]


# -- passes ----------------------------------------------------------------------------------

def test_it_fires_a_timer_armed_owed_now_in_the_next_pass_of_the_same_tick(brand):
    delays.delay("tests.chain", {"left": 2}, brand=brand, at=T0, key="chain:2")
    later = delays.delay("timekeeping.note", {}, brand=brand, at=T0 + timedelta(days=1))
    result = phases.run_once(now=T0)
    run = result.clocks[0].run
    assert (run.fired, run.passes, run.armed) == (3, 3, 2)
    passes = sorted(r.data["pass"] for r in fired_records(brand))
    assert passes == [1, 2, 3]
    link = Timer.objects.get(brand=brand, key="chain:1")
    assert link.armed_by == Timer.objects.get(brand=brand, key="chain:2").id
    assert Timer.objects.get(pk=later).state == "armed"


@pytest.mark.parametrize("batch_size", [1, 2, 1000])
def test_a_pass_fires_what_was_owed_before_it_whatever_its_batches(brand, batch_size):
    # A batch that arms a timer owed now leaves it to the next pass, and the pass's next batch
    # still takes the others owed (its read leaves out what the pass armed).
    delays.delay("timekeeping.note", {}, brand=brand, at=T0 - timedelta(seconds=1), key="a")
    delays.delay("tests.chain", {"left": 2}, brand=brand, at=T0, key="chain:2")
    delays.delay("timekeeping.note", {}, brand=brand, at=T0, key="z")
    phases.run_once(now=T0, batch_size=batch_size)
    fired = sorted(fired_records(brand), key=lambda record: record.data["seq"])
    assert [(r.data["key"], r.data["pass"]) for r in fired] == [
        ("a", 1), ("chain:2", 1), ("z", 1), ("chain:1", 2), ("chain:0", 3)]


def test_it_stops_a_chain_of_40_at_32_passes_and_alarms_the_owner(brand, actors):
    actors["owner"].email = "owner@example.test"
    actors["owner"].save()
    delays.delay("tests.chain", {"left": 40}, brand=brand, at=T0, key="chain:40")
    result = phases.run_once(now=T0, sweep=False)
    run = result.clocks[0].run
    assert run.runaway is True
    assert (run.passes, run.fired) == (32, 32)
    runaway = Record.objects.get(brand=brand, kind="tick.runaway")
    assert runaway.data["still_owed"] == 1
    alarm = Delivery.objects.get(brand=brand)
    assert alarm.payload["to"] == ["owner@example.test"]
    assert "ran away" in alarm.payload["subject"]
    assert "RUNAWAY" in result.summary()


def test_it_records_a_failing_handler_and_fires_the_rest_of_its_batch(brand):
    ids = [delays.delay("tests.explode", {"n": n, "explode": n == 2}, brand=brand,
                        at=T0 + timedelta(seconds=n)) for n in range(5)]
    result = phases.run_once(now=T0 + timedelta(minutes=1))
    states = [Timer.objects.get(pk=i).state for i in ids]
    assert states == ["fired", "fired", "armed", "fired", "fired"]
    failing = Timer.objects.get(pk=ids[2])
    assert failing.attempts == 1 and "RuntimeError: boom 2" in failing.last_error
    failure = Record.objects.get(kind="timer.failed")
    assert failure.timer == ids[2] and failure.data["error"] == "RuntimeError: boom 2"
    assert result.total("failed") == 1 and result.total("fired") == 4
    with wallclock.fixed(T0 + timedelta(minutes=1)):
        assert "failed 1 time(s), last with: RuntimeError: boom 2" in arming.explain(failing)
    # Retried a minute later (give or take its jitter), and not before.
    retry = failing.next_attempt
    assert timedelta(seconds=54) <= retry - (T0 + timedelta(minutes=1)) <= timedelta(seconds=66)
    phases.run_once(now=retry - timedelta(seconds=1))
    assert Timer.objects.get(pk=ids[2]).attempts == 1
    phases.run_once(now=retry)
    failing = Timer.objects.get(pk=ids[2])
    assert failing.attempts == 2
    Timer.objects.filter(pk=ids[2]).update(payload={"operation": "tests.explode",
                                                    "input": {"n": 2}, "overdue_s": None})
    phases.run_once(now=failing.next_attempt)
    assert Timer.objects.get(pk=ids[2]).state == "fired"
    assert len(fired_records(brand)) == 5


def test_it_leaves_what_the_budget_does_not_reach_to_the_next_tick(brand):
    for n in range(30):
        delays.delay("timekeeping.note", {"n": n}, brand=brand, at=T0)
    first = phases.run_once(now=T0, budget=timedelta(0), batch_size=10)
    assert first.total("fired") == 0 and list(first.unreached) == [brand.pk]
    second = phases.run_once(now=T0, batch_size=10)
    assert second.total("fired") == 30


def test_it_skips_a_clock_another_tick_holds(brand):
    from timekeeping.models import Brand
    from timekeeping.timers import leases

    delays.delay("timekeeping.note", {}, brand=brand, at=T0)
    with wallclock.fixed(T0):
        assert leases.take(Brand, brand.pk, holder="elsewhere:1:x", now=T0,
                           until=T0 + timedelta(minutes=2))
        result = phases.run_once(now=T0)
    assert list(result.skipped) == [brand.pk] and result.total("fired") == 0
    with wallclock.fixed(T0 + timedelta(minutes=3)):  # the lease has run out
        assert phases.run_once(now=T0 + timedelta(minutes=3)).total("fired") == 1


# -- test clocks -----------------------------------------------------------------------------

def test_it_fires_test_clock_timers_only_when_their_clock_advances(brand, test_clock):
    start = test_clock.frozen_time
    on_test = delays.delay("timekeeping.note", {"on": "test"}, brand=brand,
                           at=start + timedelta(hours=1), test_clock=test_clock)
    on_real = delays.delay("timekeeping.note", {"on": "real"}, brand=brand,
                           at=start + timedelta(days=60))
    phases.run_once(now=start + timedelta(days=30))
    assert Timer.objects.get(pk=on_test).state == "armed"
    test_clocks.advance(test_clock, to=start + timedelta(days=90))
    assert Timer.objects.get(pk=on_test).state == "fired"
    assert Timer.objects.get(pk=on_real).state == "armed"


def test_it_walks_each_owed_instant_so_nothing_fires_late(brand, test_clock):
    start = test_clock.frozen_time
    ids = [delays.delay("timekeeping.note", {"n": n}, brand=brand, test_clock=test_clock,
                        at=start + timedelta(hours=n, minutes=7)) for n in (3, 1, 2)]
    ticked = test_clocks.advance(test_clock, to=start + timedelta(days=1))
    fired = Timer.objects.filter(pk__in=ids).order_by("fired")
    assert [t.fired for t in fired] == [t.owed for t in fired]
    assert all(t.late_by == timedelta(0) for t in fired)
    test_clock.refresh_from_db()
    assert test_clock.frozen_time == start + timedelta(days=1)
    assert test_clock.status == "ready"
    assert ticked.run.fired == 3
    notes = Record.objects.filter(kind="note").order_by("instant")
    assert [r.data["input"]["n"] for r in notes] == [1, 2, 3]
    assert all(r.test_clock_id == test_clock.pk for r in notes)


def test_it_rings_at_nine_new_york_each_day_across_the_spring_change(brand, test_clock):
    test_clock.frozen_time = datetime(2026, 3, 5, tzinfo=UTC)
    test_clock.save()
    first = wall_time(date(2026, 3, 6), "09:00", NY)
    delays.delay("tests.daily_at_nine", {"left": 4}, brand=brand, at=first,
                 test_clock=test_clock, key="nine:start")
    test_clocks.advance(test_clock, to=datetime(2026, 3, 11, tzinfo=UTC))
    fired = sorted(Timer.objects.filter(test_clock=test_clock).values_list("fired", flat=True))
    assert fired == [
        datetime(2026, 3, 6, 14, tzinfo=UTC),  # EST
        datetime(2026, 3, 7, 14, tzinfo=UTC),
        datetime(2026, 3, 8, 13, tzinfo=UTC),  # EDT from 8 March
        datetime(2026, 3, 9, 13, tzinfo=UTC),
        datetime(2026, 3, 10, 13, tzinfo=UTC),
    ]


def test_it_refuses_to_advance_backwards_and_changes_nothing(brand, test_clock):
    start = test_clock.frozen_time
    timer_id = delays.delay("timekeeping.note", {}, brand=brand, test_clock=test_clock,
                            at=start - timedelta(hours=1))
    with pytest.raises(test_clocks.AdvanceRefused) as refused:
        test_clocks.advance(test_clock, to=start - timedelta(seconds=1))
    assert refused.value.field == "to" and "only moves forward" in refused.value.message
    test_clock.refresh_from_db()
    assert test_clock.frozen_time == start and test_clock.status == "ready"
    assert Timer.objects.get(pk=timer_id).state == "armed"


def test_it_explains_why_a_timer_has_or_has_not_fired(brand):
    later = delays.delay("timekeeping.note", {}, brand=brand, at=T0 + timedelta(days=2))
    fired = delays.delay("timekeeping.note", {}, brand=brand, at=T0 - timedelta(minutes=3))
    held = delays.delay("timekeeping.note", {}, brand=brand, at=T0)
    cancelled = delays.delay("timekeeping.note", {}, brand=brand, at=T0)
    assert arming.hold(held, by="ask_9Ts4 while the organizer waits")
    delays.cancel(cancelled)
    phases.run_once(now=T0)
    with wallclock.fixed(T0):
        why = {name: arming.explain(Timer.objects.get(pk=pk)) for name, pk in
               [("later", later), ("fired", fired), ("held", held), ("cancelled", cancelled)]}
    assert "armed and owed 2026-12-02 14:00:00Z, 2d from now" in why["later"]
    assert "fired at 2026-11-30 14:00:00Z" in why["fired"] and "late by 3m" in why["fired"]
    assert "is held by ask_9Ts4 while the organizer waits" in why["held"]
    assert "was cancelled by cancel()" in why["cancelled"]
    assert arming.release(held)
    phases.run_once(now=T0)
    assert Timer.objects.get(pk=held).state == "fired"
