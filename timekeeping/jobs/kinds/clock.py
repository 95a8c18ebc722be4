"""The clock kind (place 6): a clock's rungs and its date (SPEC S12).

- `notice Nd`: recorded, and a notice to the clock's owner through the outbox;
- `escalate Nd`: recorded, and a notice to the brand's owner;
- `ack daily Nd`: asks the owner to acknowledge, each day from N days before until they do;
- `run <step> Nd`: proposes the step through the gate, for the occurrence's item;
- the date (at `late_from`): unsatisfied, a lapse on the record and a choice put to its owner.
A rung of an occurrence that is no longer open does nothing.
"""

from __future__ import annotations

from datetime import timedelta

from calendars.moments import day_in_zone
from timekeeping import clocks
from timekeeping.basics import compiled
from timekeeping.clocks import gate, kept
from timekeeping.jobs import deadlines, grants, lifecycle
from timekeeping.models import Occurrence, Timer
from timekeeping.specs.services import parse_rung
from timekeeping.timers import arming
from timekeeping.timers.firing import Firing, Hold


def describe(timer: Timer) -> str:
    return f"{timer.key.split(':', 1)[-1]}"


# What a rung that tells someone reads with its date: the date's owner and who answers for it.
# Its brand is the batch's (`_in_batch`): joined with its owner, it took half a read's time.
TOLD = ("clock", "clock__job", "clock__subject", "assignee__user")
# One date read again, compiled once (issue 32): with whom it tells, or, for a run rung, with
# its clock and job only (`_tells`).
DATE = {tells: compiled.Read(lambda pk: Occurrence.objects.filter(pk=pk), model=Occurrence,
                             related=compiled.reached(*rows), prepared=True)
        for tells, rows in ((True, TOLD), (False, TOLD[:2]))}


def prepare(timers: list[Timer], firing: Firing) -> None:
    """The dates a batch's rungs name, read in one statement with whom they tell (a batch of
    notices read them one a timer: a six-table join planned and compiled each time, most of
    a notice's cost); and the jobs its `run` rungs propose steps of, locked and read in one
    more, as the gate reads a job (`gate.propose`'s `locked`), with their steps started in one
    more (`lifecycle.read_started`, what a committed step reads to open the steps after it),
    the dates their steps may move in one more (`clocks.kept.read_movable`), and the
    deadlines that follow their dates in one more (`deadlines.read_following`).
    Each date and job is the handler's until a record of its job is made."""
    wanted = {timer.payload.get("occurrence") for timer in timers}
    runs = {timer.payload.get("occurrence") for timer in timers if not _tells(timer)}
    proposing = set()
    for occurrence in Occurrence.objects.select_related(*TOLD).filter(
            pk__in=[pk for pk in wanted if isinstance(pk, int)]):
        firing.keep_read("occurrence", occurrence.pk, _in_batch(occurrence, firing),
                         job=occurrence.clock.job_id)
        if occurrence.pk in runs and occurrence.status == Occurrence.Status.OPEN:
            proposing.add(occurrence.clock.job_id)
    if proposing:
        for job in gate.lock_jobs(proposing):
            firing.keep_read("job", job.pk, job, job=job.pk)
        jobs = sorted(proposing)
        lifecycle.read_started(firing, jobs)
        kept.read_movable(firing, jobs)
        deadlines.read_following(firing, jobs)


