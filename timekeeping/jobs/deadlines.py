"""Deadlines on the work (S6, S7): the job's (`price.within`) and a step's
(`deliver.<step>.within`). Place 5 of the tick.

    start(job, step="", within=…, late_price="", now=…)   the deadline, its timers armed
    hold_all(job, ask, now) / release_all(job, now)       the job waits on a party, or not
    follow(job)                                           re-read the clocks it follows
    read_following(batch, jobs)                           a firing batch's, read at once
    meet(deadline, now) / close(job, why)                 the work is done, or the job ended

Work time counts only while the work is the brand's. A deadline's two marks are work time
from its start: at risk at three quarters, late at the whole. While the job waits on a party
(an open ask) the deadline is held: the work time used so far is kept and its timers are
held; when the party answers it runs again and its timers are re-armed for the work time
left. Written before a clock ("5d before file"), it ends where the clock's earliest open date
says, and follows it when it moves; its late mark is the world's date and is never held.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Exists, OuterRef, Subquery

from timekeeping.basics import compiled
from timekeeping.basics.spans import span_text
from timekeeping.clocks import kept
from timekeeping.jobs import common
from timekeeping.models import Ask, Deadline, Job, Occurrence, Task
from timekeeping.models.base import saved_riding
from timekeeping.specs.jobs import Within, parse_within
from timekeeping.timers import arming, firing, gathered, in_progress, made

KIND = "deadline"
OPEN_STATES = (Deadline.State.OPEN, Deadline.State.AT_RISK, Deadline.State.LATE)


def _key(deadline: Deadline, mark: str) -> str:
    return f"{deadline.pk}:{mark}"


def _risk_work(deadline: Deadline) -> timedelta:
    return deadline.budget * 3 / 4


def work_left(deadline: Deadline, now: datetime, *, mark: str = "risk") -> timedelta:
    """Work time left until the mark (at risk, or late), counted to `now`."""
    used = deadline.used + (now - deadline.running_since if deadline.running_since else
                            timedelta(0))
    target = _risk_work(deadline) if mark == "risk" else deadline.budget
    return max(target - used, timedelta(0))


def _clock_end(job: Job, clock_name: str, within: Within) -> datetime | None:
    """The end of a deadline written before a clock: the span before the first instant its
    earliest open date is late."""
    first = _first_late(Occurrence.objects.filter(brand_id=job.brand_id, clock__job=job,
                                                  clock__name=clock_name)).first()
    return _before(job, first, within)


def _first_late(dates):
    """The first instant the earliest open of `dates` is late: what a deadline before their
    clock ends by (`_before`)."""
    return dates.filter(status=Occurrence.Status.OPEN).order_by("late_from").values_list(
        "late_from", flat=True)


def _opened_end(job: Job, clock_name: str, within: Within) -> datetime | None:
    """`_clock_end` for a job being ordered: its dates as the order opened them, in hand
    (`gathered.dates`: nothing between opening them and its deadline changes them), else
    read (issue 32: one statement of an order)."""
    gathering = gathered.current()
    opened = gathering.dates.get(job.pk) if gathering is not None else None
    if opened is None:
        return _clock_end(job, clock_name, within)
    dates = [date for date in opened.get(clock_name, []) if date.status == Occurrence.Status.OPEN]
    return _before(job, min((date.late_from for date in dates), default=None), within)


def _before(job: Job, first_late: datetime | None, within: Within) -> datetime | None:
    if first_late is None:
        return None
    return within.span.before(first_late, common.zone_of(job))


def start(job: Job, *, within: Within, now: datetime, step: str = "",
          late_price: str = "") -> Deadline | None:
    """Open a deadline and arm its marks; held at once if the job already waits on a party."""
    if within.clock:
        ends = _opened_end(job, within.clock, within)
        if ends is None:
            common.record(job, "deadline.no_date", {"step": step, "rule": within.text,
                                                    "why": f"{within.clock} has no open date"})
            return None
    else:
        ends = within.span.after(now, common.zone_of(job))
    waiting = _waiting_on(job)
    deadline = Deadline(
        brand=job.brand, test_clock=job.test_clock, job=job, step=step, rule=within.text,
        follows=within.clock, started=now, ends=ends, budget=max(ends - now, timedelta(0)),
        running_since=now, late_price=late_price)
    why = ""
    if waiting is not None:  # written held: one statement, not an insert and an update
        why = _held_why(deadline, waiting, now)
        _paused(deadline, waiting, now)
    made.insert([deadline])  # with its firing batch's, when an order inside one starts it
    common.note_made(job, "deadline", deadline)
    common.record(job, "deadline.started", {"deadline": deadline.pk, "step": step,
                                            "rule": within.text, "ends": ends})
    if waiting is None:
        _arm_late(deadline)
        _arm_work(deadline, "risk", now)
        return deadline
    _task_due(deadline)
    if deadline.follows:
        _arm_late(deadline)
    else:
        common.arm(job, KIND, _key(deadline, "late"), now + deadline.budget,
                   {"deadline": deadline.pk, "mark": "late"},
                   held_by=why.replace("at risk", "late", 1))
    common.arm(job, KIND, _key(deadline, "risk"), now + _risk_work(deadline),
               {"deadline": deadline.pk, "mark": "risk"}, held_by=why)
    return deadline


def _waiting_on(job: Job) -> Ask | None:
    """The open ask the job has waited on longest, if any (a job being ordered: of those its
    order opened, `common.made_here`)."""
    made = common.made_here(job, "ask")
    if made is None:
        return Ask.objects.filter(brand_id=job.brand_id, job=job,
                                  state=Ask.State.OPEN).order_by("opened").first()
    return min((ask for ask in made if ask.state == Ask.State.OPEN),
               key=lambda ask: ask.opened, default=None)


def _arm_late(deadline: Deadline) -> None:
    """The late mark: the world's date when the deadline follows a clock, else work time."""
    job = deadline.job
    if deadline.follows:  # one statement on PostgreSQL, not a read and a write (issue 32)
        common.rearm_keys(job, KIND, {_key(deadline, "late"): (
            deadline.ends, {"deadline": deadline.pk, "mark": "late"})}, why="the clock moved")
    elif deadline.running_since is not None:
        _arm_work(deadline, "late", deadline.running_since)


