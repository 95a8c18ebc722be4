"""What steps and people do to a job's dates: a step keeps (satisfies) or moves them, a
hard date that has passed bars a step, a date lapses, a job ends; a date's owner marks it done,
chooses, acknowledges it, or assigns it to a member.
"""

from __future__ import annotations

from datetime import date, datetime
from functools import lru_cache

from django.db import transaction

from timekeeping.basics import compiled
from timekeeping.clocks import changed, emails, following, gate, kept, moving
from timekeeping.clocks.basis import OrderRefused, bundles_of, now_for
from timekeeping.clocks.opening import (
    END_HOOKS,
    MEASURED,
    due_by_rule,
    measured_from_it,
    open_occurrence,
)
from timekeeping.clocks.rungs import end_timers, spec_named, spec_of
from timekeeping.clocks.telling import record_line, tell_owner
from timekeeping.models import Clock, Job, Member, Occurrence
from timekeeping.specs.current import services_of
from timekeeping.specs.services import ClockSpec
from timekeeping.timers import in_progress, records


def open_occurrences(job: Job):
    return Occurrence.objects.filter(brand_id=job.brand_id, clock__job=job,
                                     status=Occurrence.Status.OPEN)


def satisfy(job: Job, step: str, items: list[str], at: datetime) -> list[str]:
    """Satisfy the open occurrences this step keeps. With `each`, only an item's own step
    satisfies it (the step names the item)."""
    kept = []
    if not _names(job, step, "satisfied_by"):
        return kept
    # A lapsed date is still kept by its step, late: the record says so.
    for occurrence in _of_job(job, KEEPABLE(brand=job.brand_id, job=job.pk)):
        spec = spec_of(occurrence.clock)
        if step not in spec.satisfied_by:
            continue
        if occurrence.item and occurrence.item not in items:
            continue
        _settle(occurrence, spec, by=step, at=at)
        kept.append(f"{occurrence.clock.name} {occurrence.item or ''}".strip())
    return kept


def _names(job: Job, step: str, rule: str) -> bool:
    """Whether a clock of the job's Service names `step` in its `rule` (`satisfied_by`,
    `moves`). A job's clocks are its Service's, of its pinned version
    (`opening._open_clocks`), so when none does, no date of the job is read for the step
    (issue 32)."""
    return any(step in getattr(spec, rule)
               for spec in services_of(job.bundle)[job.service].clocks.values())


# A job's dates a step may keep (open, or lapsed: kept late), and those it may move (open and
# not hard), each read with its clock: reads of every step that keeps or moves a date,
# compiled once and prepared (issue 32). The brand is asked of the job, found by its id: asked
# of the date or its clock, the plan kept for every value scanned the brand's (`bench/plans.py`).
KEEPABLE = compiled.Read(lambda brand, job: Occurrence.objects.filter(
    clock__job__brand_id=brand, clock__job_id=job,
    status__in=[Occurrence.Status.OPEN, Occurrence.Status.LAPSED]), model=Occurrence,
    related=("clock",), prepared=True)
MOVABLE = compiled.Read(lambda brand, job: Occurrence.objects.filter(
    clock__job__brand_id=brand, clock__job_id=job, status=Occurrence.Status.OPEN,
    clock__hard=False), model=Occurrence, related=("clock",), prepared=True)
# A job's open dates with their clocks, read as it ends (`end_job`), compiled once and
# prepared, as the two above.
ENDING = compiled.Read(lambda brand, job: Occurrence.objects.filter(
    clock__job__brand_id=brand, clock__job_id=job, status=Occurrence.Status.OPEN),
    model=Occurrence, related=("clock",), prepared=True)


def _of_job(job: Job, found: list[Occurrence]) -> list[Occurrence]:
    """The job's occurrences, read with their clock (`KEEPABLE`, `MOVABLE`), the clock's
    job, brand, subject and test clock the ones in hand (issue 32: each was read again per
    date, its spec (`spec_of`) asking for the job, its record for the test clock). `job` is
    the gate's, read with its brand, subject and test clock under its row's lock."""
    for occurrence in found:
        row = occurrence.clock
        row.job = job
        if row.brand_id == job.brand_id:
            row.brand = job.brand
        if row.subject_id == job.subject_id:
            row.subject = job.subject
        if row.test_clock_id == job.test_clock_id:
            row.test_clock = job.test_clock
    return found


