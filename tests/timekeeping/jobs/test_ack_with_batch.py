"""An `ack daily` rung arms the next day's ask with its firing batch (issue 32): written
together when the batch is written, or before a handler that could read or end them runs,
so to every other handler they are as if armed at once."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.timekeeping.jobs.test_fire_queries import (
    ORDERED,
    WHOLE,
    practice,
    sent_at,
    tick_daily,
)
from timekeeping.basics import wallclock
from timekeeping.models import Record, Subject, TickRun, Timer
from timekeeping.tick import phases
from timekeeping.timers import arming, kinds
from timekeeping.timers.kinds import Place

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

APRIL_10 = datetime(2027, 4, 10, 16, tzinfo=UTC)  # noon in New York: the acks begin (15 April)
APRIL_12 = APRIL_10 + timedelta(days=2)  # and the run rungs file the extensions


def _timer_inserts(captured) -> list[int]:
    return [n for n, query in enumerate(captured)
            if query["sql"].startswith("INSERT")  # … OR IGNORE on SQLite
            and query["sql"].split("(", 1)[0].endswith('INTO "timekeeping_timer" ')]


def acks_for(day: str) -> list[Timer]:
    return list(Timer.objects.filter(key__endswith=f":ack:{day}").order_by("key"))


def test_a_batch_writes_the_next_days_asks_in_one_insert_each_armed_by_its_rung():
    practice(4)
    tick_daily(ORDERED.replace(hour=16), APRIL_10 - timedelta(days=1))
    with wallclock.fixed(APRIL_10), CaptureQueriesContext(connection) as tick:
        phases.run_once(now=APRIL_10, budget=WHOLE, sweep=False)
    armed = acks_for("2027-04-11")
    assert len(armed) == 12  # four clients, three jurisdictions
    assert {timer.state for timer in armed} == {Timer.State.ARMED}
    rungs = {timer.key: timer for timer in Timer.objects.filter(key__endswith=":ack daily 5d")}
    for timer in armed:
        rung = rungs[timer.key.replace(":ack:2027-04-11", ":ack daily 5d")]
        assert (timer.armed_by, timer.payload["occurrence"]) == (
            rung.pk, rung.payload["occurrence"])
        assert timer.owed == datetime(2027, 4, 11, 13, tzinfo=UTC)  # the brand's ring hour
    assert len(_timer_inserts(tick.captured_queries)) == 1
    run = TickRun.objects.get(instant=APRIL_10, test_clock=None)
    assert (run.fired, run.armed) == (12, 12)


def test_a_step_that_moves_the_date_later_in_the_batch_supersedes_the_ask_armed_before_it():
    # On 12 April each date's ask fires first (its key sorts before its run rung's), then its
    # run rung files the extension and moves the date to October: the ask armed for the 13th
    # was written before the rung ran, and the move superseded it.
    practice(2)
    tick_daily(ORDERED.replace(hour=16), APRIL_12 - timedelta(days=1))
    with wallclock.fixed(APRIL_12):
        phases.run_once(now=APRIL_12, budget=WHOLE, sweep=False)
    superseded = acks_for("2027-04-13")
    assert len(superseded) == 6
    assert {timer.state for timer in superseded} == {Timer.State.SUPERSEDED}
    assert not Timer.objects.filter(key__contains=":ack:", state=Timer.State.ARMED).exists()
    fired = Record.objects.filter(kind="timer.fired", instant=APRIL_12).order_by("data__seq")
    keys = [record.data["key"].split(":", 1)[1] for record in fired
            if record.data["kind"] == "clock"]
    assert keys.count("ack:2027-04-12") == keys.count("run tentative 3d") == 6


@pytest.mark.skipif(connection.vendor != "postgresql", reason="one statement on PostgreSQL")
def test_the_ask_armed_before_a_move_rides_in_the_statement_that_arms_the_date_again():
    # Each ask armed for the 13th was written in the statement of the move that supersedes it
    # (issue 32: alone before it, before), with the date's own UPDATE: already superseded,
    # as the move's update would have left it, by the day's ask that armed it, and why.
    practice(2)
    tick_daily(ORDERED.replace(hour=16), APRIL_12 - timedelta(days=1))
    sent = sent_at(APRIL_12)
    carrying = [sql for sql in sent if ":ack:2027-04-13" in sql]
    assert len(carrying) == 6
    # The date's UPDATE rides there, beside any other held (a job's for its step, parked
    # for the batch: `riding.parked`).
    assert all(sql.startswith('WITH "riding" AS (UPDATE ')
               and re.search(r'"riding\d*" AS \(UPDATE "timekeeping_occurrence"', sql)
               and '"also" AS (INSERT INTO "timekeeping_timer"' in sql for sql in carrying)
    assert not [sql for sql in sent if sql.startswith('UPDATE "timekeeping_occurrence" SET '
                                                      '"due"')]
    today = {timer.key: timer for timer in acks_for("2027-04-12")}
    asks = acks_for("2027-04-13")
    for ask in asks:
        date = ask.key.split(":")[0]
        clock, item = date.split("#")
        moved_to = Record.objects.get(kind="clock.moved", instant=APRIL_12,
                                      data__clock=clock, data__item=item).data["to"]
        assert (ask.state, ask.armed_by) == (Timer.State.SUPERSEDED,
                                             today[f"{date}:ack:2027-04-12"].pk)
        assert ask.ended_by == f"moved to {moved_to} by extend"
    assert {ask.ended_by for ask in asks} == {"moved to 2027-10-15 by extend",
                                              "moved to 2027-11-15 by extend"}


def _fails(timer: Timer, firing) -> str:
    raise RuntimeError("the handler failed")


kinds.register("test_fails_after_clocks", place=Place.WINDOW, describe=lambda t: t.key)(_fails)


def test_a_batch_redone_after_a_failure_arms_each_next_day_once():
    # A handler later in the batch fails: the batch is undone with what it armed, and redone
    # a timer at a time; each ask of the next day is armed once, by its rung.
    brand = practice(1)
    tick_daily(ORDERED.replace(hour=16), APRIL_10 - timedelta(days=1))
    arming.arm(brand=brand, kind="test_fails_after_clocks", key="fails", owed=APRIL_10)
    with wallclock.fixed(APRIL_10):
        phases.run_once(now=APRIL_10, budget=WHOLE, sweep=False)
    armed = acks_for("2027-04-11")
    assert len(armed) == 3
    assert {timer.state for timer in armed} == {Timer.State.ARMED}
    failed = Timer.objects.get(key="fails")
    assert (failed.state, failed.attempts) == (Timer.State.ARMED, 1)
    run = TickRun.objects.get(instant=APRIL_10, test_clock=None)
    assert (run.fired, run.failed, run.armed) == (3, 1, 3)


OCTOBER_12 = datetime(2027, 10, 12, 16, tzinfo=UTC)  # noon: the extended dates' run rungs


def test_a_step_that_moves_no_date_leaves_the_asks_armed_before_it_to_the_batchs_write():
    # On 12 October each extended date's ask fires, then its run rung proposes the extension
    # again, which moves nothing (the date is there already) and sends nothing to the timers'
    # table: the asks armed for the 13th wait for the batch's one write, as they would had no
    # run rung fired between them.
    practice(2)
    tick_daily(ORDERED.replace(hour=16), OCTOBER_12 - timedelta(days=1))
    with wallclock.fixed(OCTOBER_12), CaptureQueriesContext(connection) as tick:
        phases.run_once(now=OCTOBER_12, budget=WHOLE, sweep=False)
    fired = [record.data["what"] for record in Record.objects.filter(
        kind="timer.fired", instant=OCTOBER_12, data__key__endswith="run tentative 3d")]
    assert len(fired) == 4  # two clients, their federal and New York dates
    assert all("extend committed" in what and "moved" not in what for what in fired)
    armed = acks_for("2027-10-13")
    assert len(armed) == 4 and {timer.state for timer in armed} == {Timer.State.ARMED}
    assert len(_timer_inserts(tick.captured_queries)) == 1


def _reads_subjects(timer: Timer, firing) -> str:
    return f"{Subject.objects.filter(brand=firing.brand).count()} subjects"


def _reads_asks(timer: Timer, firing) -> str:
    before = Subject.objects.filter(brand=firing.brand).count()
    return f"{before} subjects, {len(acks_for('2027-04-11'))} asks for the 11th"


# Test kinds firing after the batch's rungs (a later place), neither keeping to an owner of its
# own: one reads only another table, one reads another table and then the timers'.
kinds.register("test_reads_subjects", place=Place.WINDOW, describe=lambda t: t.key)(
    _reads_subjects)
kinds.register("test_reads_asks", place=Place.WINDOW, describe=lambda t: t.key)(_reads_asks)


def test_the_asks_armed_before_a_handler_are_written_before_its_first_read_of_the_timers():
    brand = practice(1)
    tick_daily(ORDERED.replace(hour=16), APRIL_10 - timedelta(days=1))
    for key in ("a", "b"):
        arming.arm(brand=brand, kind="test_reads_subjects", key=f"{key}:subjects",
                   owed=APRIL_10)
    arming.arm(brand=brand, kind="test_reads_asks", key="c:asks", owed=APRIL_10)
    with wallclock.fixed(APRIL_10), CaptureQueriesContext(connection) as tick:
        phases.run_once(now=APRIL_10, budget=WHOLE, sweep=False)
    said = dict(Record.objects.filter(kind="timer.fired", data__kind__startswith="test_")
                .values_list("data__key", "data__what"))
    # The last handler finds the three asks the rungs armed, written just before it read them:
    # after its read of the subjects and the two handlers' before it, none of which touched
    # the timers' table.
    assert said == {"a:subjects": "1 subjects", "b:subjects": "1 subjects",
                    "c:asks": "1 subjects, 3 asks for the 11th"}
    sent = [query["sql"] for query in tick.captured_queries]
    counts = [n for n, sql in enumerate(sent) if 'FROM "timekeeping_subject"' in sql]
    assert len(counts) == 3
    # The write: on PostgreSQL one insert that looks up each key; elsewhere a read first.
    written = counts[-1] + (1 if connection.vendor == "postgresql" else 2)
    assert _timer_inserts(tick.captured_queries) == [written]
    assert sent[written + 1].startswith('SELECT "timekeeping_timer"')
