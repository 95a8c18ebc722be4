"""A repair window (S21, `deliver.<step>.perfect`, place 7): a rejected filing resubmitted
inside it keeps the first filing time.

    "deliver": {"file": {"perfect": "10d"}}

A step with `perfect` keeps dates (a clock's `satisfied_by`). When the receiving side rejects
what it filed (`reject`, through the API, with its code), the dates it kept open again, and the
repair window opens: `<job>:repair:<step>:<n>`, closing `perfect` after the rejection in the
subject's zone. While it is open the dates' own timers stay unarmed: a date that falls due
during a repair is not late yet. Then:

- the step commits again through the gate inside the window: the dates are kept at the first
  filing time (on time if that was), and the window ends `repaired`;
- the window closes first: the first filing time is lost; the dates' rungs and late marks are
  armed again (a date already past due lapses at once), and a later filing keeps them at its
  own time.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from timekeeping import clocks
from timekeeping.jobs import common
from timekeeping.models import Job, Occurrence, Timer
from timekeeping.specs.current import services_of
from timekeeping.timers.firing import now_for

KIND = "window"


def _perfect(job: Job, step: str):
    deliver = services_of(job.bundle)[job.service].work.deliver.get(step)
    return deliver.perfect if deliver is not None else None


@transaction.atomic
def reject(job: Job, *, step: str, items: list[str], code: str, by: str) -> dict:
    """What `step` filed was rejected (`code`, as the receiving side said it): the dates it
    kept open again and its repair window opens. Refused, naming the field, when the step has
    no repair window or kept nothing of those items."""
    job = Job.objects.select_for_update(of=("self",)).select_related(
        "brand", "subject", "test_clock").get(pk=job.pk)
    perfect = _perfect(job, step)
    if perfect is None:
        raise clocks.OrderRefused("step", f"{step!r} has no repair window ('perfect')")
    if job.state != Job.State.OPEN:
        raise clocks.OrderRefused("job", f"job {job.pk} is {job.state}")
    kept = Occurrence.objects.filter(clock__job=job, status=Occurrence.Status.SATISFIED,
                                     settled_by=step).select_related("clock")
    if items:
        kept = kept.filter(item__in=items)
    kept = list(kept)
    if not kept:
        raise clocks.OrderRefused("items", f"{step!r} kept no date of "
                                           f"{', '.join(items) or 'this job'} to reject")
    now = now_for(job.brand, job.test_clock)
    first = {}
    for occurrence in kept:
        first[occurrence.pk] = occurrence.settled.isoformat()
        occurrence.status, occurrence.settled, occurrence.settled_by = (
            Occurrence.Status.OPEN, None, "")
        occurrence.save(update_fields=["status", "settled", "settled_by"])
    closes = perfect.after(now, clocks.calendar_for(job.subject).zone_name)
    count = Timer.objects.filter(owner_type="job", owner_id=job.pk, kind=KIND,
                                 key__startswith=f"{job.pk}:repair:{step}:").count()
    common.arm(job, KIND, f"{job.pk}:repair:{step}:{count + 1}", closes,
               {"job": job.pk, "window": "repair", "step": step, "first": first,
                "items": [occurrence.item for occurrence in kept]})
    said = {"step": step, "code": code, "items": [o.item for o in kept], "closes": closes,
            "first_filed": min(first.values()), "by": by}
    common.record(job, "step.rejected", said, at=now)
    return said


def _window(job: Job, step: str) -> Timer | None:
    return Timer.objects.filter(brand_id=job.brand_id, owner_type="job", owner_id=job.pk,
                                kind=KIND,
                                key__startswith=f"{job.pk}:repair:{step}:",
                                state=Timer.State.ARMED).first()


def effect_resubmitted(job: Job, step: str, items: list[str], now: datetime, outcome) -> None:
    """The step commits again inside its repair window: the dates it keeps again are kept at
    their first filing time (after 10 kept them now). Only a step with `perfect` opens a
    window (`reject`), so another step reads none (issue 32)."""
    if _perfect(job, step) is None:
        return
    window = _window(job, step)
    if window is None or now >= window.owed:
        return
    first = window.payload["first"]
    kept = {}
    for occurrence in Occurrence.objects.filter(pk__in=[int(pk) for pk in first],
                                                status=Occurrence.Status.SATISFIED):
        occurrence.settled = datetime.fromisoformat(first[str(occurrence.pk)])
        occurrence.save(update_fields=["settled"])
        kept[occurrence.item or occurrence.clock_id] = first[str(occurrence.pk)]
    common.cancel(job, window.key, why="repaired")
    common.record(job, "step.repaired", {"step": step, "kept": kept}, at=now)


def fire(timer: Timer, instant: datetime) -> str:
    """The repair window closes unrepaired: the first filing time is lost, and the dates it
    held are armed again."""
    with transaction.atomic():
        job = Job.objects.select_for_update(of=("self",)).select_related(
            "brand", "subject", "test_clock").get(pk=timer.payload["job"])
        step = timer.payload["step"]
        waiting = list(Occurrence.objects.filter(
            pk__in=[int(pk) for pk in timer.payload["first"]],
            status=Occurrence.Status.OPEN).select_related("clock"))
        for occurrence in waiting:
            clocks.arm(occurrence, clocks.spec_of(occurrence.clock),
                       why="its repair window closed")
        common.record(job, "repair.lapsed", {"step": step, "items": timer.payload["items"],
                                             "reopened": len(waiting)}, at=instant)
        return (f"repair window of {step} · closed unrepaired: the first filing time is lost, "
                f"{len(waiting)} date(s) armed again")
