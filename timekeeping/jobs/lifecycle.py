"""A job's own time, from its opening to its end (S6-S11, S16, S23).

When a job opens (after its clocks): its grant starts, the steps that come first open (a
party asked by a link, a task in the pool, a step's deadline), then the job's deadline, then
its quiet signals. When a step commits (a gate effect): the job counts it done, its ask is
answered, its task done, its step deadline met; a deadline written before a clock follows the
clock; the steps that come after it open; the signals re-arm. When the job ends, lapses or is
cancelled, everything of its own time closes, and its deadline is met if it ended delivered.

    end(job, by=…)              the brand ends a job (the API and the console)
    withdraw(member, subject, successor, by=…)  successor None: the seat of record lapses
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from timekeeping import clocks
from timekeeping.basics import compiled, shown
from timekeeping.clocks import lapses
from timekeeping.jobs import asks, common, deadlines, grants, signals, tasks
from timekeeping.models import Ask, Deadline, Grant, Job, Member, Occurrence, Subject, Task
from timekeeping.models.base import saved_later
from timekeeping.specs.current import services_of
from timekeeping.specs.services import ServiceSpec
from timekeeping.timers import in_progress, records
from timekeeping.timers.firing import Firing


def when_opened(job: Job, spec: ServiceSpec, now: datetime) -> None:
    grants.start(job, now)
    open_steps(job, now)
    if spec.work.within is not None:
        deadlines.start(job, within=spec.work.within, now=now, late_price=spec.work.late)
    signals.arm_all(job, now)


def open_steps(job: Job, now: datetime) -> list[str]:
    """Open the steps whose `after` steps are all done and that are not open or done yet:
    the party's asks first (the job then waits on them), then step deadlines and tasks."""
    work = common.work_of(job)
    done = set(job.steps_done)
    ready = [spec for spec in work.deliver.values()
             if spec.name not in done and set(spec.after) <= done
             and (spec.ask or spec.task or spec.within)]
    if ready:  # what has started is read only when a step could open (issue 32)
        started = _started(job)
        ready = [spec for spec in ready if spec.name not in started]
    for spec in ready:
        if spec.ask:
            asks.open_ask(job, now=now, step=spec.name, spec=spec)
    for spec in ready:
        if spec.within is not None:
            deadlines.start(job, step=spec.name, within=spec.within, now=now)
        if spec.task:
            tasks.open_task(job, spec, now)
    return [spec.name for spec in ready]


def _steps_started(brand: str, job: str):
    """The steps of the job with an ask, a task or a deadline of their own, as one query."""
    return _started_rows({"brand_id": brand, "job_id": job}, "step", flat=True)


def _started_rows(mine: dict, *fields: str, flat: bool = False):
    """`fields` of the asks for a step, the tasks and the step deadlines matching `mine`, as
    one query (a union of the three)."""
    return Ask.objects.filter(**mine, purpose=Ask.Purpose.STEP).order_by().values_list(
        *fields, flat=flat).union(
        Task.objects.filter(**mine).order_by().values_list(*fields, flat=flat),
        Deadline.objects.filter(**mine).exclude(step="").order_by().values_list(
            *fields, flat=flat))


def read_started(firing: Firing, jobs: list[str]) -> None:
    """The steps started of a batch's jobs (of its brand), read in one statement and kept as
    `_started` keeps each job's for the batch (a kind's `prepare`: a batch of `run` rungs read
    them a job at a time, issue 32). Kept current the same way, by `common.note_made`."""
    if not jobs:
        return
    started = {job: set() for job in jobs}
    for job, step in _started_rows({"brand_id": firing.brand.pk, "job_id__in": jobs},
                                   "job_id", "step"):
        started[job].add(step)
    for job, steps in started.items():
        firing.memo.setdefault((common.STEPS_STARTED, job), steps)


