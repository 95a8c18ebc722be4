"""Stewards (S16): who keeps a subject's `lives_on: subject` dates between its jobs.

A manifest may mark one service as its steward service (`steward: true`), naming the member
who keeps the dates for it (`keeper`, an email; none: the brand's owner). A subject has a
steward while it holds an open job of that service. Then:

1. when a job ends, each of its clocks that lives on the subject (with a date still open)
   passes to the subject's steward, or, with none, stays in its owner's hands;
2. when a steward job opens, it takes up the subject's dates their owner keeps;
3. when a steward job ends, the dates it kept go back to their owner (or to another steward).

Each pass is a `clock.kept` record line naming who keeps the date now. A date a steward keeps
tells its keeper of its notices and lapses (`telling`).

    steward_of(subject, but=None)   the subject's open steward job, or None
    steward_service(subject)        the current manifest's steward service for it, or None
    between_jobs(subject)           its dates between jobs, each with who keeps it
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from django.db.models import Exists, OuterRef, Subquery

from timekeeping.basics import compiled
from timekeeping.clocks.basis import bundles_of
from timekeeping.models import Clock, Job, Member, Occurrence, Subject
from timekeeping.specs.current import current, services_of
from timekeeping.specs.services import ServiceSpec
from timekeeping.timers import records


def is_steward(job: Job) -> bool:
    spec = services_of(job.bundle).get(job.service)
    return spec is not None and spec.steward


# A subject's open jobs, the first opened first: where its steward is looked for, compiled once.
OPEN_JOBS = compiled.Read(lambda brand, subject: Job.objects.filter(
    brand_id=brand, subject_id=subject, state=Job.State.OPEN).order_by("opened", "id"),
    model=Job)


def steward_of(subject: Subject, *, but: Job | None = None) -> Job | None:
    """The subject's open job of a steward service (its manifest version's), the first
    opened; None when it has none. `but`: a job not to count (one ending)."""
    return next((job for job in OPEN_JOBS(brand=subject.brand_id, subject=subject.pk)
                 if (but is None or job.pk != but.pk) and is_steward(job)), None)


def keeper_of(steward: Job) -> tuple[Member | None, str]:
    """The member the steward service names as its keeper, and the email it names ("" when
    it names none). A name that is no manager or owner of the brand (one who left, a viewer)
    gives None: the brand's owner keeps the date, and the record says whom it named."""
    named = services_of(steward.bundle)[steward.service].keeper
    if not named:
        return None, ""
    member = Member.objects.filter(brand_id=steward.brand_id, user__email__iexact=named).exclude(
        role=Member.Role.VIEWER).select_related("user").first()
    return member, named


def _live(clocks):
    """Clocks with a date still open: a date kept or closed needs no keeper."""
    return clocks.filter(Exists(Occurrence.objects.filter(clock=OuterRef("pk"),
                                                          status=Occurrence.Status.OPEN)))


def pass_to(clocks: list[Clock], steward: Job | None, now: datetime, *, why: str) -> None:
    """Give the dates, of one brand, to `steward` (None: their owner), each on the record:
    one statement however many (issue 32: a return's end passed its two dates that live on
    the subject in two)."""
    if not clocks:
        return
    member, named = keeper_of(steward) if steward is not None else (None, "")
    for clock in clocks:
        clock.steward, clock.keeper = steward, member
    if len(clocks) == 1:
        clocks[0].save(update_fields=["steward", "keeper"])  # one UPDATE made once
    else:
        Clock.objects.filter(brand_id=clocks[0].brand_id, pk__in=[
            clock.pk for clock in clocks]).update(steward=steward, keeper=member)
    for clock in clocks:
        data = {"clock": clock.pk, "name": clock.name, "title": clock.title, "by": why,
                "keeper": "steward" if steward is not None else "owner"}
        if steward is not None:
            data.update(steward=steward.pk, service=steward.service,
                        member=member.pk if member else None, named=named)
        records.write("clock.kept", brand=clock.brand, instant=now,
                      test_clock=clock.test_clock, subject=clock.subject_id, job=clock.job_id,
                      data=data)