def _settle(occurrence: Occurrence, spec: ClockSpec, *, by: str, at: datetime,
            noted: dict | None = None):
    """Keep the date; `noted` joins its record (what an undo needs: who, what it was)."""
    late = occurrence.status == Occurrence.Status.LAPSED
    occurrence.status = Occurrence.Status.SATISFIED
    occurrence.settled, occurrence.settled_by = at, by
    occurrence.save(update_fields=["status", "settled", "settled_by"])
    end_timers(occurrence, f"satisfied by {by}")
    written = record_line(occurrence, "clock.satisfied", {"by": by, "due": occurrence.due,
                                                      "late": late, **(noted or {})})
    _measure_from(occurrence)
    if spec.every:
        open_occurrence(occurrence.clock, spec, occurrence.item, occurrence.seq + 1)
    return written


def _measure_from(kept: Occurrence) -> None:
    """The dates of the job measured from when `kept` was kept (`after_kept`: a refund window
    runs from the filing) open now, or move to it if they had a date already."""
    row = kept.clock
    measured = measured_from_it(kept)
    if not measured:
        return
    for other in Clock.objects.filter(job_id=row.job_id, name__in=[s.name for s in measured]
                                      ).select_related("job__subject", "subject", "brand",
                                                       "test_clock"):
        spec = spec_of(other)
        found = Occurrence.objects.filter(clock=other).order_by("-seq").first()
        if found is None:
            open_occurrence(other, spec, "", seq=0)
            continue
        day = due_by_rule(other, spec, spec.due, found.item, found.seq)
        if found.status == Occurrence.Status.OPEN and day is not None and \
                day not in (found.due, found.rolled_from):
            move_to(found, spec, day, by=row.name + MEASURED, roll=True)


def mark_done(occurrence: Occurrence, *, by: str):
    """Its owner marks a date kept by hand: the way to keep a date that outlived its job,
    or one no step of the Service covers. Answers the `clock.satisfied` record, which names
    who and what the date was before (`timekeeping.clocks.undo` reads it)."""
    if occurrence.status not in (Occurrence.Status.OPEN, Occurrence.Status.LAPSED):
        raise OrderRefused("item", f"the date is {occurrence.status}; only an open or lapsed "
                                   "date can be marked done")
    at = now_for(occurrence.clock.brand, occurrence.clock.test_clock)
    return _settle(occurrence, spec_of(occurrence.clock), by=f"marked done by {by}", at=at,
                   noted={"who": by, "occurrence": occurrence.pk,
                          "was": changed.was(occurrence)})


def move(job: Job, step: str, items: list[str]) -> list[str]:
    """Move the occurrences a committed step covers, each by its clock's rule for that step."""
    moved = []
    if not _names(job, step, "moves"):
        return moved
    since = kept.mark()
    found = kept.movable(job)  # as the batch keeps them (a job's `run` rungs, issue 32)
    if found is None:
        found = MOVABLE(brand=job.brand_id, job=job.pk)
    days = {occurrence.pk: occurrence.due for occurrence in found}
    for occurrence in _of_job(job, found):
        spec = spec_of(occurrence.clock)
        # With `each`, a step moves only the items it names (as it satisfies only those).
        if step not in spec.moves or (occurrence.item and occurrence.item not in items):
            continue
        new_day = due_by_rule(occurrence.clock, spec, spec.moves[step], occurrence.item,
                            occurrence.seq)
        if new_day is None or new_day in (occurrence.due, occurrence.rolled_from):
            continue  # already there: a step taken again moves nothing
        if occurrence.moved_by == "calendar" and new_day < occurrence.due:
            continue  # an authority's notice gave more time; a step's rule takes none back
        moved.append(move_to(occurrence, spec, new_day, by=step, roll=True))
    kept.keep_movable(job, found, days, since)
    return moved


