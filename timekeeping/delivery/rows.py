"""A member's work as the delivery portal shows it (issue 12): the open and held tasks of their
brands, and the clock dates assigned to them, late first, then soonest, each in its subject's
zone with the zone named.

    nows(members)                   each world's now: the real clock's and each test clock's
    tasks(members, nows)            up to LIMIT task rows, and whether there are more
    dates(members, nows)            up to LIMIT rows of the dates assigned to the person
    leaving(members, user)          the subjects the person may withdraw from, with successors
    task_row(task, member)          one task's row as it stands now
    date_row(occurrence, member)    one date's row as it stands now, or None once it left

A date row the person may act on lists whom it can be assigned to: the console's choices
(`console.controls.people`: nobody, the owner by name, each member), read once for all the
person's brands.

Which rows are late is decided in the query, each world judged on its own now, so a page
reads only the rows it shows: a fixed number of queries however many tasks and dates there
are.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Case, F, Q, Value, When

from timekeeping import clocks
from timekeeping.basics import shown, wallclock
from timekeeping.clocks import exposure
from timekeeping.clocks.dates import DateLine
from timekeeping.console.controls import Person, people
from timekeeping.delivery import access
from timekeeping.models import Member, Occurrence, Subject, Task, TestClock
from timekeeping.portals.rows import Row

LIMIT = 100
LIVE_DATES = [Occurrence.Status.OPEN, Occurrence.Status.LAPSED]
LIVE_TASKS = [Task.State.OPEN, Task.State.HELD]


@dataclass
class TaskRow:
    task: Task
    zone: str  # the subject's zone: the task's due is shown in it
    now: datetime  # its world's now
    member: Member | None  # the person's membership of the task's brand

    @property
    def late(self) -> bool:
        return self.task.due is not None and self.now >= self.task.due

    @property
    def state(self) -> str:
        """late, held or open."""
        return "late" if self.late else self.task.state

    @property
    def due(self) -> str:
        return shown.moment(self.task.due, self.zone) if self.task.due else ""

    @property
    def until(self) -> str:
        return shown.moment(self.task.held_until, self.zone) if self.task.held_until else ""

    @property
    def holder(self) -> str:
        return self.task.holder.user.get_username() if self.task.holder else ""

    @property
    def can_act(self) -> bool:
        return access.may_act(self.member)

    @property
    def mine(self) -> bool:
        """Held by this person: theirs to extend, release or finish."""
        return (self.can_act and self.task.state == Task.State.HELD
                and self.task.holder_id == self.member.pk)

    @property
    def may_take(self) -> bool:
        return self.can_act and self.task.state == Task.State.OPEN

    @property
    def may_extend(self) -> bool:
        return self.mine and not self.task.extended


@dataclass
class DateRow(Row):
    """A date assigned to the person, as the portal's row shows it."""

    people: list[Person] = field(default_factory=list)  # whom it can be assigned to

    @property
    def can_act(self) -> bool:
        """The assignee is the person: their role at the date's brand says if they act."""
        return access.may_act(self.occurrence.assignee)


@dataclass
class Shown:
    rows: list
    more: bool  # there are more than LIMIT


def apart(tasks: Shown, dates: Shown, *, reading: str | None = None) -> dict:
    """The person's tasks and dates, live apart from practice (test worlds): issue 27's
    test and live never share a list. `more` stays with the live lists. With `reading` (the
    zone the person chose to read times in), every row's times are in it."""
    for row in (*tasks.rows, *dates.rows):
        row.zone = reading or row.zone
    def practice(row) -> bool:
        return bool((row.task if isinstance(row, TaskRow) else row.line.occurrence)
                    .test_clock_id)
    return {"tasks": Shown([row for row in tasks.rows if not practice(row)], tasks.more),
            "dates": Shown([row for row in dates.rows if not practice(row)], dates.more),
            "practice_tasks": [row for row in tasks.rows if practice(row)],
            "practice_dates": [row for row in dates.rows if practice(row)]}


@dataclass
class Leaving:
    """A subject the person answers for dates or holds tasks of, and who may take over."""

    subject: Subject
    successors: list[Member] = field(default_factory=list)