def _arm_work(deadline: Deadline, mark: str, now: datetime) -> None:
    owed = now + work_left(deadline, now, mark=mark)
    live = common.live(deadline.job, _key(deadline, mark))
    if live is not None and live.state == live.State.ARMED and live.owed == owed:
        return
    common.rearm(deadline.job, KIND, _key(deadline, mark), owed,
                 {"deadline": deadline.pk, "mark": mark}, why="re-armed for the work time left")


def _held_why(deadline: Deadline, ask: Ask, now: datetime) -> str:
    return (f"at risk · {span_text(work_left(deadline, now))} of work left · held by {ask.pk} "
            f"while the {ask.step or 'party'} waits")


def _pause(deadline: Deadline, ask: Ask, now: datetime) -> None:
    _paused(deadline, ask, now)
    deadline.save(update_fields=["used", "running_since", "held_by", "ends"])
    _task_due(deadline)


def _paused(deadline: Deadline, ask: Ask, now: datetime) -> None:
    """The deadline held by `ask` from `now`: its work time so far kept, its end projected."""
    if deadline.running_since is not None:
        deadline.used += now - deadline.running_since
    deadline.running_since, deadline.held_by = None, ask.pk
    if not deadline.follows:
        deadline.ends = now + work_left(deadline, now, mark="late")  # projected, held


def _task_due(deadline: Deadline) -> None:
    """A step's task is due when its step's deadline ends, as that end moves."""
    if deadline.step:
        Task.objects.filter(job_id=deadline.job_id, step=deadline.step,
                            state__in=[Task.State.OPEN, Task.State.HELD]).update(
            due=deadline.ends)


@transaction.atomic(savepoint=False)  # whole with the ask that opens (`asks.open_ask`)
def hold_all(job: Job, ask: Ask, now: datetime) -> list[Deadline]:
    """The job now waits on a party: every running deadline of the job is held."""
    held = []
    for deadline in _running(job):
        why = _held_why(deadline, ask, now)
        _pause(deadline, ask, now)
        marks = ["risk"] if deadline.follows else ["risk", "late"]
        for mark in marks:
            timer = common.live(job, _key(deadline, mark))
            if timer is not None and timer.state == timer.State.ARMED:
                arming.hold(timer.id, by=why if mark == "risk" else
                            why.replace("at risk", "late", 1))
        common.record(job, "deadline.held", {"deadline": deadline.pk, "by": ask.pk,
                                             "work_left": span_text(work_left(deadline, now))})
        held.append(deadline)
    return held


def _running(job: Job) -> list[Deadline]:
    """The job's running deadlines, locked (a job being ordered: of those its order started,
    `common.made_here`, written in this transaction)."""
    made = common.made_here(job, "deadline")
    if made is None:
        return list(Deadline.objects.select_for_update(of=("self",)).filter(
            brand_id=job.brand_id, job=job, state__in=OPEN_STATES,
            running_since__isnull=False))
    return [deadline for deadline in made
            if deadline.state in OPEN_STATES and deadline.running_since is not None]


