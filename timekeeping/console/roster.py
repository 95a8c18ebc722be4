"""The console's list of a brand's subjects (S25, issue 27): per subject its next date, how many
of its dates are at risk and what they put at stake (per currency, never added across
currencies), its open jobs and who answers for it. Sorted, filtered and paged from the
address, so the list works without JavaScript.

    Roster(brand, world=None, now=…, ask=Ask(...))   the subjects, filtered and sorted
    roster.page(number)                              one page of Rows

One world at a time: live subjects by default, a test clock's only when it is named (a test
world never mixes into live counts or totals). A page costs a fixed number of queries however
many subjects there are: the counts and the sort keys are subqueries the database answers in
the page's one query, as is each next date; the totals, the jobs and the people answering for
the page's subjects take one query each.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.core.paginator import Page, Paginator
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery, Sum, Value
from django.db.models.functions import Coalesce

from timekeeping.basics import shown
from timekeeping.clocks import dates
from timekeeping.models import Brand, Job, Occurrence, Subject, TestClock

PER_PAGE = 50
JOBS_NAMED = 3  # open jobs named on the row; more are counted
SORTS = {"name": "name", "next": "next date", "risk": "most at stake"}
STATUSES = {"risk": "has dates at risk", "late": "has late dates", "missed": "has missed dates"}
UNKEPT = (Occurrence.Status.OPEN, Occurrence.Status.LAPSED)


@dataclass(frozen=True)
class Ask:
    """What the address asks for; anything it does not know reads as the default."""

    q: str = ""
    kind: str = ""
    status: str = ""
    owner: str = ""  # a member's id, "nobody", or "" for anyone
    sort: str = "name"

    @classmethod
    def of(cls, get) -> Ask:
        status, sort = get.get("status", ""), get.get("sort", "name")
        return cls(q=get.get("q", "").strip()[:200], kind=get.get("kind", "")[:64],
                   status=status if status in STATUSES else "",
                   owner=get.get("owner", "")[:64], sort=sort if sort in SORTS else "name")


@dataclass
class Row:
    """One subject as the list shows it."""

    subject: Subject
    at_risk: int = 0
    late: int = 0
    missed: int = 0
    stakes: dict[str, int] = field(default_factory=dict)  # currency -> minor units a month
    open_jobs: int = 0
    jobs: list[str] = field(default_factory=list)  # named when there are few
    people: list[str] = field(default_factory=list)  # members its open dates are assigned to

    @property
    def stake_text(self) -> str:
        return shown.moneys(self.stakes)

    @property
    def next_due(self) -> datetime | None:
        return self.subject.next_due

    @property
    def next_hard(self) -> bool:
        return bool(self.subject.next_hard)

    @property
    def next_what(self) -> str:
        item = self.subject.next_item
        return (self.subject.next_title or "") + (f", {item}" if item else "")


class Roster:
    def __init__(self, brand: Brand, *, now: datetime, world: TestClock | None, ask: Ask):
        self.brand, self.world, self.ask = brand, world, ask
        self.now = world.frozen_time if world is not None else now
        self.found = self._sorted(self._filtered(self._annotated()))

    def _dates(self, scope: Q):
        """The subject's unkept dates (for a subquery on the subject's row)."""
        return Occurrence.objects.filter(brand=self.brand, clock__subject=OuterRef("pk"),
                                         status__in=UNKEPT).filter(scope).order_by()

    def _count(self, scope: Q):
        counted = self._dates(scope).values("clock__subject").annotate(n=Count("pk"))
        return Coalesce(Subquery(counted.values("n")[:1]), Value(0),
                        output_field=IntegerField())

    def _annotated(self):
        ahead = self._dates(Q(status=Occurrence.Status.OPEN, late_from__gt=self.now)).order_by(
            "late_from", "clock__title", "item", "pk")  # ties read the same on every database
        # The sort by what is at stake never adds two currencies: a subject is placed by its
        # first currency (by code) and what its dates at risk put at stake in that one.
        priced = self._dates(_at_risk(self.now) & Q(miss_cost__gt=0))
        currency = priced.order_by("miss_currency").values("miss_currency")[:1]
        staked = priced.filter(miss_currency=OuterRef("stake_currency")).values(
            "clock__subject").annotate(total=Sum("miss_cost"))
        open_jobs = Job.objects.filter(brand=self.brand, subject=OuterRef("pk"),
                                       state=Job.State.OPEN).order_by().values(
            "subject").annotate(n=Count("pk"))
        return Subject.objects.filter(brand=self.brand, test_clock=self.world).annotate(
            stake_currency=Subquery(currency)).annotate(
            at_risk=self._count(_at_risk(self.now)),
            late=self._count(Q(status=Occurrence.Status.OPEN, late_from__lte=self.now)),
            missed=self._count(Q(status=Occurrence.Status.LAPSED)),
            next_due=Subquery(ahead.values("late_from")[:1]),
            next_title=Subquery(ahead.values("clock__title")[:1]),
            next_item=Subquery(ahead.values("item")[:1]),
            next_hard=Subquery(ahead.values("hard")[:1]),
            # Sort keys only, never shown: the totals on the page are per currency.
            staked=Coalesce(Subquery(staked.values("total")[:1]), Value(0)),
            open_jobs=Coalesce(Subquery(open_jobs.values("n")[:1]), Value(0),
                               output_field=IntegerField()))

    def _filtered(self, found):
        ask = self.ask
        if ask.q:
            found = found.filter(Q(name__icontains=ask.q) | Q(key__icontains=ask.q))
        if ask.kind:
            found = found.filter(kind=ask.kind)
        if ask.status:
            found = found.filter(**{{"risk": "at_risk", "late": "late",
                                     "missed": "missed"}[ask.status] + "__gt": 0})
        if ask.owner == "nobody":
            found = found.exclude(Exists(self._dates(Q(assignee__isnull=False))))
        elif ask.owner:
            found = found.filter(Exists(self._dates(Q(assignee_id=ask.owner))))
        return found

    def _sorted(self, found):
        if self.ask.sort == "next":
            return found.order_by(F("next_due").asc(nulls_last=True), "name", "pk")
        if self.ask.sort == "risk":
            return found.order_by(F("stake_currency").asc(nulls_last=True), F("staked").desc(),
                                  "-at_risk", "name", "pk")
        return found.order_by("name", "pk")

    def page(self, number: str | None) -> tuple[Page, list[Row]]:
        page = Paginator(self.found, PER_PAGE).get_page(number)
        rows = {subject.pk: Row(subject, at_risk=subject.at_risk, late=subject.late,
                                missed=subject.missed, open_jobs=subject.open_jobs)
                for subject in page}
        if rows:
            self._attach(rows)
        return page, list(rows.values())

    def _attach(self, rows: dict[str, Row]) -> None:
        """The page's totals, open jobs and people: one query each, whatever the page holds."""
        mine = Occurrence.objects.filter(brand=self.brand, clock__subject__in=list(rows),
                                         status__in=UNKEPT).order_by()
        for each in mine.filter(_at_risk(self.now), miss_cost__gt=0).values(
                "clock__subject", "miss_currency").annotate(total=Sum("miss_cost")):
            if each["miss_currency"]:  # a priced date always names its currency
                rows[each["clock__subject"]].stakes[each["miss_currency"]] = each["total"]
        for job in Job.objects.filter(brand=self.brand, subject__in=list(rows),
                                      state=Job.State.OPEN).order_by("opened", "pk").only(
                "subject_id", "service", "period"):
            if rows[job.subject_id].open_jobs <= JOBS_NAMED:
                rows[job.subject_id].jobs.append(
                    f"{shown.service(job.service)} {job.period}".strip())
        for each in mine.filter(assignee__isnull=False).values(
                "clock__subject", "assignee__user__first_name", "assignee__user__last_name",
                "assignee__user__username").distinct():
            name = (f"{each['assignee__user__first_name']} "
                    f"{each['assignee__user__last_name']}").strip()
            said = name or each["assignee__user__username"]
            people = rows[each["clock__subject"]].people
            if said not in people:
                people.append(said)
                people.sort()


def _at_risk(now: datetime) -> Q:
    """At risk as the home's list says it (timekeeping.clocks.dates): missed, late or near, or a
    fixed date ahead."""
    return (Q(status=Occurrence.Status.LAPSED) | Q(hard=True)
            | Q(late_from__lte=now + dates.NEAR))