# Read after every step a job commits, compiled once and prepared: found by the job's index on
# each table, whatever the brand (issue 32, `bench/plans.py`).
STARTED = compiled.Read(_steps_started, prepared=True)


def _started(job: Job) -> set[str]:
    """The steps of the job with an ask, a task or a deadline of their own: none read for a
    job being ordered (what its order opened, `common.made_here`); else one statement, once
    per firing batch (a date's three `run` rungs fire a step and its `then` each: six reads
    of one job, issue 32). What a batch read stays true: the set only grows, and each ask,
    task and deadline made in the batch adds its step to it (`common.note_made`)."""
    if common.made_here(job, "ask") is not None:
        return {row.step for what in ("ask", "task", "deadline")
                for row in common.made_here(job, what) if common.starts_step(what, row)}
    return in_progress.read_once(job.brand_id, (common.STEPS_STARTED, job.pk),
                                 lambda: set(STARTED(brand=job.brand_id, job=job.pk)))


def effect_committed(job: Job, step: str, items: list[str], now: datetime, outcome) -> None:
    if step not in job.steps_done:
        job.steps_done = [*job.steps_done, step]
        # One UPDATE made once (`models.base`), parked to ride in a later statement of the
        # firing batch (a `run` rung's `then` moves a date: issue 32).
        saved_later(job, ["steps_done"])
    _settle_own_work(job, step, now)
    deadlines.follow(job)
    open_steps(job, now)
    signals.arm_all(job, now)


def _settle_own_work(job: Job, step: str, now: datetime) -> None:
    """The step's ask answered, its task done, its deadline met. Each is opened only when the
    step's `deliver` spec (of the job's pinned version) declares it (`open_steps`, and an
    automation's task), so a step that declares none has none to settle: nothing is read for
    it (issue 32)."""
    spec = common.work_of(job).deliver.get(step)
    if spec is None:
        return
    if spec.ask:
        for ask in Ask.objects.select_for_update(of=("self",)).filter(
                brand_id=job.brand_id, job=job, step=step, purpose=Ask.Purpose.STEP,
                state=Ask.State.OPEN):
            asks.settle(ask, now, by=f"{step} committed")
    if spec.task:
        tasks.done(job, step, now, by=f"{step} committed")
    if spec.within is not None:
        for deadline in Deadline.objects.select_for_update(of=("self",)).filter(
                brand_id=job.brand_id, job=job, step=step, state__in=deadlines.OPEN_STATES):
            deadlines.meet(deadline, now)


def when_ended(job: Job, state: str, now: datetime) -> None:
    why = f"job {job.pk} {state}"
    if state == Job.State.ENDED:
        for deadline in Deadline.objects.select_for_update(of=("self",)).filter(
                job=job, step="", state__in=deadlines.OPEN_STATES):
            deadlines.meet(deadline, now)
        _keep(job, now)
    deadlines.close(job, why)
    asks.close(job, why)
    tasks.close(job, why)
    signals.close(job, why)
    if common.work_of(job).grant is not None:  # only then was one given (`grants.start`)
        for grant in Grant.objects.filter(job=job):
            common.cancel(job, f"{grant.pk}:end", why=why)


def _keep(job: Job, now: datetime) -> None:
    """The facts the Service's subject `keeps`, from the job's input, onto the subject for its
    next period's job to read (the due rules read the subject's input under the job's)."""
    keeps = services_of(job.bundle)[job.service].keeps
    kept = {field: job.input[field] for field in keeps if field in job.input}
    if not kept:
        return
    subject = Subject.objects.select_for_update(of=("self",)).get(pk=job.subject_id)
    subject.input = {**subject.input, **kept}
    subject.save(update_fields=["input"])
    records.write("subject.kept", brand=job.brand, instant=now, test_clock=job.test_clock,
                  subject=subject.pk, job=job.pk, data={"fields": sorted(kept)})