@transaction.atomic
def release_all(job: Job, now: datetime) -> list[Deadline]:
    """No party is waited on any more: every held deadline runs again, its timers re-armed
    for the work time it had left."""
    if Ask.objects.filter(job=job, state=Ask.State.OPEN).exists():
        return []
    released = []
    for deadline in Deadline.objects.select_for_update(of=("self",)).filter(
            job=job, state__in=OPEN_STATES, running_since__isnull=True):
        deadline.running_since, deadline.held_by = now, ""
        if not deadline.follows:
            deadline.ends = now + work_left(deadline, now, mark="late")
        deadline.save(update_fields=["running_since", "held_by", "ends"])
        _task_due(deadline)
        if deadline.state == Deadline.State.OPEN:
            _arm_work(deadline, "risk", now)
        if not deadline.follows and deadline.state != Deadline.State.LATE:
            _arm_work(deadline, "late", now)
        common.record(job, "deadline.released", {
            "deadline": deadline.pk, "work_left": span_text(work_left(deadline, now)),
            "ends": deadline.ends})
        released.append(deadline)
    return released


def _following(deadlines, brand: str):
    """Of `deadlines`, those open and written before a clock, locked, in the order of their
    ids, each with the first instant its clock's earliest open date is late (`first_late`)
    and whether an open date of that clock is a hard one (`hard`)."""
    dates = Occurrence.objects.filter(brand_id=brand, clock__job_id=OuterRef("job_id"),
                                      clock__name=OuterRef("follows"))
    return deadlines.select_for_update(of=("self",)).filter(
        brand_id=brand, state__in=OPEN_STATES).exclude(follows="").annotate(
        first_late=Subquery(_first_late(dates)[:1]),
        hard=Exists(dates.filter(status=Occurrence.Status.OPEN, clock__hard=True))).order_by(
        "job_id", "pk")


# A job's deadlines written before a clock (`_following`): one statement, compiled once
# (issue 32: read at every step) and prepared, found by the job's index whatever the brand
# (`bench/plans.py`); and a firing batch's jobs', read at once (`read_following`).
FOLLOWING = compiled.Read(lambda brand, job: _following(
    Deadline.objects.filter(job_id=job), brand), model=Deadline, prepared=True)
FOLLOWING_OF_JOBS = compiled.Read(lambda brand, jobs: _following(
    Deadline.objects.filter(job_id__in=jobs), brand), model=Deadline)


@transaction.atomic(savepoint=False)
def follow(job: Job) -> list[str]:
    """Deadlines written before a clock follow its date when it moves (an extension, a
    postponement, a new roll): their end and their work time change with it. Called inside
    the gate's transaction, whose savepoint undoes it on an error: no savepoint of its own
    (two statements a commit, issue 32). Not read again for a step's `then` when nothing it
    reads can have changed since the step's (`_unchanged_since_followed`), nor in a firing
    batch that keeps them and the dates they follow (`_kept_following`)."""
    if _unchanged_since_followed(job):
        return []
    moved, since = [], kept.mark()
    following = _kept_following(job)
    if following is None:
        following = [(deadline, deadline.first_late)
                     for deadline in FOLLOWING(brand=job.brand_id, job=job.pk)]
    for deadline, first_late in following:
        deadline.job = job  # the gate's, in hand: its late mark re-armed reads it
        within = _within_of(deadline)
        ends = _before(job, first_late, within) if within else None
        if ends is None or ends == deadline.ends:
            continue
        before = deadline.ends
        deadline.ends, deadline.budget = ends, max(ends - deadline.started, timedelta(0))
        now = common.now_of(job)
        relieved = deadline.state != Deadline.State.OPEN and ends > now and \
            work_left(deadline, now) > timedelta(0)
        if relieved:
            deadline.state = Deadline.State.OPEN
        # Its UPDATE rides with its late mark's re-arm (`basics.riding`, issue 32).
        with saved_riding(deadline, ["ends", "budget", "state"]):
            _task_due(deadline)
            _arm_late(deadline)
        if deadline.state == Deadline.State.OPEN and deadline.running_since is not None:
            _arm_work(deadline, "risk", now)  # a held one re-arms on release, from `budget`
        common.record(job, "deadline.moved", {"deadline": deadline.pk, "from": before,
                                              "to": ends, "follows": deadline.follows})
        moved.append(f"{deadline.what} {common.at(before)} → {common.at(ends)}")
    _keep_following(job, [deadline for deadline, _ in following], since)
    _note_followed(job)
    return moved


# -- what a firing batch keeps -----------------------------------------------------------------

