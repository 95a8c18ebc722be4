"""Tasks and holds (S10): a step that needs a person becomes a task in the brand's pool; a
member takes it for the step's `hold` (two days when the manifest does not say), is warned at
three quarters of the hold, may extend it once by another hold, and at its end the task opens
again for anyone. Place 4 of the tick. A task that opens in a standby season is offered to the
members on standby first (`timekeeping.jobs.standby`).

    open_task(job, spec, now)                 a task for the step, due when its deadline is
    take(task, member) / extend(task, member) / release(task, member)
    finish(task, member)                      the step, proposed through the gate
    close(job, why)                           the job ended: its tasks close

Every refusal is a TaskRefused with a stable code and a sentence; nothing changes.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from timekeeping.basics import compiled
from timekeeping.clocks import gate
from timekeeping.jobs import common, standby
from timekeeping.models import Brand, Deadline, Job, Member, Task
from timekeeping.specs.jobs import DeliverSpec, parse_span

KIND = "task"


class TaskRefused(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def member_of(brand_id: str, user) -> Member | None:
    """The person as a member of the brand: their membership, or, for the brand's owner who
    has none yet, one made now (an owner holds tasks as any member does)."""
    found = Member.objects.select_related("user").filter(brand_id=brand_id, user=user).first()
    if found is None and Brand.objects.filter(pk=brand_id, owner=user).exists():
        found, _ = Member.objects.get_or_create(brand_id=brand_id, user=user,
                                                defaults={"role": Member.Role.OWNER})
    return found


def open_task(job: Job, spec: DeliverSpec, now: datetime) -> Task:
    made = common.made_here(job, "deadline")
    deadline = (Deadline.objects.filter(job=job, step=spec.name).first() if made is None else
                next((each for each in made if each.step == spec.name), None))
    task = Task.objects.create(
        brand=job.brand, test_clock=job.test_clock, job=job, subject=job.subject,
        step=spec.name, title=spec.title, due=deadline.ends if deadline else None,
        hold=(spec.hold or parse_span("2d")).after(now, common.zone_of(job)) - now,
        opened=now)
    common.note_made(job, "task", task)
    common.record(job, "task.opened", {"task": task.pk, "step": spec.name, "due": task.due})
    standby.offer(task, now)
    return task


def _hold_end(task: Task, start: datetime) -> datetime:
    """A hold from `start`, as the step's manifest version writes it: days are calendar days
    at the same wall time in the subject's zone, so a two-day hold across a clock change
    still ends at the hour it began."""
    spec = common.work_of(task.job).deliver.get(task.step)
    if spec is None or spec.hold is None:
        return start + task.hold
    return spec.hold.after(start, common.zone_of(task.job))


def _keys(task: Task) -> tuple[str, str]:
    return f"{task.pk}:warn", f"{task.pk}:end"


def _arm(task: Task) -> None:
    warn = task.held_since + (task.held_until - task.held_since) * 3 / 4
    payload = {"task": task.pk, "hold": task.holds, "title": task.title}
    warn_key, end_key = _keys(task)
    common.rearm(task.job, KIND, warn_key, warn, {**payload, "mark": "warn"},
                 why="the hold changed")
    common.rearm(task.job, KIND, end_key, task.held_until, {**payload, "mark": "end"},
                 why="the hold changed")


def _locked(task: Task) -> Task:
    return Task.objects.select_for_update(of=("self",)).select_related(
        "job__brand__owner", "job__subject", "holder__user").get(pk=task.pk)


def _member_of(task: Task, member: Member) -> None:
    if member.brand_id != task.brand_id:
        raise TaskRefused("member_unknown", f"{member.pk} is not a member of the task's brand")
    if member.role == Member.Role.VIEWER:
        raise TaskRefused("role_viewer", "a viewer reads; a manager or the owner takes tasks")


def take(task: Task, member: Member) -> Task:
    """The member holds the task for its hold's length."""
    _member_of(task, member)
    with transaction.atomic():
        task = _locked(task)
        if task.state == Task.State.HELD and task.holder_id != member.pk:
            raise TaskRefused("task_held", f"{task.holder.user.get_username()} holds it until "
                                           f"{common.at(task.held_until)}")
        if task.state not in (Task.State.OPEN, Task.State.HELD):
            raise TaskRefused("task_closed", f"the task is {task.get_state_display()}")
        if task.state == Task.State.HELD:
            return task  # taken already by this member: taking it again changes nothing
        now = common.now_of(task.job)
        if offered := standby.may_take(task, member, now):
            raise TaskRefused("offered_to_standby", offered)
        task.state, task.holder, task.held_since = Task.State.HELD, member, now
        task.held_until, task.holds, task.extended = _hold_end(task, now), task.holds + 1, False
        task.save()
        _arm(task)
        common.record(task.job, "task.taken", {"task": task.pk, "by": member.pk,
                                               "until": task.held_until})
        return task


def _holder(task: Task, member: Member) -> None:
    if task.state != Task.State.HELD or task.holder_id != member.pk:
        raise TaskRefused("task_not_held", "only the member who holds the task can do this")


