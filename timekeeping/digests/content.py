"""What one digest says (issue 27, WORDS.md), for the person it goes to, in its zone.

    owner_content(digest, now=, since=)    the brand's live dates at risk, with a total per
                                           currency, and what changed since `since`
    member_content(digest, now=, since=)   the live dates assigned to the person and the
                                           brand's open tasks (theirs and the pool's)
    content_of(digest, now=, since=)       the one of the two the person's role at the brand
                                           calls for (its owner: the brand's; else theirs)
    render(content)                        (subject line, text, HTML)

Live dates only: a test clock's world is a rehearsal and stays out of every digest. Each part
costs a fixed number of queries, however many dates, tasks and records there are: at most
LIMIT of each are named, and the rest counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db.models import Q
from django.template.loader import render_to_string
from django.urls import reverse

from timekeeping.basics import shown
from timekeeping.clocks import dates, exposure, history, spec_of
from timekeeping.digests.choose import zone_of
from timekeeping.digests.tokens import unsubscribe_url
from timekeeping.models import Digest, Member, Occurrence, Record, Subject, Task

LIMIT = 25
# What changed, as the digest tells it: dates done, missed and moved, jobs opened and ended.
CHANGES = ("clock.satisfied", "clock.lapsed", "clock.lapse_withdrawn", "clock.moved",
           "clock.rolled", "job.opened",
           "schedule.minted", "job.ended", "job.cancelled")


@dataclass
class Line:
    """One date or task, named as people name it."""

    subject: str
    what: str
    when: str  # "Tue 18 Apr 2028, in 9 days" / "… 2 days late"
    state: str  # missed, late, soon, ahead; a task: open, yours, late
    cost: str = ""


@dataclass
class Content:
    brand: str
    person: str
    period: str  # "daily" or "weekly"
    zone: str  # "London time"
    as_of: str  # "Mon 27 Mar 2028, 07:00 BST"
    owner: bool
    dates: list[Line] = field(default_factory=list)
    dates_more: int = 0
    totals: list[str] = field(default_factory=list)  # "$1,944 a month at risk across 6 dates"
    changes: list[tuple[str, str]] = field(default_factory=list)  # (when, sentence)
    changes_more: int = 0
    since: str = ""
    tasks: list[Line] = field(default_factory=list)
    tasks_more: int = 0
    link: str = ""
    unsubscribe: str = ""

    @property
    def empty(self) -> bool:
        return not (self.dates or self.changes or self.tasks)


def _base(digest: Digest, now: datetime, owner: bool, link: str) -> Content:
    zone = zone_of(digest)
    return Content(brand=digest.brand.name, person=shown.person(digest.user),
                   period=digest.period, zone=shown.zone_name(zone),
                   as_of=shown.moment(now, zone), owner=owner,
                   link=settings.SITE_URL + link, unsubscribe=unsubscribe_url(digest.pk))


def _date_line(line: dates.DateLine) -> Line:
    when = f"{shown.day(line.occurrence.due)}, {line.when}"
    return Line(line.subject.name, line.what, when, line.state_said, line.cost)


def owner_content(digest: Digest, *, now: datetime, since: datetime) -> Content:
    brand = digest.brand
    found = _base(digest, now, True, reverse("console:home", args=[brand.pk]))
    risk = dates.AtRisk(brand)  # live dates only: a test world is a rehearsal (issue 27)
    lines = risk[:LIMIT + 1]
    found.dates = [_date_line(line) for line in lines[:LIMIT]]
    count = risk.count() if len(lines) > LIMIT else len(lines)
    found.dates_more = count - len(found.dates)
    found.totals = [risk.totals().said] if count else []
    found.changes, found.changes_more = _changes(digest, now, since)
    found.since = shown.moment(since, zone_of(digest))
    return found


def _changes(digest: Digest, now: datetime, since: datetime) -> tuple[list, int]:
    """What changed on the brand's live dates and jobs in (since, now], newest first: the
    history's sentences, each with its subject's name (two queries)."""
    records = list(Record.objects.filter(
        brand=digest.brand, test_clock__isnull=True, kind__in=CHANGES, instant__gt=since,
        instant__lte=now).order_by("-instant", "-id")[:LIMIT + 1])
    names = dict(Subject.objects.filter(
        brand=digest.brand, pk__in={record.subject for record in records} - {""})
        .values_list("pk", "name"))
    zone = zone_of(digest)
    said = []
    for record in records[:LIMIT]:
        text = history.say(record) or ""
        subject = names.get(record.subject)
        said.append((shown.moment(record.instant, zone),
                     f"{subject}: {text}" if subject else text))
    return said, max(0, len(records) - LIMIT)


def member_content(digest: Digest, *, now: datetime, since: datetime) -> Content:
    brand = digest.brand
    found = _base(digest, now, False, reverse("delivery:home"))
    member = Member.objects.filter(brand=brand, user=digest.user).first()
    if member is None:
        return found
    assigned = list(Occurrence.objects.filter(
        brand=brand, assignee=member, test_clock__isnull=True,
        status__in=[Occurrence.Status.OPEN, Occurrence.Status.LAPSED]).select_related(
        "clock__subject", "clock__job", "clock__brand", "assignee__user").order_by(
        "late_from", "pk")[:LIMIT + 1])
    found.dates = [_date_line(dates.DateLine(occurrence, spec_of(occurrence.clock), now,
                                             exposure.price(spec_of(occurrence.clock).exposure)))
                   for occurrence in assigned[:LIMIT]]
    found.dates_more = max(0, len(assigned) - LIMIT)
    found.tasks, found.tasks_more = _tasks(member, now, zone_of(digest))
    return found


def _tasks(member: Member, now: datetime, zone: str) -> tuple[list[Line], int]:
    """The brand's live tasks the person may work on: those they hold, and the pool's open
    ones, late first then soonest (one query)."""
    tasks = list(Task.objects.filter(
        Q(state=Task.State.OPEN) | Q(state=Task.State.HELD, holder=member),
        brand_id=member.brand_id, test_clock__isnull=True).select_related("subject").order_by(
        "due", "opened", "pk")[:LIMIT + 1])
    lines = []
    for task in tasks[:LIMIT]:
        late = task.due is not None and task.due <= now
        when = (f"{shown.moment(task.due, zone)}, {shown.relative(task.due, now)}"
                if task.due else "no deadline")
        state = "late" if late else ("yours" if task.state == Task.State.HELD else "open")
        lines.append(Line(task.subject.name, task.title, when, state))
    return lines, max(0, len(tasks) - LIMIT)


def content_of(digest: Digest, *, now: datetime, since: datetime) -> Content:
    if digest.brand.role_of(digest.user) == "owner":
        return owner_content(digest, now=now, since=since)
    return member_content(digest, now=now, since=since)


def render(content: Content) -> tuple[str, str, str]:
    """The email's subject line, plain text and HTML."""
    every = "Daily" if content.period == Digest.Period.DAILY else "Weekly"
    dates_n = len(content.dates) + content.dates_more
    tasks_n = len(content.tasks) + content.tasks_more
    counted = f"{dates_n} at risk" if content.owner else f"{dates_n} dates, {tasks_n} tasks"
    subject = f"{every} digest: {counted} · {content.brand}"
    context = {"c": content, "every": every}
    return (subject, render_to_string("digests/email.txt", context),
            render_to_string("digests/email.html", context))