def nows(members: dict[str, Member]) -> dict[str | None, datetime]:
    found: dict[str | None, datetime] = {None: wallclock.wall_now()}
    for test_clock in TestClock.objects.filter(brand_id__in=list(members)).only(
            "id", "frozen_time"):
        found[test_clock.pk] = test_clock.frozen_time
    return found


def _late(instant: str, worlds: dict[str | None, datetime]) -> Q:
    """Rows whose `instant` has passed, each on its own world's now."""
    found = Q(pk__in=[])
    for world, now in worlds.items():
        found |= Q(test_clock_id=world, **{f"{instant}__lte": now})
    return found


def tasks(members: dict[str, Member], worlds: dict[str | None, datetime]) -> Shown:
    found = access.tasks_of(members).filter(state__in=LIVE_TASKS).annotate(
        late_first=Case(When(_late("due", worlds), then=Value(0)), default=Value(1))).order_by(
        "late_first", F("due").asc(nulls_last=True), "opened", "pk")
    shown = list(found[:LIMIT + 1])
    return Shown([TaskRow(task, zone_of(task.subject), worlds[task.test_clock_id],
                          members.get(task.brand_id)) for task in shown[:LIMIT]],
                 len(shown) > LIMIT)


def dates(members: dict[str, Member], worlds: dict[str | None, datetime]) -> Shown:
    late = Q(status=Occurrence.Status.LAPSED) | _late("late_from", worlds)
    found = access.dates_of(members).filter(
        assignee__in=list(members.values()), status__in=LIVE_DATES).annotate(
        late_first=Case(When(late, then=Value(0)), default=Value(1))).order_by(
        "late_first", "late_from", "pk")
    shown = list(found[:LIMIT + 1])
    assignable = people([member.brand for member in members.values()
                         if access.may_act(member)])
    return Shown([_row(occurrence, worlds[occurrence.test_clock_id], assignable)
                  for occurrence in shown[:LIMIT]], len(shown) > LIMIT)


def leaving(members: dict[str, Member], user) -> list[Leaving]:
    """The subjects where the person, at a brand they act at, answers for an open date or
    holds a task; each with the brand's other owners and managers to hand them to."""
    mine = [member for member in members.values() if access.may_act(member)]
    # The person's brands, named in each query: a database sharded by brand asks theirs only.
    brands = {member.brand_id for member in mine}
    answering = Occurrence.objects.filter(brand__in=brands, assignee__in=mine,
                                          status__in=LIVE_DATES).values("clock__subject_id")
    holding = Task.objects.filter(brand__in=brands, holder__in=mine,
                                  state=Task.State.HELD).values("subject_id")
    subjects = list(Subject.objects.filter(Q(pk__in=answering) | Q(pk__in=holding),
                                           brand__in=brands)
                    .select_related("brand").order_by("name", "pk")[:LIMIT])
    found = {subject.pk: Leaving(subject) for subject in subjects}
    successors = Member.objects.filter(
        brand_id__in={subject.brand_id for subject in subjects}, role__in=access.ACTS).exclude(
        user=user).select_related("user").order_by("user__username")
    by_brand: dict[str, list[Member]] = {}
    for successor in successors:
        by_brand.setdefault(successor.brand_id, []).append(successor)
    for each in found.values():
        each.successors = by_brand.get(each.subject.brand_id, [])
    return list(found.values())


def task_row(task: Task, member: Member | None) -> TaskRow | None:
    if task.state not in LIVE_TASKS:
        return None
    return TaskRow(task, zone_of(task.subject), wallclock.now(test_clock=task.test_clock), member)


def date_row(occurrence: Occurrence, member: Member) -> DateRow | None:
    """The date's row, while it is open or lapsed and still assigned to the person."""
    if occurrence.status not in LIVE_DATES or occurrence.assignee_id != member.pk:
        return None
    brand = occurrence.clock.brand
    return _row(occurrence, wallclock.now(test_clock=occurrence.clock.test_clock),
                people([brand]) if access.may_act(member) else {})


def _row(occurrence: Occurrence, now: datetime, assignable: dict[str, list[Person]]) -> DateRow:
    spec = clocks.spec_of(occurrence.clock)
    line = DateLine(occurrence, spec, now, exposure.price(spec.exposure))
    return DateRow(line, zone_of(occurrence.clock.subject),
                   assignable.get(occurrence.brand_id, []))


def zone_of(subject: Subject) -> str:
    return clocks.calendar_for(subject).zone_name
