"""Backoff and parking (issue 31): a timer whose handler fails is tried again after 1, 2, 4 …
minutes (at most 6 hours, each wait moved by up to ±10%), and parked after the brand's
`park_after` failures: no more tries until someone retries it or gives it up
(timekeeping.timers.parking, the tick through `phases.run_once`)."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tests import faulty  # noqa: F401 - registers faulty.boom
from timekeeping.models import Record, Timer
from timekeeping.tick import phases
from timekeeping.timers import delays, parking

AUCKLAND = ZoneInfo("Pacific/Auckland")
T0 = datetime(2027, 3, 14, 9, 30, tzinfo=AUCKLAND)
MINUTE = timedelta(minutes=1)


def tick(now):
    """The tick's timers phase (the others have nothing here to do)."""
    return phases.run_once(now=now, phases=False)


def failing(brand, at=T0, key="boom"):
    return delays.delay("faulty.boom", {}, brand=brand, at=at, key=key)


def note(brand, at, key):
    return delays.delay("timekeeping.note", {}, brand=brand, at=at, key=key)


@pytest.mark.parametrize("attempts, minutes", [
    (1, 1), (2, 2), (3, 4), (4, 8), (5, 16), (6, 32), (7, 64), (8, 128), (9, 256),
    (10, 360), (11, 360), (40, 360)])
def test_it_waits_one_minute_then_doubles_up_to_six_hours_give_or_take_a_tenth(attempts,
                                                                                minutes):
    waits = {parking.delay(attempts, seed=f"tmr_{n:016d}") for n in range(50)}
    base = timedelta(minutes=minutes)
    assert all(base * 0.9 <= wait <= base * 1.1 for wait in waits)
    assert len(waits) > 1  # jittered: not all the same
    # The same timer and attempt always waits the same (tests and reruns agree).
    assert parking.delay(attempts, seed="tmr_x") == parking.delay(attempts, seed="tmr_x")


def test_a_failing_timer_is_tried_on_its_backoff_and_parked_after_ten(brand):
    boom = failing(brand)
    instant, tries = T0, []
    for attempt in range(1, 11):
        tick(instant)
        timer = Timer.objects.get(pk=boom)
        assert timer.attempts == attempt
        tries.append(instant)
        if attempt == 10:
            break
        wait = parking.delay(attempt, seed=boom)
        assert timer.next_attempt == instant + wait
        # A tick a second before its next attempt passes it by.
        tick(timer.next_attempt - timedelta(seconds=1))
        assert Timer.objects.get(pk=boom).attempts == attempt
        instant = timer.next_attempt
    gaps = [(b - a) / MINUTE for a, b in zip(tries, tries[1:], strict=False)]
    assert [g / n for g, n in zip(gaps, [1, 2, 4, 8, 16, 32, 64, 128, 256], strict=True)
            if not 0.9 <= g / n <= 1.1] == []
    parked = Timer.objects.get(pk=boom)
    assert (parked.state, parked.parked, parked.next_attempt) == ("held", instant, None)
    assert "RuntimeError: the handler broke" in parked.last_error
    event = Record.objects.get(kind="timer.parked", timer=boom)
    assert event.data["attempts"] == 10 and event.data["error"].startswith("RuntimeError")
    assert Record.objects.filter(kind="timer.failed", timer=boom).count() == 10
    # The tick never tries a parked timer again, however long it waits.
    for later in (MINUTE, timedelta(hours=6), timedelta(days=30)):
        result = tick(instant + later)
        assert result.total("failed") == 0
    assert Timer.objects.get(pk=boom).attempts == 10


def test_the_brand_sets_how_many_failures_park_a_timer(brand):
    brand.park_after = 2
    brand.save(update_fields=["park_after"])
    boom = failing(brand)
    tick(T0)
    tick(Timer.objects.get(pk=boom).next_attempt)
    assert Timer.objects.get(pk=boom).parked is not None


def test_a_timer_backing_off_does_not_hold_up_the_others(brand):
    boom = failing(brand)
    tick(T0)
    later = [note(brand, T0 + timedelta(seconds=n), f"note:{n}") for n in range(1, 4)]
    result = tick(T0 + timedelta(seconds=30))
    assert result.total("fired") == 3 and result.total("failed") == 0
    assert set(Timer.objects.filter(pk__in=later).values_list("state", flat=True)) == {"fired"}
    assert Timer.objects.get(pk=boom).attempts == 1


def park(brand, key="boom"):
    brand.park_after = 1
    brand.save(update_fields=["park_after"])
    boom = failing(brand, key=key)
    tick(T0)
    assert Timer.objects.get(pk=boom).parked == T0
    return boom


def test_retry_now_fires_it_at_the_next_tick(brand):
    boom = park(brand)
    Timer.objects.filter(pk=boom).update(payload={"operation": "timekeeping.note", "input": {},
                                                  "overdue_s": None})
    later = T0 + timedelta(hours=3)
    timer = parking.retry_now(boom, by="owner", now=later)
    assert (timer.state, timer.parked, timer.next_attempt) == ("armed", None, None)
    assert Record.objects.get(kind="timer.retried", timer=boom).data["by"] == "owner"
    result = tick(later + MINUTE)
    assert result.total("fired") == 1
    assert Timer.objects.get(pk=boom).state == "fired"


def test_a_retried_timer_that_fails_again_is_parked_again_at_once(brand):
    boom = park(brand)
    parking.retry_now(boom, by="owner", now=T0 + MINUTE)
    tick(T0 + 2 * MINUTE)
    timer = Timer.objects.get(pk=boom)
    assert (timer.state, timer.attempts, timer.parked) == ("held", 2, T0 + 2 * MINUTE)
    assert Record.objects.filter(kind="timer.parked", timer=boom).count() == 2


def test_give_up_ends_the_timer_on_the_record(brand):
    boom = park(brand)
    timer = parking.give_up(boom, by="owner", now=T0 + MINUTE)
    assert (timer.state, timer.ended_by, timer.parked) == ("cancelled", "given up by owner",
                                                            None)
    given_up = Record.objects.get(kind="timer.given_up", timer=boom)
    assert given_up.data == {"by": "owner", "attempts": 1, "kind": "delay", "key": "boom"}
    assert tick(T0 + timedelta(days=1)).total("failed") == 0
    # Only a parked timer can be retried or given up.
    with pytest.raises(parking.NotParked):
        parking.give_up(boom, by="owner", now=T0 + MINUTE)
    with pytest.raises(parking.NotParked):
        parking.retry_now(boom, by="owner", now=T0 + MINUTE)
    with pytest.raises(parking.NotParked):
        parking.retry_now(note(brand, T0, "fine"), by="owner", now=T0)
