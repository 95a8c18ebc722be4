"""A job's dates as a firing batch read them, kept through what cannot have changed them (issue
32: a return's three `run` rungs fire together on 12 April, and each read the job's dates again,
as each ask between read its own date again, because the rung before had moved one of them).

    dates_stand(value, record) -> bool     `firing.STANDING`'s rule for "occurrence", "movable"
    read_movable(batch, jobs)              the dates the batch's `run` rungs may move, one read
    movable(job) -> dates, or None         the dates a step may move, as the batch keeps them
    movable_now(job_id) -> dates, or None  the same, left kept (what a deadline follows)
    keep_movable(job, dates, days, since)  and kept again, as read at `since`

A record of the job that does not tell leaves a date as read when it is a step's commit (what
its effects change is on the record as their own), a deadline's move (no date moves with it),
or a date's move that the date as read already shows: moved through that very row (a step's
moves are made through the rows it reads), not another (a date that follows it, read on its own
by `following`), so its day is already the new one. Every other record forgets it.

The dates a step may move are read in their model's order (day, clock, item, seq); kept, they
are put in order again by their day, which a move changes, the rest kept as read. Where two now
share a day but did not when read, the read's order between them is not the database's: they
are read again.
"""

from __future__ import annotations

from itertools import pairwise

from timekeeping.basics import compiled
from timekeeping.models import Job, Occurrence
from timekeeping.timers import in_progress, records

MOVABLE = "movable"  # what a batch keeps a job's movable dates as
STAND = frozenset({"step.committed", "deadline.moved"})


def dates_stand(value: object, record: records.Entry) -> bool:
    """Whether `record` (of the job, not one that tells) leaves `value` as read: a date, or
    a job's movable dates with their days when read (the module's docstring)."""
    if record.kind in STAND:
        return True
    data = record.data
    if record.kind != "clock.moved" or data.get("to") is None or data.get("to") == data.get(
            "from"):
        return False
    dates = value[0] if isinstance(value, tuple) else [value]
    for date in dates:
        if date.clock_id == data.get("clock") and date.item == data.get("item"):
            return date.due == data["to"]
    return True  # another date's move changes none of these


# The open dates no hard clock keeps of a brand's jobs, with their clocks, in their model's
# order: what `read_movable` reads for a batch, as `steps.MOVABLE` reads one job's.
OF_JOBS = compiled.Read(lambda brand, jobs: Occurrence.objects.filter(
    clock__job__brand_id=brand, clock__job_id__in=jobs, status=Occurrence.Status.OPEN,
    clock__hard=False), model=Occurrence, related=("clock",))


def read_movable(batch, jobs: list[str]) -> None:
    """The dates the steps of the batch's `jobs` may move, read in one statement and kept as
    each job's (a kind's `prepare`: a return's first `run` rung read its job's, issue 32). A
    job with none keeps none to move."""
    if not jobs:
        return
    found: dict[str, list[Occurrence]] = {job: [] for job in jobs}
    for date in OF_JOBS(brand=batch.brand.pk, jobs=jobs):
        found[date.clock.job_id].append(date)  # each job's in the read's order
    since = batch.mark()
    for job, dates in found.items():
        batch.keep_read(MOVABLE, job, (dates, {date.pk: date.due for date in dates}),
                        job=job, since=since)


def movable(job: Job) -> list[Occurrence] | None:
    """The job's movable dates as the firing batch keeps them, in the order a read would give
    them now, or None: none kept, or kept no longer, or their order not known."""
    batch = in_progress.current()
    kept = batch.take_read(MOVABLE, job.pk) if batch is not None else None
    if kept is None:
        return None
    dates, days = kept  # in the order of `days`, their days when put in that order
    ordered = sorted(dates, key=lambda date: date.due)  # stable: ties keep that order
    for one, other in pairwise(ordered):
        if one.due == other.due and days[one.pk] != days[other.pk]:
            return None
    return ordered


def movable_now(job_id: str) -> list[Occurrence] | None:
    """The job's movable dates as the firing batch keeps them, as they stand now, in no
    order, left kept for the step that takes them; or None, as `movable`."""
    batch = in_progress.current()
    kept = batch.peek_read(MOVABLE, job_id) if batch is not None else None
    return kept[0] if kept is not None else None


def mark() -> int | None:
    """Where the firing batch's records stand (`Firing.mark`), or None outside one."""
    batch = in_progress.current()
    return batch.mark() if batch is not None else None


def keep_movable(job: Job, dates: list[Occurrence], days: dict, since: int | None) -> None:
    """Keep the job's movable dates, in the order a read gave them when their days were
    `days`, for the batch's next step of the job: as read when its records were `since`
    long (`mark`), so each move made since is asked of them when they are taken."""
    batch = in_progress.current()
    if batch is not None and since is not None:
        batch.keep_read(MOVABLE, job.pk, (dates, days), job=job.pk, since=since)
