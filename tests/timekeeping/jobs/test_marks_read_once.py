"""A batch's asks, held tasks and deadlines are read at once (issue 32): the rows its marks
name, locked and read in one statement with what their handlers read, each kept for its
handler until a record of its job is made. A row an earlier firing of the batch changed, on
its job's record, is read again and acted on as it now is. On a test clock in New York,
across the spring change of 2028 (`test_work.world`)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.timekeeping.jobs.test_work import START, world  # noqa: F401 - the fixture, shared
from timekeeping import clocks
from timekeeping.jobs import tasks
from timekeeping.models import Ask, Deadline, Member, Record, Subject, Task, Timer
from timekeeping.tick import test_clocks
from timekeeping.timers import arming, kinds, records
from timekeeping.timers.kinds import Place

# Each kind of row: the `deliver` that opens one for a job, its table, the mark owed first
# and the record that mark makes.
ROWS = {
    "ask": ({"organizer": {"ask": "owner", "expires": "2d"}}, Ask, "ask.reminded"),
    "task": ({"prepare": {"task": True, "hold": "2d"}}, Task, "task.warned"),
    "deadline": ({"prepare": {"within": "4d"}}, Deadline, "deadline.at_risk"),
}


def _closes_first(timer, firing) -> str:
    """A test kind in place 1: closes a row before the batch's asks, tasks and deadlines fire,
    as a handler does, on its job's record, and leaves the row's timers armed."""
    model = ROWS[timer.payload["what"]][1]
    row = model.objects.get(pk=timer.payload["pk"])
    model.objects.filter(pk=row.pk).update(state="closed")
    records.write("test.closed", brand=firing.brand, instant=firing.instant, job=row.job_id,
                  data={"row": row.pk})
    return "closed"


kinds.register("test_closes_first", place=Place.CYCLE, describe=lambda timer: timer.key)(
    _closes_first)


def _jobs(world, brand, actors, what: str) -> tuple:  # noqa: F811 - the fixture, passed in
    """Three jobs ordered at one instant, each with its row of `what` (a task held by a
    member): the test clock, and the rows in their jobs' order."""
    clock, first = world(deliver=ROWS[what][0])
    jobs = [first]
    for n in (2, 3):
        subject = Subject.objects.create(brand=brand, test_clock=clock, kind="client",
                                         key=str(n), name=f"Client {n}", zone="America/New_York",
                                         contact_email=f"c{n}@harbor.test")
        jobs.append(clocks.order(brand=brand, service="work", subject=subject,
                                 input={"due": "2028-06-30"}))
    model = ROWS[what][1]
    rows = [model.objects.get(job=job) for job in jobs]
    if what == "task":
        member = Member.objects.create(brand=brand, user=actors["staff"], role="manager")
        rows = [tasks.take(row, member) for row in rows]
    return clock, rows


def _reads(tick, model) -> list[str]:
    table = model._meta.db_table
    return [query["sql"] for query in tick.captured_queries
            if query["sql"].startswith(f'SELECT "{table}"."id"')]


@pytest.mark.parametrize("what", list(ROWS))
def test_a_batchs_rows_are_read_at_once_and_one_an_earlier_firing_changed_is_read_again(
        world, brand, actors, what):  # noqa: F811 - the fixture imported above
    clock, rows = _jobs(world, brand, actors, what)
    model, made = ROWS[what][1], ROWS[what][2]
    first = {"ask": lambda: rows[0].expires - timedelta(days=1),
             "task": lambda: START + timedelta(days=2) * 3 / 4,
             "deadline": lambda: rows[0].ends - timedelta(days=1)}[what]()
    changed = rows[1]
    arming.arm(brand=brand, kind="test_closes_first", key="closes-first", owed=first,
               test_clock=clock, payload={"what": what, "pk": changed.pk})
    with CaptureQueriesContext(connection) as tick:
        clock.refresh_from_db()
        test_clocks.advance(clock, to=first)
    told = Record.objects.filter(kind=made)
    assert sorted(record.data[what] for record in told) == sorted([rows[0].pk, rows[2].pk])
    assert all(record.instant == first for record in told)
    marks = Timer.objects.filter(kind=what, **{f"payload__{what}": changed.pk})
    fired = Record.objects.get(kind="timer.fired", timer__in=[mark.pk for mark in marks])
    assert fired.data["what"].endswith("nothing to do"), fired.data
    reads = _reads(tick, model)
    # The batch's three rows in one statement; the one closed first again, alone, by its
    # mark (the test kind reads it too); the other two not again.
    assert sum(" IN (" in sql for sql in reads) == 1, reads
    alone = [sql for sql in reads if " IN (" not in sql]
    assert all(changed.pk in sql for sql in alone) and len(alone) == 2, alone
