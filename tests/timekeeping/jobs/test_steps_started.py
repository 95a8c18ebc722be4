"""A job's steps started (those with an ask, a task or a deadline of their own) are read once
per firing batch and kept current by what the batch opens (issue 32): two `run` rungs of one
job owed at one instant, each committing a step whose work then opens, open that work once,
with one read of what has started. On a test clock in New York, across the spring change."""

from datetime import UTC, datetime

import pytest
from django.db import connection

from tests.timekeeping.jobs.test_work import world  # noqa: F401 - the fixture, shared
from timekeeping.models import Deadline, Job, Record, Task, Timer
from timekeeping.tick import test_clocks
from timekeeping.timers.firing import Firing

RINGS = datetime(2028, 6, 27, 13, tzinfo=UTC)  # 3 days before 30 June, 09:00 EDT
RUN = ["run submit 3d"]
# Two clocks of one job, each with a `run` rung owed at one instant: fired in one batch.
SERVICE = {"steps": {"submit": {}},
           "clocks": {"file": {"title": "file it", "due": {"input": "due"}, "rungs": RUN},
                      "report": {"title": "report it", "due": {"input": "due"}, "rungs": RUN}}}


def started_reads(monkeypatch) -> tuple:
    """How many reads of a job's steps started each firing batch sends (the statement that
    unions its asks, tasks and deadlines by step)."""
    counts, flush = [0], Firing.flush

    def seen(execute, sql, *rest):
        if "UNION" in sql and '"timekeeping_task"."step"' in sql:
            counts[-1] += 1
        return execute(sql, *rest)

    def flushed(batch):
        counts.append(0)
        return flush(batch)

    monkeypatch.setattr(Firing, "flush", flushed)
    return counts, connection.execute_wrapper(seen)


@pytest.mark.parametrize("opens", ["task", "deadline"])
def test_two_run_rungs_of_a_job_in_one_batch_open_the_work_their_step_starts_once(
        world, monkeypatch, opens):  # noqa: F811 - the fixture imported above
    deliver = {"review": {"title": "review it", "after": ["submit"], "task": True}}
    if opens == "deadline":
        deliver = {"review": {"title": "review it", "after": ["submit"], "within": "5d"}}
    clock, job = world(**SERVICE, deliver=deliver)
    rungs = Timer.objects.filter(owner_type="occurrence", key__contains="run submit")
    assert sorted(timer.owed for timer in rungs) == [RINGS, RINGS]
    counts, wrapper = started_reads(monkeypatch)
    with wrapper:
        test_clocks.advance(clock, to=RINGS)
    assert Job.objects.get(pk=job.pk).steps_done == ["submit"]
    assert [r.data["step"] for r in Record.objects.filter(job=job.pk, kind="step.committed")
            ] == ["submit", "submit"]
    if opens == "task":
        assert list(Task.objects.filter(job=job).values_list("step", flat=True)) == ["review"]
    else:
        assert list(Deadline.objects.filter(job=job).values_list("step", flat=True)) == ["review"]
    # One read for the batch that fired both rungs: the second step's commit found `review`
    # started by the first's (kept by `common.note_made`), not read again nor opened twice.
    assert max(counts) == 1, counts
