"""A `run` rung's step and its `then` each commit, and each commit follows the job's deadlines
written before a date (`deadlines.follow`). A firing batch reads the deadlines that follow its
`run` rungs' jobs' dates once, for all of them, and follows them from the dates it keeps
(issue 32: a return's three rungs read them four times on 12 April, and its first step again
in October); a record of the job that could have changed them makes the next commit read them
again. A deadline followed so ends where a read of its dates says."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from tests.timekeeping.jobs.test_fire_queries import ORDERED, practice, sent_at, tick_daily
from timekeeping.clocks import kept
from timekeeping.jobs import deadlines
from timekeeping.models import Clock, Deadline, Job, Record, TickRun
from timekeeping.timers import in_progress
from timekeeping.timers.firing import Firing

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

APRIL_12 = datetime(2027, 4, 12, 16, tzinfo=UTC)  # noon in New York: the run rungs file
OCTOBER_12 = datetime(2027, 10, 12, 16, tzinfo=UTC)  # and propose the extension again


def _tick(at: datetime) -> list[str]:
    """The tick at `at`: the statements reading the deadlines that follow a date."""
    return [sql for sql in sent_at(at)
            if sql.startswith('SELECT "timekeeping_deadline"."id"') and 'AS "first_late"' in sql]


def _deadlines() -> dict:
    return {deadline.job_id: (deadline.ends, deadline.budget, deadline.state)
            for deadline in Deadline.objects.exclude(follows="")}


def _fired(at: datetime) -> list[str]:
    return [record.data["what"] for record in Record.objects.filter(
        kind="timer.fired", instant=at, data__key__endswith="run tentative 3d")]


def _follows_again_to_nothing() -> None:
    """Each job's deadlines, followed again outside a firing batch (read afresh, with the
    dates they follow), move nowhere: the batch left them where a read says."""
    for job in Job.objects.all():
        with transaction.atomic():
            assert deadlines.follow(job) == []


def test_a_batch_reads_the_deadlines_that_follow_its_jobs_dates_once():
    practice(2)
    tick_daily(ORDERED.replace(hour=16), APRIL_12 - timedelta(days=1))
    before = _deadlines()
    read = _tick(APRIL_12)
    # Six rungs (two clients, three dates), each a step and its `then` that commit: the
    # deadlines are read once, both jobs' together (eight reads before: each `then`'s, its
    # extension having moved a date, and each client's first step's).
    assert len(_fired(APRIL_12)) == 6 and len(read) == 1 and " IN (" in read[0]
    moved = Record.objects.filter(kind="deadline.moved", instant=APRIL_12)
    assert moved.count() == 2  # each client's, once: to its earliest date's new day
    after_april = _deadlines()
    assert all(after_april[job][0] > before[job][0] for job in before)
    # Late since the 11th, each is open again: its end is months away.
    assert {state for _, _, state in before.values()} == {Deadline.State.LATE}
    assert {state for _, _, state in after_april.values()} == {Deadline.State.OPEN}
    _follows_again_to_nothing()
    assert _deadlines() == after_april
    tick_daily(APRIL_12 + timedelta(days=1), OCTOBER_12 - timedelta(days=1))
    held = _deadlines()
    read = _tick(OCTOBER_12)
    # Four rungs (the federal and New York dates): the extension is there already and moves
    # nothing; the batch reads the deadlines once, and nothing of them changes.
    fired = _fired(OCTOBER_12)
    assert len(fired) == 4 and all("extend committed" in what and "moved" not in what
                                   for what in fired)
    assert len(read) == 1
    assert _deadlines() == held
    assert not Record.objects.filter(kind__startswith="deadline.", instant=OCTOBER_12).exists()


def _reads(job: Job) -> int:
    """`follow(job)` in the batch: how many times it read the job's deadlines."""
    with CaptureQueriesContext(connection) as followed:
        deadlines.follow(job)
    return sum('AS "first_late"' in query["sql"] for query in followed.captured_queries)