def move_to(occurrence: Occurrence, spec: ClockSpec, day: date, *, by: str, roll: bool,
             notice: str = "", ahead_of: datetime | None = None) -> str:
    """Move the date kept to `day` (rolled or not), on the record, and re-arm its rungs and
    date; with `ahead_of`, only the rungs owed after it (`rungs.arm`)."""
    said = {"by": by, **({"notice": notice} if notice else {})}
    before, written = moving.relocate(occurrence, spec, day, by=by, roll=roll, said=said,
                                      why=f" by {by}", ahead_of=ahead_of)
    # The dates measured from this one (`{"clock": …}`) keep their distance, on the record.
    return "; ".join([moving.moved_line(occurrence, before), *following.follow(
        occurrence, following.cause_of(occurrence, by, before, written, notice))])


# The dates that could bar a step of a subject: its hard dates not kept, in their model's
# order, with what says whether each bars it. A read every step is judged by, compiled once
# (issue 32: Django's compiling of it, its joins and its order, was a fifth of a `run` rung).
HARD_DATES = compiled.Read(lambda brand, subject, test_clock: Occurrence.objects.filter(
    brand_id=brand, clock__subject_id=subject, clock__hard=True, clock__test_clock_id=test_clock,
).exclude(status=Occurrence.Status.SATISFIED).values_list(
    "pk", "clock__bundle", "clock__job__service", "clock__name", "clock__job_id",
    "clock__lives_on_subject", "late_from", "item"))


def date_passed(job: Job, step: str, items: list[str], now: datetime) -> Occurrence | None:
    """The hard date (of this job, or living on its subject) that bars `step` and has passed.
    A step no hard clock of the brand's manifests bars reads no dates (issue 32: a `run`
    rung's step and its `then` read them twice, a fifth of the rung)."""
    if step not in barred(job.brand_id):
        return None
    for pk, bundle, service, name, job_id, lives_on_subject, late_from, item in HARD_DATES(
            brand=job.brand_id, subject=job.subject_id, test_clock=job.test_clock_id):
        if job_id != job.pk and not lives_on_subject:
            continue
        if step in spec_named(bundle, service, name).bars and now >= late_from:
            if not items or not item or item in items:
                return Occurrence.objects.select_related("clock", "clock__job").get(pk=pk)
    return None


def barred(brand_id: str) -> frozenset[str]:
    """Every step a hard clock bars in any version of the brand's manifest, read once a firing
    batch or an order (`in_progress.read_once`): a date's clock is of its job's version, and
    every job's version is one of its brand's, so no other step can be barred."""
    return in_progress.read_once(brand_id, "barred steps", lambda: frozenset().union(*map(
        _barred_in, bundles_of(brand_id))))


@lru_cache(maxsize=64)
def _barred_in(bundle: str) -> frozenset[str]:
    return frozenset(step for service in services_of(bundle).values()
                     for spec in service.clocks.values() if spec.hard for step in spec.bars)


def lapse(occurrence: Occurrence, at: datetime) -> str:
    """Its date came, unsatisfied: on the record, and a choice put to its owner (SPEC S23)."""
    occurrence.status = Occurrence.Status.LAPSED
    occurrence.settled, occurrence.settled_by = at, "its date passed"
    occurrence.save(update_fields=["status", "settled", "settled_by"])
    spec = spec_of(occurrence.clock)
    record_line(occurrence, "clock.lapsed", {"due": occurrence.due, "hard": spec.hard,
                                         "bars": list(spec.bars), "choices": list(spec.choices)})
    tell_owner(occurrence, *emails.missed(occurrence, spec.choices), key="lapsed")
    return "lapsed · a choice put to its owner"