# What a firing batch keeps a job's deadlines that follow its dates as (`Firing.keep_read`).
KEPT = "deadlines that follow"
# The records of a job that leave its deadlines as read: a step's commit, a date's notice or
# escalation, and a date's move (a deadline follows its dates' moves when `follow` is called,
# from the dates as they are then).
KEPT_STANDS = frozenset({"step.committed", "clock.notice", "clock.escalated", "clock.moved"})


def deadlines_stand(value: list[Deadline], record) -> bool:
    """`firing.STANDING`'s rule for `KEPT`, asked of the records that tell too: `record`
    leaves the deadlines as read when it is of `KEPT_STANDS`, or a move of one of them (made
    by `follow` through those it was given). Every other record forgets them: a deadline
    started, met, held, released or closed, and a deadline's at-risk or late mark, which only
    tells, but changes its state."""
    return record.kind in KEPT_STANDS or (record.kind == "deadline.moved" and any(
        deadline.pk == record.data.get("deadline") for deadline in value))


def read_following(batch, jobs: list[str]) -> None:
    """The deadlines that follow the dates of the firing batch's `jobs`, read and locked in
    one statement and kept as each job's (the clock kind's `prepare`: a return's three `run`
    rungs read their job's four times, issue 32)."""
    found: dict[str, list[Deadline]] = {job: [] for job in jobs}
    for deadline in FOLLOWING_OF_JOBS(brand=batch.brand.pk, jobs=jobs):
        found[deadline.job_id].append(deadline)
    since = batch.mark()
    for job, deadlines in found.items():
        batch.keep_read(KEPT, job, deadlines, job=job, since=since)


def _kept_following(job: Job) -> list[tuple[Deadline, object]] | None:
    """The job's deadlines that follow a clock as the firing batch keeps them, each with the
    first instant its clock's earliest open date is late, found among the dates the batch
    keeps (`clocks.kept.movable_now`: those of the clocks no hard date is kept on); or None:
    outside a firing batch, none kept, kept no longer (`deadlines_stand`), the job's dates
    not kept, or a deadline that follows a clock with an open hard date."""
    batch = in_progress.current()
    deadlines = batch.take_read(KEPT, job.pk) if batch is not None else None
    if deadlines is None or any(deadline.hard for deadline in deadlines):
        return None
    dates = kept.movable_now(job.pk) if deadlines else []
    if dates is None:
        return None
    first: dict[str, datetime] = {}
    for date in dates:
        if date.status == Occurrence.Status.OPEN and date.late_from is not None:
            name = date.clock.name
            first[name] = min(first.get(name, date.late_from), date.late_from)
    return [(deadline, first.get(deadline.follows)) for deadline in deadlines]


def _keep_following(job: Job, deadlines: list[Deadline], since: int | None) -> None:
    batch = in_progress.current()
    if batch is not None and since is not None:
        batch.keep_read(KEPT, job.pk, deadlines, job=job.pk, since=since)


# Under what a firing batch keeps, with a job's id, where its record stood when the deadlines
# that follow its dates were last followed in one of its handlers.
FOLLOWED = "deadlines followed"
# The records of a job that change nothing `follow` reads (the job's open deadlines, their
# ends, the dates they follow): a step's commit, on the record before its effects, each of
# which writes records of its own as it changes a date or a deadline (`clock.moved`,
# `clock.satisfied` before the dates a kept date opens, `deadline.started`, `deadline.met`,
# …); and the records that only tell (`firing.TELLING`: a date's notice or escalation, a
# deadline's at-risk or late mark, which changes its state among the open ones, not its end).
FOLLOW_STANDS = frozenset({"step.committed"})


def _unchanged_since_followed(job: Job) -> bool:
    """Whether the job's deadlines were followed in a handler of the firing batch, with no
    record of the job made since but a step's commit or one that only tells (issue 32: a
    `run` rung's step, then its `then`, read the deadlines twice though the `then` moved no
    date, and a return's three `run` rungs, fired together, read them again at each step).
    Every change to a job's dates and deadlines is on the record as it is made, the first read
    locked the deadlines in the batch's transaction (a move of a date elsewhere follows them,
    so waits for it), and the instant and the job's zone are the batch's. Outside a handler
    of a firing, always read."""
    batch = in_progress.current()
    if batch is None or batch.current is None:
        return False
    mark = batch.memo.get((FOLLOWED, job.pk))
    if mark is None:
        return False
    return all(entry.kind in FOLLOW_STANDS or entry.kind in firing.TELLING
               for entry in batch.records_since(job.pk, mark))


