"""Backoff and parking (issue 31): a timer whose handler fails is tried again after 1, 2, 4 …
minutes (at most 6 hours, each wait moved by up to ±10%), and parked after the brand's
`park_after` failures: no more tries until someone retries it or gives it up
(timekeeping.timers.parking, the tick through `phases.run_once`)."""

import json
import tracemalloc
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.test import Client

from tests import faulty  # noqa: F401 - registers faulty.boom
from timekeeping.access import keys
from timekeeping.basics import wallclock
from timekeeping.models import Record, Timer
from timekeeping.tick import phases, test_clocks
from timekeeping.tick.engine import Engine
from timekeeping.timers import delays, outbox, parking
from timekeeping.webhooks import endpoints

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
    assert given_up.data == {"by": "owner", "attempts": 1, "timer_kind": "delay", "key": "boom"}
    assert tick(T0 + timedelta(days=1)).total("failed") == 0
    # Only a parked timer can be retried or given up.
    with pytest.raises(parking.NotParked):
        parking.give_up(boom, by="owner", now=T0 + MINUTE)
    with pytest.raises(parking.NotParked):
        parking.retry_now(boom, by="owner", now=T0 + MINUTE)
    with pytest.raises(parking.NotParked):
        parking.retry_now(note(brand, T0, "fine"), by="owner", now=T0)


def backing_off(brand, template: Timer, count: int, *, next_attempt: datetime) -> None:
    """`count` copies of `template` that failed 3 times and wait for `next_attempt`, written
    in one INSERT … SELECT (a Python loop of 100,000 models takes most of a minute)."""
    ops = connection.ops
    values = {"brand_id": "%s", "test_clock_id": "NULL", "kind": "%s", "place": "%s",
              "owed": "%s", "state": "'armed'", "owner_type": "''", "owner_id": "''",
              "owner_opened": "%s", "bundle": "''", "payload": "%s", "armed_at": "%s",
              "armed_by": "''", "ended_by": "''", "attempts": "3", "last_error": "''",
              "next_attempt": "%s"}
    params = [brand.pk, template.kind, template.place,
              ops.adapt_datetimefield_value(template.owed),
              ops.adapt_datetimefield_value(template.owner_opened),
              json.dumps(template.payload), ops.adapt_datetimefield_value(template.armed_at),
              ops.adapt_datetimefield_value(next_attempt)]
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {count}) "
            f"INSERT INTO {Timer._meta.db_table} (id, key, {', '.join(values)}) "
            f"SELECT 'tmr_b' || CAST(1000000000 + i AS TEXT), 'boom:' || CAST(i AS TEXT), "
            f"{', '.join(values.values())} FROM n", params)


def test_the_tick_holds_nothing_of_failures_however_many_timers_back_off(brand):
    """100,000 failing timers backing off: the tick asks the index for what is due, so it
    neither takes them nor keeps anything of them; its memory is that of what it fires."""
    template = Timer.objects.get(pk=failing(brand, key="template"))
    backing_off(brand, template, 100_000, next_attempt=T0 + timedelta(minutes=4))
    fresh = [note(brand, T0, f"note:{n}") for n in range(5)]
    tracemalloc.start()
    try:
        result = tick(T0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The template failed now; the 100,000 wait for their next attempt, untouched.
    assert (result.total("failed"), result.total("fired")) == (1, 5)
    assert Timer.objects.filter(attempts=3, next_attempt__gt=T0).count() == 100_000
    assert set(Timer.objects.filter(pk__in=fresh).values_list("state", flat=True)) == {"fired"}
    assert peak < 8 * 2**20, f"the tick held {peak / 2**20:.1f} MiB"
    # Each failure is on its timer's row, none in the engine (what the issue saw grow).
    assert not hasattr(Engine, "failed_ids")


def test_a_parked_timer_is_an_event_a_webhook_hears(brand, receiver):
    endpoints.make(brand, url=receiver.url, types=["timer.parked"])
    park(brand)
    with wallclock.fixed(T0):
        assert outbox.sweep(now=T0).sent == 1
    [(_, body)] = receiver.requests
    event = json.loads(body)
    assert event["type"] == "timer.parked"
    assert event["data"]["kind"] == "timer.parked" and event["data"]["attempts"] == 1
    assert "failed 1 times in a row, so it was parked" in event["summary"]


def _api(client, timer_id, verb, **extra):
    with wallclock.fixed(T0 + MINUTE):
        return client.post(f"/api/timers/{timer_id}/{verb}", content_type="application/json",
                           **extra)


def test_the_api_retries_a_parked_timer_or_gives_it_up(brand, actors):
    boom, other = park(brand), park(brand, "boom2")
    made = keys.make(brand=brand, name="ops", by=None, now=T0)
    as_key = {"HTTP_AUTHORIZATION": f"Bearer {made.secret}"}
    answer = _api(Client(), boom, "retry", **as_key)
    assert answer.status_code == 200
    assert (answer.json()["state"], answer.json()["parked"]) == ("armed", None)
    assert Record.objects.get(kind="timer.retried").data["by"].startswith("key ")
    assert _api(Client(), boom, "retry", **as_key).status_code == 409  # not parked now
    owner = Client()
    owner.force_login(actors["owner"])
    given_up = _api(owner, other, "give-up")
    assert given_up.status_code == 200 and given_up.json()["state"] == "cancelled"
    stranger = Client()
    stranger.force_login(actors["outsider"])
    assert _api(stranger, boom, "give-up").status_code == 404
    assert Timer.objects.get(pk=boom).state == "armed"
    assert tick(T0 + 2 * MINUTE).total("failed") == 1  # retried at the next tick


def test_a_test_clocks_walk_keeps_the_same_waits_and_parks_after_ten(brand, test_clock):
    start = test_clock.frozen_time
    boom = delays.delay("faulty.boom", {}, brand=brand, at=start + MINUTE, key="boom",
                        test_clock=test_clock)
    test_clocks.advance(test_clock, to=start + timedelta(days=2))
    tried = list(Record.objects.filter(kind="timer.failed", timer=boom)
                 .order_by("instant").values_list("instant", flat=True))
    # Ten tries (not one a minute for two days), each after the wait its failure set.
    assert len(tried) == 10 and tried[0] == start + MINUTE
    for attempt, (before, after) in enumerate(zip(tried, tried[1:], strict=False), start=1):
        assert after - before == parking.delay(attempt, seed=boom)
    timer = Timer.objects.get(pk=boom)
    assert (timer.state, timer.parked) == ("held", tried[-1])
    assert Record.objects.filter(kind="timer.parked", timer=boom).count() == 1