def when_opened(job: Job, spec: ServiceSpec, now: datetime) -> None:
    """A steward job opens: it takes up the subject's dates between jobs that their owner
    keeps (an `on_open` hook)."""
    if not spec.steward:
        return
    waiting = _live(Clock.objects.filter(
        brand_id=job.brand_id, subject_id=job.subject_id, lives_on_subject=True,
        steward__isnull=True).exclude(job__state=Job.State.OPEN)).select_related("brand")
    pass_to(list(waiting.order_by("opened", "id")), job, now,
            why=f"steward job {job.pk} opened")


def when_ended(job: Job, state: str, now: datetime) -> None:
    """A job ends (an `on_end` hook): its dates that live on the subject pass to the
    subject's steward, else stay with their owner; a steward job's own dates go back. Only a
    steward job keeps dates (`pass_to` is given one), and a job's service stays what its
    pinned version says, so only a steward job's are read; the successor is looked for only
    when a date passes, and only if one of the brand's versions has a steward service
    (issue 32: three reads of every job's end, of which the tax practice needs one)."""
    why = f"job {job.pk} {state}"
    kept = list(Clock.objects.filter(brand_id=job.brand_id, steward=job).select_related(
        "brand", "test_clock").order_by("opened", "id")) if is_steward(job) else []
    own = OWN_LIVE(brand=job.brand_id, job=job.pk)
    for clock in own:  # the job's brand and test clock, in hand
        clock.brand, clock.test_clock = job.brand, job.test_clock
    if not kept and not own:
        return
    successor = steward_of(job.subject, but=job) if _has_stewards(job.brand_id) else None
    pass_to([*kept, *own], successor, now, why=why)


# A job's clocks that live on the subject with a date still open: what passes on as it ends,
# compiled once.
OWN_LIVE = compiled.Read(lambda brand, job: _live(Clock.objects.filter(
    brand_id=brand, job_id=job, lives_on_subject=True)).order_by("name"), model=Clock)


def _has_stewards(brand_id: str) -> bool:
    """Whether any version of the brand's manifest has a steward service (its versions read
    once a firing batch or an order, `basis.bundles_of`): every job is of one of them."""
    return any(spec.steward for bundle in bundles_of(brand_id)
               for spec in services_of(bundle).values())


def steward_service(subject: Subject) -> ServiceSpec | None:
    """The steward service of the brand's current manifest for the subject's kind, or None."""
    version = current(subject.brand)
    if version is None:
        return None
    return next((spec for spec in services_of(version.bundle).values() if spec.steward
                 and spec.subject_kind in ("", subject.kind)), None)


@dataclass(frozen=True)
class Between:
    """A date that lives on the subject after its job ended, and who keeps it."""

    clock: Clock
    due: date  # its next open date
    kept_by: str  # "steward" or "owner"
    keeper: str  # the steward's keeper by name ("" when its owner keeps it)
    service: str  # the steward service ("" when its owner keeps it)


def between_jobs(subject: Subject) -> list[Between]:
    """The subject's dates between jobs (those with a date still open), soonest first."""
    soonest = Occurrence.objects.filter(clock=OuterRef("pk"), status=Occurrence.Status.OPEN)
    rows = Clock.objects.filter(
        brand_id=subject.brand_id, subject=subject, lives_on_subject=True).exclude(
        job__state=Job.State.OPEN).annotate(
        next_due=Subquery(soonest.order_by("due").values("due")[:1])).filter(
        next_due__isnull=False).select_related("steward", "keeper__user", "brand__owner")
    return [Between(row, row.next_due, "steward" if row.steward_id else "owner",
                    _keeper_named(row) if row.steward_id else "",
                    row.steward.service if row.steward_id else "")
            for row in rows.order_by("next_due", "name")]


def _keeper_named(clock: Clock) -> str:
    """Who keeps a date a steward keeps, by name: its keeper, else the brand's owner."""
    if clock.keeper_id is not None:
        return clock.keeper.name
    owner = clock.brand.owner
    return (owner.get_full_name() or owner.get_username()) if owner else clock.brand.name
