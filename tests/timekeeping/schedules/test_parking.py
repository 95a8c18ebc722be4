"""Backoff and parking of a schedule whose runs fail (issue 31): its next due time moves past a
wait of 1, 2, 4 … minutes (the timers' own, `timers.parking.delay`) onto its grid, it is parked
after the brand's `park_after` failed runs in a row, and no tick runs it until someone retries
it or gives it up, in the console or over the API (timekeeping.schedules.parking, through the
tick `phases.run_once`). Runs go in threads with their own connections, so these tests commit
(transactional)."""

import html
import json
import re
from datetime import datetime, timedelta
from io import StringIO
from zoneinfo import ZoneInfo

import pytest
from django.core.management import call_command
from django.test import Client

from timekeeping import manifests
from timekeeping.access import keys
from timekeeping.basics import wallclock
from timekeeping.models import Member, Record, Schedule, ScheduleRun, TestClock
from timekeeping.schedules import action, declare, operate, parking
from timekeeping.tick import phases, test_clocks
from timekeeping.timers import parking as timer_parking
from timekeeping.webhooks import catalogue, endpoints

pytestmark = pytest.mark.django_db(transaction=True)
AUCKLAND = ZoneInfo("Pacific/Auckland")
T0 = datetime(2027, 3, 14, 9, 30, tzinfo=AUCKLAND)  # NZDT, UTC+13
MINUTE = timedelta(minutes=1)
BROKEN = {"ops.fragile": True}  # whether `ops.fragile` raises; a test mends it


@action("ops.fragile")
def fragile() -> int:
    if BROKEN["ops.fragile"]:
        raise RuntimeError("the books service did not answer")
    return 1


@pytest.fixture(autouse=True)
def broken():
    BROKEN["ops.fragile"] = True


def tick(instant: datetime):
    with wallclock.fixed(instant):  # what a run writes with the real clock: its tick's time
        return phases.run_once(now=instant)


def load(brand, every: str = "1m") -> Schedule:
    manifests.load(brand, {"schedules": {"ops": {"sync": {"every": every, "run": "fragile"}}}})
    tick(T0)  # the first tick that sees it: due one interval later
    return row_of(brand)


def row_of(brand) -> Schedule:
    return Schedule.objects.get(brand_id=brand.pk, test_clock__isnull=True)


def runs(row: Schedule) -> list[datetime]:
    return list(ScheduleRun.objects.filter(schedule=row).order_by("tick")
                .values_list("tick", flat=True))


