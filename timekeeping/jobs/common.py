"""What every kind of a job's own time shares: the job's zone and now, its spec, its timers,
its records and who hears them."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from timekeeping import clocks
from timekeeping.basics import compiled, shown
from timekeeping.models import Ask, Job, Subject, Timer
from timekeeping.specs.current import services_of
from timekeeping.specs.jobs import WorkSpec
from timekeeping.timers import arming, gathered, in_progress, outbox, records
from timekeeping.timers.firing import Firing, now_for

# What a firing of an ask, a deadline or a task reads with its row: its job, the brand and its
# owner (who hears), the subject and the job's test clock.
FIRED_WITH = ("job__brand__owner", "job__subject", "job__test_clock")


def fired_row(model, *more: str) -> compiled.Read:
    """How a firing of an ask, a deadline or a task reads its row, locked: with `FIRED_WITH`
    and `more`, in one statement compiled once and prepared (issue 32: the six-table read
    planned each firing). `.get(pk=…)` it."""
    return compiled.Read(
        lambda pk: model.objects.select_for_update(of=("self",)).filter(pk=pk), model=model,
        related=compiled.reached(*FIRED_WITH, *more), prepared=True)


def keep_fired(firing: Firing, model, name: str, timers: list[Timer], *more: str) -> None:
    """A kind's `prepare`: the rows its timers of the batch name (`payload[name]`), read and
    locked in one statement as `fired_row` reads one (in the order of their ids), each kept
    for its handler under `name` until a record of its job is made (`Firing.take_read`): a
    batch of a thousand asks' expiries read them one a timer (issue 32)."""
    pks = sorted({pk for timer in timers if isinstance(pk := timer.payload.get(name), str)})
    if not pks:
        return
    for row in model.objects.select_for_update(of=("self",)).select_related(
            *FIRED_WITH, *more).filter(pk__in=pks).order_by("pk"):
        firing.keep_read(name, row.pk, row, job=row.job_id)


def work_of(job: Job) -> WorkSpec:
    """The Service's own time as the job's manifest version wrote it (S24: pinned)."""
    return services_of(job.bundle)[job.service].work


def zone_of(job: Job) -> str:
    """The zone a job's days are counted in: its subject's calendar's."""
    return clocks.calendar_for(job.subject).zone_name


def now_of(job: Job) -> datetime:
    return now_for(job.brand, job.test_clock)


def now_for_subject(subject: Subject) -> datetime:
    return now_for(subject.brand, subject.test_clock)


def made_here(job: Job, what: str) -> list | None:
    """The asks, deadlines or tasks (`what`) of a job made in the operation that is opening
    it (an order, gathering its writes): all it holds was made there too, so they are known
    without a read (issue 32). None for a job made before, whose are read."""
    gathering = gathered.current()
    if gathering is None or not gathering.holds(job.pk):
        return None
    return gathering.made.setdefault((what, job.pk), [])


# Under what a firing batch keeps the steps of a job it read as started (`lifecycle._started`),
# with the job's id: kept current by `note_made`.
STEPS_STARTED = "steps started"


def note_made(job: Job, what: str, row) -> None:
    """`row`, an ask, deadline or task just made for the job: kept for `made_here`, and its
    step added to the job's steps started, if the batch read them (`lifecycle._started`)."""
    found = made_here(job, what)
    if found is not None:
        found.append(row)
    started = in_progress.known(job.brand_id, (STEPS_STARTED, job.pk))
    if started is not None and starts_step(what, row):
        started.add(row.step)


def starts_step(what: str, row) -> bool:
    """Whether the row makes its step started, as `lifecycle.STARTED` reads them: an ask for
    a step, any task, a deadline of a step."""
    if what == "ask":
        return row.purpose == Ask.Purpose.STEP
    return what == "task" or bool(row.step)


def arm(job: Job, kind: str, key: str, owed: datetime, payload: dict, *,
        held_by: str = "") -> Timer:
    return arming.arm(brand=job.brand, test_clock=job.test_clock, kind=kind, key=key,
                      owed=owed, owner_type="job", owner_id=job.pk, owner_opened=job.opened,
                      bundle=job.bundle, payload=payload, held_by=held_by)


def rearm(job: Job, kind: str, key: str, owed: datetime, payload: dict, *, why: str) -> Timer:
    """Arm `key` anew for `owed`: a live timer under it (armed or held) is superseded."""
    return arming.rearm(brand=job.brand, test_clock=job.test_clock, kind=kind, key=key,
                        owed=owed, why=why, owner_type="job", owner_id=job.pk,
                        owner_opened=job.opened, bundle=job.bundle, payload=payload)


def rearm_keys(job: Job, kind: str, wanted: dict[str, tuple[datetime, dict]], *,
               why: str) -> None:
    """`rearm` for several keys of the job at once (`arming.rearm_keys`)."""
    arming.rearm_keys(brand=job.brand, test_clock=job.test_clock, kind=kind, wanted=wanted,
                      why=why, owner_type="job", owner_id=job.pk, owner_opened=job.opened,
                      bundle=job.bundle)


def live(job: Job, key: str) -> Timer | None:
    return arming.live(job.brand, job.test_clock, key, owner_id=job.pk)


def cancel(job: Job, *keys: str, why: str) -> None:
    arming.end_keys(job.brand, job.test_clock, list(keys), state=Timer.State.CANCELLED,
                    by=why, owner_id=job.pk)


def record(job: Job, kind: str, data: dict, *, at: datetime | None = None) -> None:
    records.write(kind, brand=job.brand, instant=at or now_of(job), test_clock=job.test_clock,
                  subject=job.subject_id, job=job.pk, data=data)


def tell(job: Job, to: str, subject: str, body: str, *, key: str, link: str = "") -> None:
    """Email someone about the job (`outbox.tell`: on a test clock, the brand's owner only)."""
    outbox.tell(brand=job.brand, test_clock_id=job.test_clock_id, to=[to], subject=subject,
                body=f"{body}\n\n{link}\n" if link else body,
                key=f"{job.pk}:{key}:{now_of(job).isoformat()}")


def owner_email(job: Job) -> str:
    return job.brand.owner.email if job.brand.owner else ""


def console_link(job: Job) -> str:
    return f"{settings.SITE_URL}/console/{job.brand_id}/subjects/{job.subject_id}/"


def at(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%d %H:%MZ")


def said_at(job: Job, instant: datetime) -> str:
    """An instant in an email, in the job's zone: "Tue 18 Apr 2028, 09:00 EDT"."""
    return shown.moment(instant, zone_of(job))


def named(job: Job) -> str:
    """A job as its emails name it: "Juniper Labs' 2027 annual return"."""
    owner = job.subject.name
    mark = "'" if owner.endswith("s") else "'s"
    period = f"{job.period} " if job.period else ""
    return f"{owner}{mark} {period}{job.service.replace('-', ' ')}"


def portal_link(job: Job) -> str:
    return f"{settings.SITE_URL}/portal/subjects/{job.subject_id}/"