def end_job(job: Job, *, state: str = Job.State.ENDED, by: str = "",
            data: dict | None = None, savepoint: bool = True) -> None:
    """End a job (S16). Clocks that live on the subject stay open in their owner's hands;
    the job's other dates close, and so does its own time (deadlines, asks, tasks).
    `savepoint=False` inside a firing, whose error undoes the batch and redoes it a timer at
    a time, each in a savepoint of its own (an ask that lapses its job: two statements)."""
    now = now_for(job.brand, job.test_clock)
    with transaction.atomic(savepoint=savepoint):
        if Job.objects.filter(pk=job.pk, state=Job.State.OPEN).update(state=state,
                                                                      ended=now) != 1:
            raise OrderRefused("job", f"job {job.pk} is {Job.objects.get(pk=job.pk).state}; "
                                      "only an open job ends")
        job.state, job.ended = state, now
        for ended in END_HOOKS:
            ended(job, state, now)
        kept = []
        for occurrence in ENDING(brand=job.brand_id, job=job.pk):
            if occurrence.clock.lives_on_subject:
                kept.append(occurrence.label)
                continue
            occurrence.status = Occurrence.Status.CLOSED
            occurrence.save(update_fields=["status"])
            # Its clock's brand and test clock are the job's, in hand: not read again.
            occurrence.clock.brand, occurrence.clock.test_clock = job.brand, job.test_clock
            end_timers(occurrence, f"job {job.pk} {state}")
        records.write(f"job.{state}", brand=job.brand, instant=now, test_clock=job.test_clock,
                      subject=job.subject_id, job=job.pk,
                      data={**(data or {}), "by": by, "lives_on": kept})


def choose(occurrence: Occurrence, choice: str, *, by: str):
    """The owner's choice on a clock: one the clock offers (`choices`); a choice that names a
    step runs it through the gate, for the occurrence's item."""
    spec = spec_of(occurrence.clock)
    if choice not in spec.choices:
        raise OrderRefused("choice", f"{choice!r} is not one of this clock's choices: "
                                     f"{', '.join(spec.choices) or 'none'}")
    job = occurrence.clock.job
    before = changed.before(job)
    outcome = gate.propose(job=job, step=choice,
                           items=[occurrence.item] if occurrence.item else [],
                           by=f"choice of {by}")
    # Written after the step, so it can say what the step changed (`timekeeping.clocks.undo`).
    written = record_line(occurrence, "clock.chosen", {
        "choice": choice, "by": by, "occurrence": occurrence.pk,
        "committed": outcome.committed, **changed.since(job, before, outcome)})
    outcome.record = written.pk if written is not None else ""
    return outcome


def acknowledge(occurrence: Occurrence, *, by: str):
    """Acknowledge the date; answers its record, which keeps what it was before (undo). A
    date acknowledged already stays as it is (a second click acts once): None."""
    if occurrence.acknowledged is not None:
        return None
    at = now_for(occurrence.clock.brand, occurrence.clock.test_clock)
    was = occurrence.acknowledged
    occurrence.acknowledged = at
    occurrence.save(update_fields=["acknowledged"])
    # One reading of the clock for both: an undo knows the date is as this left it by the
    # record's instant equalling the date's (`undo._still_acknowledged`).
    return record_line(occurrence, "clock.acknowledged", {"by": by, "occurrence": occurrence.pk,
                                                      "was": was}, at=at)


def assign(occurrence: Occurrence, member: Member | None, *, by: str):
    """Give the date to one of its brand's members to see through (S25), or to nobody (None):
    a `clock.assigned` record says to whom, by whom, and who had it before (undo). A member of
    another brand is refused, naming the field, and nothing changes. The API and the pages
    all assign through it."""
    if member is not None and member.brand_id != occurrence.clock.brand_id:
        raise OrderRefused("member", f"{member.pk} is not a member of the clock's brand")
    was = occurrence.assignee_id
    occurrence.assignee = member
    occurrence.save(update_fields=["assignee"])
    return record_line(occurrence, "clock.assigned", {
        "member": member.pk if member else None, "occurrence": occurrence.pk, "was": was,
        "to": member.user.get_username() if member else "nobody", "by": by})
