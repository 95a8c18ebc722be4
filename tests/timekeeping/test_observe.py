"""What an operator watches (docs/operating.md, "Watching it"): /health/, /health/tick and
/metrics, read on the real clock, fixed at explicit instants."""

import json
import logging
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path
from unittest import mock

import pytest
from django.core.management import call_command
from django.db import OperationalError
from django.test import Client

from config.logs import JsonFormatter
from timekeeping.basics import wallclock
from timekeeping.models import Delivery, TickRun, Timer
from timekeeping.tick import phases, test_clocks
from timekeeping.timers import delays, outbox

T = datetime(2027, 3, 14, 6, 30, tzinfo=UTC)  # 01:30 in New York, the night the clocks change
TOKEN = "metrics-token-for-the-test-0123456789"


@pytest.fixture
def scraper(settings):
    settings.METRICS_TOKEN = TOKEN
    return Client(HTTP_AUTHORIZATION=f"Bearer {TOKEN}")


def _figures(scraper) -> dict[str, float]:
    answer = scraper.get("/metrics")
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("text/plain")
    found = {}
    for line in answer.content.decode().splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            found[name] = float(value)
    return found


@pytest.mark.django_db
def test_health_answers_while_the_database_does_and_says_the_ticks_age(client, brand):
    with wallclock.fixed(T):
        said = client.get("/health/")
    assert said.status_code == 200
    assert said.json() == {"database": "ok", "tick": "never", "last_tick": None,
                           "last_tick_age_s": None}
    assert client.get("/health/tick").status_code == 503  # it never ticked
    with wallclock.fixed(T):
        phases.run_once(now=T)
    with wallclock.fixed(T + timedelta(seconds=90)):
        said = client.get("/health/tick")
    assert said.status_code == 200
    assert said.json() == {"database": "ok", "tick": "running", "last_tick": "2027-03-14T06:30:00Z",
                           "last_tick_age_s": 90}
    # Five minutes is the default: a minute past it, the tick has stopped, and only the
    # monitor's door says so with its status; the load balancer's stays 200.
    with wallclock.fixed(T + timedelta(minutes=6)):
        assert client.get("/health/tick").status_code == 503
        assert client.get("/health/tick").json()["tick"] == "stopped"
        assert client.get("/health/").status_code == 200


@pytest.mark.django_db
def test_health_is_503_when_the_database_does_not_answer(client):
    with mock.patch("django.db.connection.cursor",
                    side_effect=OperationalError("connection refused")):
        said = client.get("/health/")
    assert said.status_code == 503
    assert said.json() == {"database": "unreachable", "error": "OperationalError"}


@pytest.mark.django_db
def test_metrics_answer_only_their_token(settings, client, scraper, actors):
    settings.METRICS_TOKEN = ""
    assert scraper.get("/metrics").status_code == 404  # none set: no metrics at all
    settings.METRICS_TOKEN = TOKEN
    for header in ("", f"Bearer {TOKEN}x", f"Basic {TOKEN}", TOKEN, "Bearer "):
        assert Client(HTTP_AUTHORIZATION=header).get("/metrics").status_code == 404, header
    client.force_login(actors["owner"])  # a person's session is no token either
    assert client.get("/metrics").status_code == 404
    assert scraper.post("/metrics").status_code == 404
    assert scraper.get("/metrics").status_code == 200


@pytest.mark.django_db
def test_metrics_count_the_real_clocks_timers_lag_outbox_and_tick(brand, scraper):
    for n in range(3):  # owed 10, 20 and 30 minutes before T
        delays.delay("timekeeping.note", {"n": n}, brand=brand,
                     at=T - timedelta(minutes=10 * (n + 1)), key=f"owed-{n}")
    delays.delay("timekeeping.note", {}, brand=brand, at=T + timedelta(days=1), key="ahead")
    rehearsal = test_clocks.create(brand=brand, name="r", frozen_time=T - timedelta(days=9))
    delays.delay("timekeeping.note", {}, brand=brand, at=T - timedelta(days=1),
                 test_clock=rehearsal, key="rehearsal")  # a test clock's: not counted
    outbox.tell(brand=brand, test_clock_id=None, to=["someone@example.test"], subject="Hello",
                body="A body.", key="hello")
    with wallclock.fixed(T):
        before = _figures(scraper)
    assert before['keeping_time_timers_armed{place="5"}'] == 4
    assert before['keeping_time_timers_owed{place="5"}'] == 3
    assert before['keeping_time_timers_armed{place="1"}'] == 0
    assert before["keeping_time_firing_lag_seconds"] == 30 * 60
    assert before["keeping_time_tick_age_seconds"] == -1
    assert before["keeping_time_tick_stopped"] == 1
    assert before['keeping_time_outbox_deliveries{state="pending"}'] == 1
    assert before["keeping_time_timers_fired_late_last_hour"] == 0

    # The tick fires the three, each more than five minutes late.
    with wallclock.fixed(T):
        phases.run_once(now=T, sweep=False)
    with wallclock.fixed(T + timedelta(minutes=1)):
        after = _figures(scraper)
    assert after['keeping_time_timers_owed{place="5"}'] == 0
    assert after['keeping_time_timers_armed{place="5"}'] == 1
    assert after["keeping_time_firing_lag_seconds"] == 0
    assert after["keeping_time_timers_fired_late_last_hour"] == 3
    assert after["keeping_time_tick_age_seconds"] == 60
    assert after["keeping_time_tick_stopped"] == 0
    assert after["keeping_time_tick_clock_runs_last_hour"] == 1
    assert after["keeping_time_tick_fired_last_hour"] == 3
    assert after["keeping_time_tick_passes_max"] == 1
    assert after["keeping_time_tick_clock_seconds_max"] == 0  # the clock was fixed throughout
    # 10, 20 and 30 minutes late: one in the bucket up to 15 minutes, two up to an hour.
    assert [after[f'keeping_time_timer_late_by_seconds_bucket{{le="{le}"}}']
            for le in (300, 900, 3600, "+Inf")] == [0, 1, 3, 3]
    assert after["keeping_time_timer_late_by_seconds_sum"] == 3600
    assert after["keeping_time_timer_late_by_seconds_count"] == 3
    assert Timer.objects.get(key="rehearsal").state == Timer.State.ARMED
    Delivery.objects.update(state=Delivery.State.FAILED)
    with wallclock.fixed(T + timedelta(minutes=1)):
        assert _figures(scraper)['keeping_time_outbox_deliveries{state="failed"}'] == 1

    # The histogram is a running total: the next tick's firing (20 s late) adds to it.
    delays.delay("timekeeping.note", {}, brand=brand, at=T + timedelta(minutes=2), key="soon")
    with wallclock.fixed(T + timedelta(minutes=2, seconds=20)):
        phases.run_once(now=T + timedelta(minutes=2, seconds=20), sweep=False)
        later = _figures(scraper)
    assert [later[f'keeping_time_timer_late_by_seconds_bucket{{le="{le}"}}']
            for le in (15, 30, 900, "+Inf")] == [0, 1, 2, 4]
    assert later["keeping_time_timer_late_by_seconds_sum"] == 3620