def test_a_batch_follows_its_deadlines_as_kept_only_through_what_leaves_them():
    practice(1)
    tick_daily(ORDERED.replace(hour=16), APRIL_12 - timedelta(days=1))
    job = Job.objects.get()
    deadline = Deadline.objects.exclude(follows="").get()
    batch = Firing(brand=job.brand, test_clock=None, instant=APRIL_12, run=TickRun(
        brand=job.brand), pass_no=1, first_seq=0)
    token = in_progress.enter(batch)
    try:
        with transaction.atomic():
            kept.read_movable(batch, [job.pk])
            deadlines.read_following(batch, [job.pk])
            assert _reads(job) == 0
            # A step's commit, a date's notice, a date's move, and the kept deadline's own
            # move leave them; each of these records forgets them, and they are read once
            # (the dates they follow, which most of these forget too, read again first).
            for stands in ("step.committed", "clock.notice", "clock.escalated"):
                batch.record(stands, job=job.pk)
            batch.record("deadline.moved", job=job.pk, data={"deadline": deadline.pk})
            assert _reads(job) == 0
            for forgets, data in (("deadline.late", {"deadline": deadline.pk}),
                                  ("deadline.started", {"deadline": "dln_another"}),
                                  ("deadline.moved", {"deadline": "dln_another"}),
                                  ("deadline.held", {}), ("job.paused", {})):
                batch.record(forgets, job=job.pk, data=data)
                kept.read_movable(batch, [job.pk])
                assert (forgets, _reads(job), _reads(job)) == (forgets, 1, 0)
            # The dates they follow forgotten (a date satisfied), they are read each time.
            batch.record("clock.satisfied", job=job.pk)
            assert (_reads(job), _reads(job)) == (1, 1)
            # Another job's records leave them.
            kept.read_movable(batch, [job.pk])
            batch.record("clock.satisfied", job="job_another")
            assert _reads(job) == 0
            # A deadline that follows a clock with a hard date open is read every time: the
            # batch keeps only the dates no hard clock keeps.
            Clock.objects.filter(job=job, name=deadline.follows).update(hard=True)
            deadlines.read_following(batch, [job.pk])
            assert (_reads(job), _reads(job)) == (1, 1)
            transaction.set_rollback(True)
    finally:
        in_progress.leave(token)


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
    sent = sent_at(APRIL_12)
    assert not [sql for sql in sent if sql.startswith('UPDATE "timekeeping_deadline"')]
    carrying = [sql for sql in sent if sql.startswith("WITH ") and re.search(
        r'"riding\d*" AS \(UPDATE "timekeeping_deadline" SET "ends"', sql)]
    assert len(carrying) == 2 and all(":late" in sql for sql in carrying)
    ends = _deadlines()
    for key in rang:
        states = dict(Timer.objects.filter(key=key).values_list("state", "owed"))
        assert set(states) == {Timer.State.FIRED, Timer.State.ARMED}
        deadline = Deadline.objects.get(pk=key.split(":")[0])
        assert states[Timer.State.ARMED] == ends[deadline.job_id][0] == deadline.ends


@pytest.mark.skipif(connection.vendor != "postgresql", reason="one statement on PostgreSQL")
def test_a_jobs_steps_ride_in_the_batchs_later_statements():
    # A job's UPDATE for each step it takes is parked for the batch (`riding.parked`) and
    # rides in a later statement that arms timers again (issue 32: each went alone, two a
    # return on 12 April); the last of the batch is sent as it ends.
    practice(2)
    tick_daily(ORDERED.replace(hour=16), APRIL_12 - timedelta(days=1))
    sent = sent_at(APRIL_12)
    alone = [sql for sql in sent if sql.startswith('UPDATE "timekeeping_job"')]
    riding = [sql for sql in sent if sql.startswith("WITH ") and
              'AS (UPDATE "timekeeping_job" SET "steps_done"' in sql]
    assert len(alone) <= 1 and len(alone) + len(riding) == 4  # two steps of two jobs
    assert {tuple(job.steps_done[-2:]) for job in Job.objects.all()} == {
        ("tentative", "extend")}
