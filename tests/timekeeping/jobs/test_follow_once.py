"""A `run` rung's step and its `then` each commit, and each commit follows the job's deadlines
written before a date (`deadlines.follow`). A commit reads them again only when something of
the job other than a step's commit or a record that only tells was on the record since they
were last followed in the firing batch (issue 32): in April each extension moves its date, so
the deadline is read again and moves with it, but the next date's step reads nothing; in
October the extensions are there already, and the first step's read stands for the job."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.timekeeping.jobs.test_fire_queries import ORDERED, WHOLE, practice, tick_daily
from timekeeping.basics import wallclock
from timekeeping.models import Deadline, Record
from timekeeping.tick import phases

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

APRIL_12 = datetime(2027, 4, 12, 16, tzinfo=UTC)  # noon in New York: the run rungs file
OCTOBER_12 = datetime(2027, 10, 12, 16, tzinfo=UTC)  # and propose the extension again


def _tick(at: datetime) -> list[str]:
    """The tick at `at`: the statements reading the deadlines that follow a date."""
    with wallclock.fixed(at), CaptureQueriesContext(connection) as tick:
        phases.run_once(now=at, budget=WHOLE, sweep=False)
    return [query["sql"] for query in tick.captured_queries
            if query["sql"].startswith('SELECT "timekeeping_deadline"."id"')
            and 'AS "first_late"' in query["sql"]]


def _deadlines() -> dict:
    return {deadline.job_id: (deadline.ends, deadline.budget, deadline.state)
            for deadline in Deadline.objects.exclude(follows="")}


def _fired(at: datetime) -> list[str]:
    return [record.data["what"] for record in Record.objects.filter(
        kind="timer.fired", instant=at, data__key__endswith="run tentative 3d")]


def test_a_then_reads_the_following_deadlines_again_only_when_its_job_changed():
    practice(2)
    tick_daily(ORDERED.replace(hour=16), APRIL_12 - timedelta(days=1))
    before = _deadlines()
    read = _tick(APRIL_12)
    # Six rungs (two clients, three dates): each `then`'s commit reads the deadline, for the
    # extension moved the date since, and the deadline followed it; of the steps' commits
    # only each client's first reads it (its next dates' asks, fired between, only tell).
    assert len(_fired(APRIL_12)) == 6 and len(read) == 6 + 2
    moved = Record.objects.filter(kind="deadline.moved", instant=APRIL_12)
    assert moved.count() == 2  # each client's, once: to its earliest date's new day
    after_april = _deadlines()
    assert all(after_april[job][0] > before[job][0] for job in before)
    tick_daily(APRIL_12 + timedelta(days=1), OCTOBER_12 - timedelta(days=1))
    held = _deadlines()
    read = _tick(OCTOBER_12)
    # Four rungs (the federal and New York dates): the extension is there already and moves
    # nothing; only each client's first step's commit reads the deadline, and nothing of it
    # changes.
    fired = _fired(OCTOBER_12)
    assert len(fired) == 4 and all("extend committed" in what and "moved" not in what
                                   for what in fired)
    assert len(read) == 2
    assert _deadlines() == held
    assert not Record.objects.filter(kind__startswith="deadline.", instant=OCTOBER_12).exists()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="one statement on PostgreSQL")
def test_a_deadline_that_follows_moves_with_its_late_mark_in_one_statement():
    # Its UPDATE rides in the statement that arms its late mark again (`rearm_keys`; issue
    # 32: an update, a read and an insert before). The mark rang on the 11th (the deadline
    # was late); it stays rung, and one is armed for the deadline's new end.
    from timekeeping.models import Timer

    practice(2)
    tick_daily(ORDERED.replace(hour=16), APRIL_12 - timedelta(days=1))
    rang = dict(Timer.objects.filter(key__endswith=":late").values_list("key", "state"))
    assert set(rang.values()) == {Timer.State.FIRED} and len(rang) == 2
    with wallclock.fixed(APRIL_12), CaptureQueriesContext(connection) as tick:
        phases.run_once(now=APRIL_12, budget=WHOLE, sweep=False)
    sent = [query["sql"] for query in tick.captured_queries]
    assert not [sql for sql in sent if sql.startswith('UPDATE "timekeeping_deadline"')]
    carrying = [sql for sql in sent if sql.startswith(
        'WITH "riding" AS (UPDATE "timekeeping_deadline" SET "ends"')]
    assert len(carrying) == 2 and all(":late" in sql for sql in carrying)
    ends = _deadlines()
    for key in rang:
        states = dict(Timer.objects.filter(key=key).values_list("state", "owed"))
        assert set(states) == {Timer.State.FIRED, Timer.State.ARMED}
        deadline = Deadline.objects.get(pk=key.split(":")[0])
        assert states[Timer.State.ARMED] == ends[deadline.job_id][0] == deadline.ends
