"""What a person's action on a date changed, kept on its record so that `timekeeping.clocks.undo`
can restore exactly that, or say why it cannot.

    was(occurrence)            the date's state before it is kept (status, settled, by whom)
    before(job)                the job before a choice's step: its dates that may be kept,
                               its steps done, how many records its work has written
    since(job, before, outcome) what the step did: the dates it kept (with what each was), and
                               what else it set in motion, in words (`in_motion`)
"""

from __future__ import annotations

from dataclasses import dataclass

from timekeeping.models import Job, Occurrence, Record

# What keeping a date writes on the record and an undo withdraws: the step itself, the date
# kept, and the next coming of a recurring date (opened, rolled, or found to have no date).
KEEPING = ("step.committed", "clock.satisfied", "clock.rolled", "clock.no_date",
           "clock.chosen")
LIVE = (Occurrence.Status.OPEN, Occurrence.Status.LAPSED)


def was(occurrence: Occurrence) -> dict:
    return {"status": occurrence.status, "settled": occurrence.settled,
            "settled_by": occurrence.settled_by}


@dataclass(frozen=True)
class Before:
    dates: dict[int, dict]
    steps_done: list[str]
    work: int


def before(job: Job) -> Before:
    dates = {occurrence.pk: was(occurrence) for occurrence in Occurrence.objects.filter(
        brand_id=job.brand_id, clock__job=job, status__in=LIVE)}
    steps_done = Job.objects.filter(pk=job.pk).values_list("steps_done", flat=True).first()
    return Before(dates, list(steps_done or []), _work(job))


def since(job: Job, before: Before, outcome) -> dict:
    """What the step did, for its record: the dates it kept, whether it was done before, and
    what else it set in motion (an undo refuses when that is not empty)."""
    kept = []
    if outcome.committed:
        kept = [{"occurrence": pk, "was": before.dates[pk]} for pk in Occurrence.objects.filter(
            pk__in=list(before.dates), status=Occurrence.Status.SATISFIED,
            settled_by=outcome.step).values_list("pk", flat=True)]
    in_motion = []
    if outcome.moved:
        in_motion.append("it moved dates")
    if outcome.then:
        in_motion.append("it went on to the next step")
    if outcome.committed and _work(job) != before.work:
        in_motion.append("it started or settled the job's work")
    return {"kept": kept, "step_was_done": outcome.step in before.steps_done,
            "in_motion": in_motion}


def _work(job: Job) -> int:
    """How many records of the job say something other than keeping a date."""
    # By subject first: the index a subject's history reads (record_subject).
    return Record.objects.filter(brand_id=job.brand_id, subject=job.subject_id,
                                 job=job.pk).exclude(
        kind__in=KEEPING).count()