def _note_followed(job: Job) -> None:
    batch = in_progress.current()
    if batch is not None and batch.current is not None:
        batch.memo[(FOLLOWED, job.pk)] = len(batch.records)


def _within_of(deadline: Deadline) -> Within | None:
    return parse_within(deadline.rule)


def meet(deadline: Deadline, now: datetime) -> None:
    """The work is done: the deadline is met (on time, or late), its timers cancelled."""
    on_time = deadline.state != Deadline.State.LATE and now < deadline.ends
    deadline.state, deadline.settled = Deadline.State.MET, now
    deadline.save(update_fields=["state", "settled"])
    common.cancel(deadline.job, _key(deadline, "risk"), _key(deadline, "late"),
                  why=f"deadline {deadline.pk} met")
    common.record(deadline.job, "deadline.met", {"deadline": deadline.pk, "step":
                                                 deadline.step, "on_time": on_time})


# A job's deadlines not yet met or closed: what its end closes, compiled once and prepared
# (found by the job's index, as `FOLLOWING`).
OPEN_OF_JOB = compiled.Read(lambda job: Deadline.objects.filter(
    job_id=job, state__in=OPEN_STATES), model=Deadline, prepared=True)


def close(job: Job, why: str) -> None:
    for deadline in OPEN_OF_JOB(job=job.pk):
        deadline.state = Deadline.State.CLOSED
        deadline.save(update_fields=["state"])
        common.cancel(job, _key(deadline, "risk"), _key(deadline, "late"), why=why)


# -- firing -----------------------------------------------------------------------------------

FIRED = common.fired_row(Deadline)


def fire(deadline_id: str, mark: str, instant: datetime, *,
         read: Deadline | None = None) -> str:
    """A deadline's mark fires: `read`, the deadline as its batch read it
    (`common.keep_fired`), else read now."""
    # Inside the firing's transaction (a savepoint per timer when a batch is redone one by
    # one): nothing here raises to be caught short of it, so no savepoint of its own.
    with transaction.atomic(savepoint=False):
        deadline = read or FIRED.get(pk=deadline_id)
        job = deadline.job
        label = f"{'at risk' if mark == 'risk' else 'late'} · within {deadline.rule}"
        if deadline.state not in OPEN_STATES:
            return f"{label} · {deadline.state}: nothing to do"
        if mark == "risk":
            if deadline.state != Deadline.State.OPEN:
                return f"{label} · already {deadline.get_state_display()}"
            deadline.state = Deadline.State.AT_RISK
            deadline.save(update_fields=["state"])
            common.record(job, "deadline.at_risk", {
                "deadline": deadline.pk, "step": deadline.step, "ends": deadline.ends,
                "work_left": span_text(work_left(deadline, instant, mark="late"))})
            _tell(deadline, "at risk", f"{_work(deadline)} is at risk of running late: it is "
                                       f"late from {common.said_at(job, deadline.ends)}.")
            return f"{label} · {span_text(work_left(deadline, instant, mark='late'))} left"
        deadline.state = Deadline.State.LATE
        deadline.save(update_fields=["state"])
        data = {"deadline": deadline.pk, "step": deadline.step, "ends": deadline.ends}
        if deadline.late_price:
            data["late_price"] = deadline.late_price  # comes off the charge (the ledger)
        common.record(job, "deadline.late", data)
        off = f" {deadline.late_price} comes off the charge." if deadline.late_price else ""
        _tell(deadline, "late", f"{_work(deadline)} was due by "
                                f"{common.said_at(job, deadline.ends)} and is not done.{off}")
        return label + (f" · {deadline.late_price} off the charge" if deadline.late_price
                        else "")


def _work(deadline: Deadline) -> str:
    """The work a deadline is on, in an email: "The work to 'file' for Juniper Labs' 2027
    annual return"."""
    step = f" to '{deadline.step.replace('_', ' ')}'" if deadline.step else ""
    return f"The work{step} for {common.named(deadline.job)}"


def _tell(deadline: Deadline, what: str, body: str) -> None:
    """The one answering for the work hears it: a step's task holder, else the brand's owner."""
    job = deadline.job
    to = common.owner_email(job)
    if deadline.step:
        task = job.tasks.filter(step=deadline.step, holder__isnull=False).select_related(
            "holder__user").first()
        if task is not None and task.holder.user.email:
            to = task.holder.user.email
    common.tell(job, to, f"{what.capitalize()}: {common.named(job)}", body,
                key=f"{deadline.pk}:{what}", link=common.console_link(job))


def describe(payload: dict, rule: str) -> str:
    mark = "at risk" if payload.get("mark") == "risk" else "late"
    return f"{mark} · within {rule}"