def extend(task: Task, member: Member) -> Task:
    """Extend the hold once, by another hold from its end."""
    _member_of(task, member)
    with transaction.atomic():
        task = _locked(task)
        _holder(task, member)
        if task.extended:
            raise TaskRefused("hold_extended_once", "a hold can be extended once; this one "
                                                    "was already extended")
        task.held_until, task.extended = _hold_end(task, task.held_until), True
        task.save(update_fields=["held_until", "extended"])
        _arm(task)
        common.record(task.job, "task.extended", {"task": task.pk, "by": member.pk,
                                                  "until": task.held_until})
        return task


def release(task: Task, member: Member, *, why: str = "released") -> Task:
    _member_of(task, member)
    with transaction.atomic():
        task = _locked(task)
        _holder(task, member)
        _reopen(task, why=f"{why} by {member.pk}")
        return task


def _reopen(task: Task, *, why: str) -> None:
    task.state, task.holder, task.held_since, task.held_until = Task.State.OPEN, None, None, None
    task.save(update_fields=["state", "holder", "held_since", "held_until"])
    common.cancel(task.job, *_keys(task), why=why)
    common.record(task.job, "task.opened_again", {"task": task.pk, "why": why})


def finish(task: Task, member: Member) -> gate.Outcome:
    """The member did the work: the task's step goes through the gate. The job is locked
    before the task, in the order the gate's own effects lock them."""
    _member_of(task, member)
    with transaction.atomic():
        Job.objects.select_for_update(of=("self",)).filter(pk=task.job_id).first()
        task = _locked(task)
        _holder(task, member)
        outcome = gate.propose(job=task.job, step=task.step,
                               by=f"member {member.pk} ({member.user.get_username()})")
    if not outcome.committed:
        raise TaskRefused(outcome.code, outcome.reason)
    return outcome


@transaction.atomic
def done(job: Job, step: str, now: datetime, by: str) -> None:
    """The step committed (by its holder, or any other way): its task is done."""
    for task in Task.objects.select_for_update(of=("self",)).filter(
            brand_id=job.brand_id, job=job, step=step,
            state__in=[Task.State.OPEN, Task.State.HELD]):
        task.state, task.done = Task.State.DONE, now
        task.save(update_fields=["state", "done"])
        common.cancel(job, *_keys(task), why=f"done: {step} committed")
        common.record(job, "task.done", {"task": task.pk, "by": by})


# A job's tasks not done: what its end closes, compiled once and prepared (by the job's index).
OPEN_OF_JOB = compiled.Read(lambda job: Task.objects.filter(
    job_id=job, state__in=[Task.State.OPEN, Task.State.HELD]), model=Task, prepared=True)


def close(job: Job, why: str) -> None:
    for task in OPEN_OF_JOB(job=job.pk):
        task.state = Task.State.CLOSED
        task.save(update_fields=["state"])
        common.cancel(job, *_keys(task), why=why)


def hand_over(task: Task, successor: Member, *, by: str) -> None:
    """A withdrawing member's hold passes to their successor, for what is left of it."""
    task.holder = successor
    task.save(update_fields=["holder"])
    common.record(task.job, "task.handed_over", {"task": task.pk, "to": successor.pk,
                                                 "by": by})


# -- firing -----------------------------------------------------------------------------------

# A held task's firing reads its holder too.
FIRED_ALSO = ("holder__user",)
FIRED = common.fired_row(Task, *FIRED_ALSO)


def fire(task_id: str, mark: str, hold: int, instant: datetime, *,
         read: Task | None = None) -> str:
    """A held task's mark fires: `read`, the task as its batch read it (`common.keep_fired`),
    else read now."""
    # Inside the firing's transaction, as an ask's and a deadline's marks: no savepoint.
    with transaction.atomic(savepoint=False):
        task = read or FIRED.get(pk=task_id)
        if task.state != Task.State.HELD or task.holds != hold:
            return f"{task.title} · hold {hold} is over: nothing to do"
        holder = task.holder.user if task.holder else None
        to = holder.email if holder else ""
        if mark == "warn":
            common.record(task.job, "task.warned", {"task": task.pk, "until": task.held_until,
                                                    "holder": task.holder_id})
            ends = common.said_at(task.job, task.held_until)
            common.tell(task.job, to, f"Your hold on {task.title} ends {ends}",
                        f"Your hold on {task.title} for {task.job.subject.name} ends {ends}."
                        + ("" if task.extended else " You may extend it once, on the Your "
                                                    "work page:"),
                        key=f"{task.pk}:{hold}:warn", link=_delivery_link())
            return f"{task.title} · hold warned: it ends {common.at(task.held_until)}"
        _reopen(task, why="its hold ended")
        common.tell(task.job, to, f"Your hold on {task.title} ended",
                    f"Your hold on {task.title} for {task.job.subject.name} ended "
                    f"{common.said_at(task.job, instant)}; the task is open again for "
                    "anyone. Your work:", key=f"{task.pk}:{hold}:end",
                    link=_delivery_link())
        return f"{task.title} · hold ended: open again"


def _delivery_link() -> str:
    from django.conf import settings

    return f"{settings.SITE_URL}/delivery/"