def on_grid_from(start: datetime, instant: datetime, every: timedelta = MINUTE) -> datetime:
    """The first time of the grid `start` + k·every at or after `instant`."""
    steps = -((start - instant) // every)  # ceiling division
    return start + steps * every


def test_a_failing_schedule_backs_off_on_its_grid_and_is_parked_after_ten(brand):
    row = load(brand)
    instant = row.next_due
    assert instant == T0 + MINUTE
    tried = []
    for attempt in range(1, 11):
        tick(instant)
        tried.append(instant)
        row = row_of(brand)
        assert (row.attempts, runs(row)) == (attempt, tried)
        assert "RuntimeError: the books service did not answer" in row.last_error
        if attempt == 10:
            break
        # The timers' own wait, seeded by the schedule's id, then the first minute of its grid.
        wait = timer_parking.delay(attempt, seed=row.pk)
        assert row.next_due == on_grid_from(T0, instant + wait)
        tick(row.next_due - timedelta(seconds=1))  # not yet: passed by
        assert runs(row_of(brand)) == tried
        instant = row.next_due
    gaps = [(b - a) / MINUTE for a, b in zip(tried, tried[1:], strict=False)]
    # 1, 2, 4 … 256 minutes, each ±10% and rounded up to the next minute of the grid.
    assert [(g, n) for g, n in zip(gaps, [1, 2, 4, 8, 16, 32, 64, 128, 256], strict=True)
            if not 0.9 * n <= g <= 1.1 * n + 1] == []
    assert (row.parked, row.paused) == (instant, False)
    failed = Record.objects.filter(kind="schedule.failed").order_by("instant")
    assert [r.data["attempts"] for r in failed] == list(range(1, 11))
    assert failed.last().data["next_due"] is None
    assert datetime.fromisoformat(failed.first().data["next_due"]) == on_grid_from(
        T0, tried[0] + timer_parking.delay(1, seed=row.pk))
    # No phase of the tick runs it again, nor skips it, however long it waits; nor by hand.
    assert operate.run_by_hand(row) is False
    for later in (MINUTE, timedelta(hours=6), timedelta(days=30)):
        assert tick(instant + later).faults == []
    assert not ScheduleRun.objects.filter(schedule=row, tick__gt=instant).exists()
    assert "it is parked: it failed 10 times in a row" in operate.why(row_of(brand))


def test_it_is_an_event_a_webhook_hears(brand, receiver):
    endpoints.make(brand, url=receiver.url, types=["schedule.parked"])
    row = park(brand)
    event = Record.objects.get(kind="schedule.parked")
    last = ScheduleRun.objects.get(schedule=row)
    assert event.data == {"schedule": "ops.sync", "schedule_id": row.pk, "run": last.pk,
                          "attempts": 1, "error": "RuntimeError: the books service did not "
                                                  "answer"}
    [(_, body)] = receiver.requests  # sent by the same tick's outbox phase
    said = json.loads(body)
    assert said["type"] == "schedule.parked"
    assert said["objects"] == {"schedule_id": row.pk, "run": last.pk}
    assert said["summary"] == ("The schedule 'ops.sync' failed 1 time in a row, so it was "
                               "parked: it does not run until someone retries it or gives it "
                               "up.")
    assert catalogue.type_of("schedule.parked") == "schedule.parked"


def test_an_hourly_schedule_runs_at_its_next_hour_while_the_wait_is_shorter(brand):
    row = load(brand, every="1h")
    tick(row.next_due)
    again = row_of(brand)
    assert (again.attempts, again.next_due) == (1, T0 + 2 * timedelta(hours=1))


def test_the_brand_sets_how_many_failed_runs_park_it(brand):
    brand.park_after = 2
    brand.save(update_fields=["park_after"])
    row = load(brand)
    tick(row.next_due)
    assert row_of(brand).parked is None
    tick(row_of(brand).next_due)
    assert (row_of(brand).attempts, row_of(brand).parked is not None) == (2, True)


def test_a_run_that_works_resets_the_count(brand):
    row = load(brand)
    tick(row.next_due)
    tick(row_of(brand).next_due)
    assert row_of(brand).attempts == 2
    BROKEN["ops.fragile"] = False
    mended = row_of(brand).next_due
    tick(mended)
    row = row_of(brand)
    assert (row.attempts, row.last_error, row.parked) == (0, "", None)
    assert row.next_due == mended + MINUTE  # each minute again
    assert Record.objects.get(kind="schedule.recovered").data["schedule"] == "ops.sync"
    # A failure after it waits a minute again, not four.
    BROKEN["ops.fragile"] = True
    tick(row.next_due)
    assert row_of(brand).next_due == on_grid_from(
        T0, row.next_due + timer_parking.delay(1, seed=row.pk))


def test_a_schedule_of_the_code_parks_after_ten_and_writes_no_record(db, monkeypatch):
    monkeypatch.setitem(declare._code_schedules, "ops.fragile", ("ops.fragile", 60, ""))
    tick(T0)
    for _ in range(10):
        tick(Schedule.objects.get(name="ops.fragile").next_due)
    row = Schedule.objects.get(name="ops.fragile")
    assert (row.brand_id, row.attempts, row.parked is not None) == (None, 10, True)
    assert not Record.objects.filter(kind__startswith="schedule.").exists()
    # Its door is the operator's: the command (and the admin).
    said = StringIO()
    call_command("schedules", "retry", "ops.fragile", stdout=said)
    assert "runs at the next tick" in said.getvalue()
    assert Schedule.objects.get(pk=row.pk).run_requested


def test_a_test_clocks_walk_backs_it_off_on_the_clocks_time_and_walks_past_it(brand):
    manifests.load(brand, {"schedules": {"ops": {"sync": {"every": "1m", "run": "fragile"}}}})
    start = datetime(2028, 3, 1, 9, tzinfo=AUCKLAND)
    world = TestClock.objects.create(brand=brand, name="spring", frozen_time=start)
    test_clocks.advance(world, to=start + timedelta(days=1))
    world.refresh_from_db()
    assert world.frozen_time == start + timedelta(days=1)  # not held up by the parked schedule
    row = Schedule.objects.get(test_clock=world)
    tried = runs(row)
    assert (row.attempts, len(tried), row.parked) == (10, 10, tried[-1])
    for attempt, (before, after) in enumerate(zip(tried, tried[1:], strict=False), start=1):
        assert after == on_grid_from(start + MINUTE, before + timer_parking.delay(attempt,
                                                                            seed=row.pk))
    # Its events are of the test world.
    assert Record.objects.get(kind="schedule.parked").test_clock_id == world.pk


def park(brand) -> Schedule:
    brand.park_after = 1
    brand.save(update_fields=["park_after"])
    row = load(brand)
    tick(row.next_due)
    row = row_of(brand)
    assert row.parked == T0 + MINUTE
    return row


def test_retry_now_runs_it_once_at_the_next_tick_and_its_grid_goes_on(brand):
    row = park(brand)
    later = T0 + timedelta(hours=3, seconds=20)
    BROKEN["ops.fragile"] = False
    retried = parking_retry(row, later)
    assert (retried.parked, retried.run_requested, retried.attempts) == (None, True, 1)
    assert retried.next_due == T0 + timedelta(hours=3, minutes=1)  # its grid, from now on
    assert Record.objects.get(kind="schedule.retried").data == {
        "schedule": "ops.sync", "by": "owner", "attempts": 1}
    tick(later + timedelta(seconds=10))
    last = ScheduleRun.objects.filter(schedule=row).latest("tick")
    assert (last.by_hand, last.outcome) == (True, "succeeded")
    assert row_of(brand).attempts == 0
    with pytest.raises(parking.NotParked):
        parking_retry(row, later)


def parking_retry(row, now):
    return parking.retry_now(row.pk, by="owner", now=now)


def test_a_retried_schedule_that_fails_again_is_parked_again_at_once(brand):
    row = park(brand)
    parking_retry(row, T0 + 2 * MINUTE)
    tick(T0 + 3 * MINUTE)
    again = row_of(brand)
    assert (again.attempts, again.parked) == (2, T0 + 3 * MINUTE)
    assert Record.objects.filter(kind="schedule.parked").count() == 2


def test_give_up_pauses_it_until_someone_resumes_it(brand):
    row = park(brand)
    given_up = parking.give_up(row.pk, by="owner", now=T0 + 2 * MINUTE)
    assert (given_up.paused, given_up.parked, given_up.attempts, given_up.last_error) == (
        True, None, 0, "")
    assert Record.objects.get(kind="schedule.given_up").data["attempts"] == 1
    tick(given_up.next_due)  # paused: its due time is skipped, as any pause's
    assert ScheduleRun.objects.filter(schedule=row).latest("tick").reason == "paused"


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


class People(dict):
    """The brand's owner, a manager (staff), a viewer (member) and a stranger (outsider), each
    signed in when asked: after the ticks, whose housekeeping ends sessions past their time."""

    def __missing__(self, name: str) -> Client:
        client = self[name] = Client()
        client.force_login(self.actors[name])
        return client


@pytest.fixture
def people(brand, actors):
    Member.objects.create(brand=brand, user=actors["staff"], role=Member.Role.MANAGER)
    Member.objects.create(brand=brand, user=actors["member"], role=Member.Role.VIEWER)
    found = People()
    found.actors = actors
    return found


def _page(people, brand, who, path="schedules/", at=T0 + 2 * MINUTE):
    with wallclock.fixed(at):
        return people[who].get(f"/console/{brand.pk}/{path}", {"test": "off"})


def _settle(people, brand, who, row, do):
    with wallclock.fixed(T0 + 2 * MINUTE):
        return people[who].post(f"/console/{brand.pk}/attention/settle", {
            "kind": "parked schedule", "row": row.pk, "do": do,
            "next": f"/console/{brand.pk}/schedules/"})


def test_the_schedules_page_says_it_backs_off_then_offers_retry_and_give_up(brand, people):
    row = load(brand)
    tick(row.next_due)
    tick(row_of(brand).next_due)
    said = _text(_page(people, brand, "owner", at=runs(row)[-1] + timedelta(seconds=10)))
    # (_text puts a space where a tag ends: "in 3 minutes</time>," reads "in 3 minutes ,".)
    assert re.search(r"Failed 2 times in a row; tried again in \d minutes? ?, waiting longer "
                     r"after each failure\.", said)
    Schedule.objects.filter(pk=row.pk).update(parked=T0 + MINUTE, attempts=10)
    for who in ("owner", "staff"):
        said = _text(_page(people, brand, who))
        assert re.search(r"Failed 10 times in a row, the last 1 minute ago ?, so it is parked",
                         said)
        assert "Retry now ops.sync" in said and "Give up ops.sync" in said
        assert "Run now ops.sync" not in said
    assert "Retry now" not in _text(_page(people, brand, "member"))
    assert _page(people, brand, "outsider").status_code == 404


def test_retry_now_and_give_up_from_the_console(brand, people):
    row = park(brand)
    assert _settle(people, brand, "member", row, "retry_now").status_code == 403
    assert _settle(people, brand, "outsider", row, "give_up").status_code == 404
    assert row_of(brand).parked is not None  # neither changed anything
    with wallclock.fixed(T0 + 2 * MINUTE):  # the page's own Run now, sent from an old page
        refused = people["owner"].post(f"/console/{brand.pk}/schedules/act",
                                       {"schedule": row.pk, "do": "run"})
    assert "ops.sync was not run: it is parked. Retry it now or give it up." in _text(
        people["owner"].get(refused["Location"]))
    assert not row_of(brand).run_requested
    done = _settle(people, brand, "staff", row, "retry_now")
    assert done["Location"] == f"/console/{brand.pk}/schedules/"
    assert "ops.sync runs at the next tick. If it fails again, it comes back here." in _text(
        people["staff"].get(done["Location"]))
    assert (row_of(brand).parked, row_of(brand).run_requested) == (None, True)
    Schedule.objects.filter(pk=row.pk).update(parked=T0 + MINUTE, run_requested=False)
    given_up = _settle(people, brand, "owner", row, "give_up")
    assert "Given up: ops.sync is paused" in _text(people["owner"].get(given_up["Location"]))
    assert (row_of(brand).paused, row_of(brand).parked) == (True, None)
    again = _settle(people, brand, "owner", row, "retry_now")
    assert "no such item at this brand" in _text(people["owner"].get(again["Location"]))


def test_needs_attention_says_it_is_parked_in_place_of_its_failed_runs(brand, people):
    row = park(brand)
    needs = _text(_page(people, brand, "owner", "")).split("Needs attention")[1]
    assert ("The ops.sync schedule failed 1 time in a row, so it was parked: it does not run "
            "until you retry it or give it up") in needs
    assert "Retry now" in needs and "Give up" in needs
    assert "The ops.sync schedule failed" in needs and "Run it now" not in needs
    assert "Retry now" not in _text(_page(people, brand, "member", ""))
    parking.retry_now(row.pk, by="owner", now=T0 + 2 * MINUTE)
    needs = _text(_page(people, brand, "owner", "")).split("Needs attention")[1]
    assert "so it was parked" not in needs
    assert "The ops.sync schedule failed; it is tried again later" in needs


def _api(client, row, verb="", **extra):
    path = f"/api/schedules/{row.pk}" + (f"/{verb}" if verb else "")
    with wallclock.fixed(T0 + 2 * MINUTE):
        if not verb:
            return client.get(path, **extra)
        return client.post(path, content_type="application/json", **extra)


def test_the_api_says_how_it_fares_and_retries_or_gives_it_up(brand, people):
    row = park(brand)
    made = keys.make(brand=brand, name="ops", by=None, now=T0)
    as_key = {"HTTP_AUTHORIZATION": f"Bearer {made.secret}"}
    read = _api(Client(), row, **as_key).json()
    assert (read["attempts"], read["parked"] is not None) == (1, True)
    assert read["failed_with"] == "RuntimeError: the books service did not answer"
    assert "it is parked: it failed once in a row" in read["why"]
    assert _api(people["member"], row, "retry").status_code == 403
    for verb in ("", "retry", "give-up"):
        assert _api(people["outsider"], row, verb).status_code == 404
    answer = _api(Client(), row, "retry", **as_key)
    assert answer.status_code == 200
    assert (answer.json()["parked"], answer.json()["run_requested"]) == (None, True)
    assert Record.objects.get(kind="schedule.retried").data["by"].startswith("key ")
    refused = _api(Client(), row, "give-up", **as_key)
    assert refused.status_code == 409 and "not parked" in refused.json()["schedule"][0]
    tick(T0 + 3 * MINUTE)  # still failing: parked again at once
    given_up = _api(people["staff"], row, "give-up")
    assert given_up.status_code == 200
    assert (given_up.json()["paused"], given_up.json()["attempts"]) == (True, 0)