def fire(timer: Timer, firing: Firing) -> str:
    occurrence = _date_of(timer, firing)
    name = occurrence.clock.name
    passed = " · its day passed: fired in place" if timer.owed < firing.instant else ""
    if occurrence.status != Occurrence.Status.OPEN:
        return f"{name} · {describe(timer)} · {occurrence.status}: nothing to do"
    if timer.payload.get("date"):
        return f"{name} · the date {occurrence.due} · {clocks.lapse(occurrence, firing.instant)}"
    rung = parse_rung(timer.payload["rung"])
    if rung.action in ("notice", "escalate"):
        clocks.notice(occurrence, rung.text, escalate=rung.action == "escalate")
        return f"{name} · {rung.text}{passed}"
    if rung.action == "ack":
        return f"{name} · {_ack(occurrence, timer, firing)}{passed}"
    held = grants.held_rung(occurrence.clock.job, rung.step, firing.instant)
    if held is not None:
        raise Hold(f"{name} · rung {rung.text} held: {held}")
    job_id = occurrence.clock.job_id
    job = firing.take_read("job", job_id) or gate.lock_jobs([job_id])[0]
    outcome = gate.propose(job=job, step=rung.step, items=[occurrence.item] if occurrence.item
                           else [], by=f"rung {timer.id}", savepoint=False, locked=True)
    # As its step left it: the gate changes the job's row through it (`gate.propose`), so the
    # next rung of the batch on the same job reads it no more (a return's three file dates).
    firing.keep_read("job", job_id, job, job=job_id)
    return f"{name} · rung {rung.text} → {outcome.describe()}{passed}"


def _date_of(timer: Timer, firing: Firing) -> Occurrence:
    """The date the timer's rung is of: as the batch read it, else read now. One read now for
    a rung that tells is taken as the batch's (`Firing.keep_read`): given back when it is done,
    it stands for the rungs after it on the same date (its ask, then its `run` rung)."""
    pk = timer.payload["occurrence"]
    occurrence = firing.take_read("occurrence", pk)
    if occurrence is not None:
        return occurrence
    tells = _tells(timer)
    occurrence = _in_batch(DATE[tells].get(pk=pk), firing)
    if tells:
        firing.keep_read("occurrence", pk, occurrence, job=occurrence.clock.job_id)
        firing.take_read("occurrence", pk)
    return occurrence


def _in_batch(occurrence: Occurrence, firing: Firing) -> Occurrence:
    """The date with its brand the batch's, read once for the batch with its owner (whom a
    notice may tell), and its clock's and job's test clock the batch's (a walk's notice read
    it once a date: the time its record is written at)."""
    row = occurrence.clock
    if row.brand_id == firing.brand.pk:
        row.brand = firing.brand
    if firing.test_clock is not None and row.test_clock_id == firing.test_clock.pk:
        row.test_clock = firing.test_clock
        if row.job.test_clock_id == row.test_clock_id:
            row.job.test_clock = firing.test_clock
    return occurrence


def quiet(timer: Timer) -> bool:
    """A notice, an escalation or an ask to acknowledge only tells, and arms the next day's
    ask with the batch (`arming.arm_later`): it reads and ends no timer."""
    if timer.payload.get("date"):
        return False
    rung = parse_rung(timer.payload.get("rung"))
    return rung is not None and rung.action in ("notice", "escalate", "ack")


def _tells(timer: Timer) -> bool:
    """All but a `run` rung may tell someone. A run rung proposes a step: its date's clock and
    job are all it reads (two tables joined, not six: planned and read in a fraction of the
    time, issue 32)."""
    rung = None if timer.payload.get("date") else parse_rung(timer.payload.get("rung"))
    return rung is None or rung.action != "run"


def _ack(occurrence: Occurrence, timer: Timer, firing: Firing) -> str:
    if occurrence.acknowledged is not None:
        return "acknowledged"
    clocks.notice(occurrence, "ack asked")
    cal = clocks.calendar_for(occurrence.clock.subject)
    next_day = day_in_zone(firing.instant, cal.zone_name) + timedelta(days=1)
    if next_day <= occurrence.due:
        row = occurrence.clock
        arming.arm_later(brand=row.brand, test_clock=row.test_clock, kind="clock",
                         key=f"{occurrence.label}:ack:{next_day}",
                         owed=cal.rings(next_day),
                         owner_type="occurrence", owner_id=occurrence.label,
                         owner_opened=row.job.opened, bundle=row.bundle,
                         payload={"occurrence": occurrence.pk, "rung": timer.payload["rung"]})
    return "ack asked, again tomorrow until acknowledged"