@pytest.mark.django_db
def test_stopped_work_is_counted_by_kind_and_the_tick_takes_it_up(brand, scraper):
    # A sweep that died after claiming a delivery, and a tick killed mid-run two hours ago.
    stuck = Delivery.objects.create(
        brand=brand, channel="email", idempotency_key="stuck", state=Delivery.State.RUNNING,
        lease_until=T - timedelta(minutes=1), attempts=1, next_attempt=T - timedelta(minutes=6),
        payload={"to": ["a@example.test"], "subject": "s", "body": "b"})
    TickRun.objects.create(brand=brand, instant=T - timedelta(hours=2),
                           started=T - timedelta(hours=2), holder="gone:1:x")
    with wallclock.fixed(T):
        before = _figures(scraper)
    assert [before[f'keeping_time_stopped_work{{kind="{kind}"}}'] for kind in (
        "delivery_sending", "schedule_run_running", "tick_run_unfinished")] == [1, 0, 1]
    with wallclock.fixed(T):
        phases.run_once(now=T)
        after = _figures(scraper)
    assert [after[f'keeping_time_stopped_work{{kind="{kind}"}}'] for kind in (
        "delivery_sending", "schedule_run_running", "tick_run_unfinished")] == [0, 0, 0]
    stuck.refresh_from_db()
    assert (stuck.state, stuck.attempts) == (Delivery.State.SUCCEEDED, 2)


@pytest.mark.django_db
def test_a_scrape_asks_the_same_queries_however_many_timers(brand, scraper,
                                                           django_assert_max_num_queries):
    with wallclock.fixed(T):
        _figures(scraper)
        Timer.objects.bulk_create([
            Timer(brand=brand, key=f"k{n}", kind="delay", place=5, owed=T - timedelta(hours=n),
                  owner_type="", owner_id="", owner_opened=T, payload={})
            for n in range(500)])
        with django_assert_max_num_queries(12):
            assert _figures(scraper)['keeping_time_timers_owed{place="5"}'] == 500


@pytest.mark.django_db
def test_the_tick_prints_one_json_object_when_asked(settings, brand):
    settings.LOG_FORMAT = "json"
    delays.delay("timekeeping.note", {}, brand=brand, at=T - timedelta(minutes=1), key="one")
    out = StringIO()
    with wallclock.fixed(T):
        call_command("tick", stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1
    said = json.loads(lines[0])
    assert (said["event"], said["instant"], said["clocks"], said["fired"]) == (
        "tick", "2027-03-14T06:30:00Z", 1, 1)
    assert said["faults"] == [] and said["outbox"] == {"sent": 0, "retried": 0, "failed": 0}
    settings.LOG_FORMAT = "text"
    out = StringIO()
    with wallclock.fixed(T + timedelta(minutes=1)):
        call_command("tick", stdout=out)
    assert out.getvalue().startswith("tick 2027-03-14 06:31:00Z · 0 clock(s) · 0 fired")


def test_log_records_are_json_lines_with_their_traceback():
    try:
        raise ValueError("a bad row")
    except ValueError:
        record = logging.LogRecord("timekeeping.tick.loop", logging.ERROR, __file__, 1,
                                   "tick failed for %s", ("brd_1",), sys.exc_info())
    record.created = T.timestamp()
    said = json.loads(JsonFormatter().format(record))
    assert said["time"] == "2027-03-14T06:30:00.000Z" and said["level"] == "ERROR"
    assert said["message"] == "tick failed for brd_1" and said["logger"] == "timekeeping.tick.loop"
    assert "ValueError: a bad row" in said["exception"]


def test_an_unknown_log_format_is_refused_by_name():
    done = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"], capture_output=True,
        text=True, cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "true",
             "LOG_FORMAT": "xml"})
    assert done.returncode != 0
    assert "LOG_FORMAT: 'xml' is not 'text' or 'json'" in done.stderr