def end(job: Job, *, by: str, facts: dict | None = None) -> None:
    """The brand ends a job: delivered. Its `lives_on: subject` dates stay on the subject;
    `facts` (what the work found: a carryforward) join its input first, so the subject keeps
    those its Service names in `subject.keeps`."""
    if facts:
        job.input = {**job.input, **facts}
        Job.objects.filter(pk=job.pk, state=Job.State.OPEN).update(input=job.input)
    clocks.end_job(job, state=Job.State.ENDED, by=by)


class WithdrawRefused(Exception):
    def __init__(self, code: str, field: str, message: str):
        super().__init__(message)
        self.code, self.field, self.message = code, field, message


def withdraw(member: Member, subject: Subject, successor: Member | None, *, by: str) -> dict:
    """A member withdraws from a subject naming a successor: the subject's open dates they
    answer for and the tasks they hold pass to the successor, each on the record. With no
    successor (None) the seat of record lapses, never silently (S23): the dates go back to
    the brand (no one assigned: its owner hears of them), the held tasks back to the pool, and
    `subject.of_record_lapsed` says so, heard by the brand's owner and the member."""
    if successor is not None:
        _check_successor(member, subject, successor)
    elif subject.brand_id != member.brand_id:
        raise WithdrawRefused("member_unknown", "subject",
                              f"{subject.pk} is not a subject of the member's brand")
    with transaction.atomic():
        dates = list(Occurrence.objects.select_for_update(of=("self",)).filter(
            clock__subject=subject, assignee=member,
            status__in=[Occurrence.Status.OPEN, Occurrence.Status.LAPSED]).select_related(
            "clock"))
        for occurrence in dates:
            clocks.assign(occurrence, successor, by=by)
        held = list(Task.objects.select_for_update(of=("self",)).filter(
            subject=subject, holder=member, state=Task.State.HELD).select_related("job"))
        for task in held:
            if successor is not None:
                tasks.hand_over(task, successor, by=by)
            else:
                tasks.release(task, member, why="its holder withdrew with no successor")
        now = common.now_for_subject(subject)
        moved = {"member": member.pk, "by": by, "dates": [each.label for each in dates],
                 "tasks": [task.pk for task in held]}
        records.write("member.withdrew", brand=subject.brand, instant=now,
                      test_clock=subject.test_clock, subject=subject.pk,
                      data={**moved, "successor": successor.pk if successor else None})
        if successor is None:
            _seat_lapsed(member, subject, moved, now)
    return {"dates": len(dates), "tasks": len(held)}


def _check_successor(member: Member, subject: Subject, successor: Member) -> None:
    if successor.brand_id != member.brand_id or subject.brand_id != member.brand_id:
        raise WithdrawRefused("member_unknown", "successor",
                              f"{successor.pk} is not a member of the subject's brand")
    if successor.pk == member.pk:
        raise WithdrawRefused("successor_self", "successor", "a successor is someone else")
    if successor.role == Member.Role.VIEWER:
        raise WithdrawRefused("role_viewer", "successor",
                              "a viewer reads; the successor must be a manager or the owner")


def _seat_lapsed(member: Member, subject: Subject, moved: dict, now: datetime) -> None:
    """The seat of record lapsed (S23): on the record with who hears, and emailed to them."""
    name = shown.person(member.user)
    dates, held = (_counted(len(moved[key]), word) for key, word in (("dates", "date"),
                                                                       ("tasks", "task")))
    lapses.note("subject.of_record_lapsed", subject=subject, at=now, member=member,
                key=f"{member.pk}:{now.isoformat()}",
                data={"member": member.pk, "member_name": name, "by": moved["by"],
                      "dates": len(moved["dates"]), "tasks": len(moved["tasks"])},
                said=(f"No one answers for {subject.name} now: {name} withdrew",
                      f"{name} withdrew from {subject.name} with no one named to take over. "
                      f"What they answered for ({dates} and {held}) is back with "
                      f"{subject.brand.name} until someone is assigned. See them here:"))


def _counted(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
