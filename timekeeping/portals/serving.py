"""The portal's home (issue 27): what a customer's subjects need from them and what is done for
them, live subjects apart from those on a practice clock (a test clock: no list mixes them).

    home(subjects)   [World]: the live world first, then the practice one, each holding its
                     subjects' parts: what is waiting for the customer (open asks), what is in
                     progress for them (open jobs, each with its next step), what they pay
                     (`paying`), and the address of each subject's calendar feed

A home costs a fixed number of queries however many subjects, asks, jobs and plans there are:
one each for the asks, the jobs, their tasks, their grants, and the plans' (`paying.plans_of`).
The dates coming up are `rows.coming_up`'s, split here by world.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from timekeeping.attention.lists import job_name
from timekeeping.basics import shown, wallclock
from timekeeping.clocks import subject_calendar
from timekeeping.models import Ask, Grant, Job, Subject, Task
from timekeeping.portals import paying, rows
from timekeeping.portals.subscribe import Feed, feed_of

SHOWN = 50  # at most so many asks and jobs a subject shows on the home


@dataclass(frozen=True)
class At:
    """An instant as the portal shows it: how far ("in 8 days"), with the exact time in the
    subject's zone on hover."""
    iso: str
    local: str
    relative: str


def at(instant: datetime, zone: str, now: datetime) -> At:
    return At(instant.isoformat(), shown.moment(instant, zone), shown.relative(instant, now))


@dataclass(frozen=True)
class Waiting:
    ask: Ask
    needed_by: At
    yours: bool  # asked of the subject's contact (the customer), not a third party


@dataclass(frozen=True)
class InProgress:
    name: str  # "Juniper Labs' 2027 annual-return"
    next_step: str
    next_at: At | None
    allowed_until: At | None  # the permission the customer gave for it, while it runs


@dataclass
class Part:
    subject: Subject
    zone: str
    now: datetime
    feed: Feed
    waiting: list[Waiting] = field(default_factory=list)
    in_progress: list[InProgress] = field(default_factory=list)
    plans: list[paying.Plan] = field(default_factory=list)


@dataclass
class World:
    practice: bool
    parts: list[Part]
    rows: list[rows.Row]
    page: object = None  # the page of `rows` shown, set by the view

    @property
    def grouped(self) -> bool:
        return len(self.parts) > 1

    @property
    def has_waiting(self) -> bool:
        return any(part.waiting for part in self.parts)

    @property
    def has_in_progress(self) -> bool:
        return any(part.in_progress for part in self.parts)

    @property
    def has_plans(self) -> bool:
        return any(part.plans for part in self.parts)


def home(subjects: list[Subject], *, reading: str | None = None) -> list[World]:
    """The home's worlds; its times in each subject's zone, or in `reading` when the person
    chose one (`shown.reading_zone`)."""
    dated = rows.coming_up(subjects, reading=reading)
    parts = {subject.pk: _part(subject, reading) for subject in subjects}
    _asks(parts)
    _jobs(parts, dated)
    for subject_id, found in paying.plans_of(subjects).items():
        parts[subject_id].plans = found
    worlds = []
    for practice in (False, True):
        mine = [part for part in parts.values() if bool(part.subject.test_clock_id) == practice]
        if mine or not practice:
            worlds.append(World(practice, mine, [
                row for row in dated if bool(row.line.subject.test_clock_id) == practice]))
    return worlds


def _part(subject: Subject, reading: str | None) -> Part:
    """A subject's part, read in its own world: its test clock's time, else the real one."""
    now = wallclock.now(brand=subject.brand, test_clock=subject.test_clock)
    return Part(subject, reading or subject_calendar.zone_of_subject(subject), now,
                feed_of(subject))


def _asks(parts: dict[str, Part]) -> None:
    for ask in Ask.objects.filter(
            brand_id__in={part.subject.brand_id for part in parts.values()},
            subject_id__in=list(parts), state=Ask.State.OPEN).order_by("expires"):
        part = parts[ask.subject_id]
        if len(part.waiting) < SHOWN:
            contact = part.subject.contact_email.lower()
            part.waiting.append(Waiting(ask, at(ask.expires, part.zone, part.now),
                                        yours=not ask.email or ask.email.lower() == contact))


def _jobs(parts: dict[str, Part], dated: list[rows.Row]) -> None:
    """Each open job with its next step: what it waits for from the customer (an open ask),
    else its soonest open date, else the work a member has open on it."""
    jobs = list(Job.objects.filter(
        brand_id__in={part.subject.brand_id for part in parts.values()},
        subject_id__in=list(parts), state=Job.State.OPEN).order_by("opened")[:SHOWN * len(parts)])
    if not jobs:
        return
    tasks: dict[str, Task] = {}
    brands = {job.brand_id for job in jobs}  # each read by its brand (docs/security.md)
    for task in Task.objects.filter(brand_id__in=brands, job__in=jobs,
                                    state__in=[Task.State.OPEN, Task.State.HELD]
                                    ).order_by("-opened"):
        tasks[task.job_id] = task  # the oldest open task wins
    grants = {grant.job_id: grant for grant in Grant.objects.filter(
        brand_id__in=brands, job__in=jobs, state=Grant.State.ACTIVE)}
    asked = {waiting.ask.job_id: waiting for part in parts.values() for waiting in part.waiting}
    dates: dict[str, rows.Row] = {}
    for row in sorted(dated, key=lambda row: row.occurrence.late_from):
        dates.setdefault(row.line.clock.job_id, row)
    for job in jobs:
        part = parts[job.subject_id]
        job.subject = part.subject
        grant = grants.get(job.pk)
        step, when = _next_step(job, asked.get(job.pk), dates.get(job.pk), tasks.get(job.pk),
                                part)
        part.in_progress.append(InProgress(
            job_name(job), step, when,
            at(grant.ends, part.zone, part.now) if grant else None))


def _next_step(job: Job, waiting: Waiting | None, row: rows.Row | None, task: Task | None,
               part: Part) -> tuple[str, At | None]:
    if waiting is not None:
        return f"We need {waiting.ask.title} from {waiting.ask.party}", waiting.needed_by
    if row is not None:
        return f"Next date: {row.line.what}, due {shown.day(row.occurrence.due)}", at(
            row.occurrence.late_from, part.zone, part.now)
    if task is not None:
        return (f"{part.subject.brand.name} is working on {task.title}",
                at(task.due, part.zone, part.now) if task.due else None)
    return f"{part.subject.brand.name} is working on it; nothing is needed from you", None
