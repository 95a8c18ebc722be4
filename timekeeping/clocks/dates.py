"""Open dates as people see them (S25): what is at risk for a brand's console, and what is
coming up for a customer's portal, each with what a miss costs and why it stands where it
stands.

    at_risk(brands, world=None)    every open date near (14 days) or passed and unsatisfied,
                                   and every hard date ahead, live or in one test world;
                                   priced ones first, by currency and within one by
                                   what a month late costs, then the rest by nearness
    coming_up(subjects)            a customer's dates ahead, late and lapsed ones first, then
                                   soonest first

Each date is judged on its own world's clock (a subject made on a test clock lives in that
clock's world). A page of these costs a fixed number of queries, however many there are:
the dates with their clocks, subjects, jobs and assignees in one, the rungs that rang in one,
and each world's time in one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Count, Q, Sum

from timekeeping.basics import shown, wallclock
from timekeeping.clocks import exposure
from timekeeping.clocks.rungs import spec_of
from timekeeping.clocks.telling import member_owner
from timekeeping.models import Brand, Occurrence, Subject, TestClock, Timer
from timekeeping.specs.services import ClockSpec

NEAR = timedelta(days=14)
# Dates at risk: by currency, then the dearest miss in it, then the nearest (the
# `occurrence_risk` index's order). Unpriced dates (cost 0, no currency) are read apart.
ORDER = ("miss_currency", "-miss_cost", "late_from", "pk")


@dataclass
class DateLine:
    """One open date: what it is, when, what a miss costs, why it is listed, who acts."""

    occurrence: Occurrence
    spec: ClockSpec
    now: datetime  # its world's now
    price: exposure.Price | None
    rang: Timer | None = None  # the last rung that rang
    reasons: list[str] = field(default_factory=list)

    @property
    def clock(self):
        return self.occurrence.clock

    @property
    def subject(self) -> Subject:
        return self.occurrence.clock.subject

    @property
    def what(self) -> str:
        item = self.occurrence.item
        return self.clock.title + (f", {item}" if item else "")

    @property
    def late(self) -> bool:
        return self.now >= self.occurrence.late_from

    @property
    def state(self) -> str:
        """lapsed, late, near or ahead (the engine's words: the API's and the filters')."""
        if self.occurrence.status == Occurrence.Status.LAPSED:
            return "lapsed"
        if self.late:
            return "late"
        return "near" if self.occurrence.late_from - self.now <= NEAR else "ahead"

    @property
    def state_said(self) -> str:
        """The state as people say it (WORDS.md): missed, late, soon, ahead."""
        return STATES_SAID[self.state]

    @property
    def when(self) -> str:
        """Relative to its world's now: "in 3 days", "2 hours late"."""
        gap = self.occurrence.late_from - self.now
        if gap > timedelta(0):
            return f"in {shown.span(gap)}"
        return f"{shown.span(-gap)} late"

    @property
    def cost(self) -> str:
        if self.price is None:
            return ""
        text = self.price.text
        if self.late:
            spent = self.price.so_far(self.occurrence.late_from, self.now)
            text += f"; {shown.money(spent, self.price.currency, short=True)} so far"
        return text

    @property
    def breakdown(self) -> list[str]:
        """Where the figure comes from, in sentences (issue 27): the rule that prices a miss,
        what it has cost so far when late, and the promise that covers penalties, if any."""
        if self.price is None:
            return []
        said = [exposure.rule_text(self.price, self.clock.title)]
        if self.late:
            spent = self.price.so_far(self.occurrence.late_from, self.now)
            days = (self.now - self.occurrence.late_from).days + 1
            said.append(f"It has been late since {shown.day(self.occurrence.late_from.date())}"
                        f" ({days} day{'s' if days != 1 else ''}): "
                        f"{shown.money(spent, self.price.currency, short=True)} so far.")
        promise = exposure.guarantee_text(self.spec.guarantee)
        if promise:
            said.append(promise)
        return said

    @property
    def assignee_name(self) -> str:
        assignee = self.occurrence.assignee
        return shown.person(assignee.user) if assignee else ""

    @property
    def owner(self) -> str:
        """Who answers for the date, by name: the member it is assigned to or whose own date it
        is, else the brand (the brand's own dates and those it keeps of record), else the
        customer."""
        if self.assignee_name:
            return self.assignee_name
        member = member_owner(self.clock)  # a member's own date, while they are one
        if member is not None:
            return member.name
        if self.clock.owner == "buyer":
            return self.subject.owner_name or "the customer"
        return self.clock.brand.name

    @property
    def yours(self) -> bool:
        """The customer answers for it (the clock's owner is the buyer)."""
        return self.clock.owner == "buyer"

    @property
    def choices(self) -> tuple[str, ...]:
        return self.spec.choices

    @property
    def about(self) -> str:
        """The sum the date is about (its clock's `about`): "$13,800 of US credit from 2026"."""
        return exposure.about_text(self.spec.about, {**self.subject.input,
                                                     **self.clock.job.input})

    @property
    def why(self) -> str:
        """Why it is listed, for the brand's people: what was sent, what is awaited, who
        answers for it (WORDS.md: no rung names, step codes or roles)."""
        parts = list(self.reasons)
        if self.rang is not None:
            parts.append(f"reminder sent {shown.day(self.rang.fired.date())}")
        if self.spec.satisfied_by:
            steps = " or ".join(step.replace("_", " ") for step in self.spec.satisfied_by)
            parts.append(f"done once '{steps}' is recorded")
        if self.occurrence.acknowledged:
            parts.append(f"acknowledged {shown.day(self.occurrence.acknowledged.date())}")
        parts.append(f"assigned to {self.assignee_name}" if self.assignee_name
                     else f"{self.owner} answers for it")
        if self.about:
            parts.append(f"about {self.about}")
        text = "; ".join(parts)
        return text[:1].upper() + text[1:] + "."


STATES_SAID = {"lapsed": "missed", "late": "late", "near": "soon", "ahead": "ahead"}


class AtRisk:
    """The brands' open dates at risk in one world (live by default, or one test clock's:
    issue 27's test mode never mixes the two), optionally in one state ("lapsed", "late",
    "near", "ahead") or assigned to one member ("nobody": to none): priced ones first, by
    currency (by its code, EUR before USD) and within a currency by what a month late costs,
    then the rest by nearness. Amounts in two currencies are never compared (issue 29).

    A slice reads only its own lines: each part's order is an index's (`occurrence_risk`: the
    brand, the currency, the cost of a miss, late_from), so a page costs the same for a brand
    of ten subjects or of ten thousand. `page(number)` reads one more line than it shows, to
    know whether there is a next page, and counts the priced dates only when the page reaches
    past them; `totals()` sums what the dates put at stake, per currency, in one query."""

    def __init__(self, brands: Iterable[Brand] | Brand, *, state: str = "",
                 assignee: str = "", near: timedelta = NEAR, world: TestClock | None = None):
        self.brands = [brands] if isinstance(brands, Brand) else list(brands)
        self.nows = {world.pk: world.frozen_time} if world is not None else \
            {None: wallclock.wall_now()}
        found = _at_risk_dates(self.brands, self.nows, near)
        if state:
            found = found.filter(_in_state(state, self.nows, near))
        if assignee:
            found = found.filter(assignee__isnull=True) if assignee == "nobody" else \
                found.filter(assignee_id=assignee)
        self.found = found.order_by(*ORDER)

    def count(self) -> int:
        return self.found.count()

    def totals(self) -> Totals:
        """How many dates, and what a month late of them costs per currency (never added
        across currencies), in one query."""
        found = Totals()
        for row in self.found.order_by().values("miss_currency").annotate(
                n=Count("id"), total=Sum("miss_cost")):
            found.dates += row["n"]
            if row["total"] and row["miss_currency"]:
                found.by_currency[row["miss_currency"]] = row["total"]
            else:
                found.unpriced += row["n"]
        return found

    def __getitem__(self, window: slice) -> list[DateLine]:
        lines = [_line(occurrence, self.nows[occurrence.test_clock_id])
                 for occurrence in self._window(window.start or 0, window.stop)]
        for line in lines:
            if line.occurrence.hard and line.state == "ahead":
                line.reasons.append("a fixed date: no extension moves it")
        _attach_rungs(lines)
        return lines

    def _window(self, start: int, stop: int | None) -> list[Occurrence]:
        """The dates from `start` to `stop` in order: the priced ones, then the rest (two
        index-ordered reads, the second only when the window reaches past the first)."""
        priced = self.found.filter(miss_cost__gt=0)
        rows = list(priced[start:stop])
        if stop is not None and len(rows) == stop - start:
            return rows
        skip = 0 if rows or not start else max(0, start - priced.count())
        rest = self.found.filter(miss_cost=0)
        return rows + list(rest[skip:None if stop is None else skip + stop - start - len(rows)])

    def page(self, number: int, size: int) -> RiskPage:
        number = max(1, number)
        lines = self[(number - 1) * size:number * size + 1]
        return RiskPage(lines[:size], number, has_next=len(lines) > size)


@dataclass
class Totals:
    """What a list of dates at risk puts at stake: "$1,944 a month at risk across 6 dates"."""

    dates: int = 0
    unpriced: int = 0  # dates whose clock prices no miss
    by_currency: dict[str, int] = field(default_factory=dict)  # minor units a month late

    @property
    def money(self) -> str:
        """Each currency's total side by side, in the order of their codes ("€300 · $1,200"):
        never one sum of two currencies, nor ranked by each other's amounts."""
        return shown.moneys(self.by_currency)

    @property
    def said(self) -> str:
        dates = f"{self.dates} date{'s' if self.dates != 1 else ''}"
        if not self.by_currency:
            return f"{dates} at risk; none of them says what a miss would cost."
        text = f"{self.money} a month at risk across {dates}"
        if self.unpriced:
            text += f" ({self.unpriced} of them not priced)"
        return text + "."


@dataclass
class RiskPage:
    """One page of dates at risk, and whether there are more on either side."""

    object_list: list[DateLine]
    number: int
    has_next: bool

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def next_page_number(self) -> int:
        return self.number + 1

    @property
    def previous_page_number(self) -> int:
        return self.number - 1


def at_risk(brands: Iterable[Brand] | Brand, *, near: timedelta = NEAR, limit: int | None = None,
            offset: int = 0, state: str = "", assignee: str = "",
            world: TestClock | None = None) -> list[DateLine]:
    """A list of `AtRisk` (all of them, or `limit` from `offset`), live or in `world`."""
    found = AtRisk(brands, state=state, assignee=assignee, near=near, world=world)
    return found[offset:offset + limit] if limit is not None else found[offset:]


def _at_risk_dates(brands: list[Brand], nows: dict, near: timedelta):
    near_enough, worlds = Q(), Q()  # each world's dates near its own now
    for world, now in nows.items():
        near_enough |= Q(test_clock_id=world, late_from__lte=now + near)
        worlds |= Q(test_clock_id=world)
    return _open_dates(Q(brand__in=brands)).filter(worlds).filter(
        Q(status=Occurrence.Status.LAPSED) | Q(hard=True) | near_enough)


def _in_state(state: str, nows: dict, near: timedelta) -> Q:
    """The dates in one state, each judged on its own world's now (as DateLine.state)."""
    if state == "lapsed":
        return Q(status=Occurrence.Status.LAPSED)
    found = Q(pk__in=[])
    for world, now in nows.items():
        bounds = {"late": Q(late_from__lte=now),
                  "near": Q(late_from__gt=now, late_from__lte=now + near),
                  "ahead": Q(late_from__gt=now + near)}.get(state, Q(pk__in=[]))
        found |= Q(test_clock_id=world, status=Occurrence.Status.OPEN) & bounds
    return found


def coming_up(subjects: Iterable[Subject]) -> list[DateLine]:
    """A customer's open dates: late and lapsed first, then soonest first."""
    subjects = list(subjects)
    brands = {subject.brand for subject in subjects}
    nows = _nows(brands)
    lines = [_line(occurrence, nows[occurrence.test_clock_id])
             for occurrence in _open_dates(Q(brand__in=brands, clock__subject__in=subjects))]
    _attach_rungs(lines)
    return sorted(lines, key=lambda line: (line.state not in ("lapsed", "late"),
                                           line.occurrence.late_from))


def _open_dates(scope: Q):
    return (Occurrence.objects.filter(scope).filter(
        status__in=[Occurrence.Status.OPEN, Occurrence.Status.LAPSED])
        .select_related("clock__subject", "clock__job", "clock__brand", "assignee__user"))


def _line(occurrence: Occurrence, now: datetime) -> DateLine:
    spec = spec_of(occurrence.clock)
    return DateLine(occurrence, spec, now, exposure.price(spec.exposure))


def _nows(brands: Iterable[Brand]) -> dict[str | None, datetime]:
    """Each world's now: the real clock's, and each test clock's frozen time (one query)."""
    nows: dict[str | None, datetime] = {None: wallclock.wall_now()}
    for test_clock in TestClock.objects.filter(brand__in=list(brands)).only("id",
                                                                             "frozen_time"):
        nows[test_clock.pk] = test_clock.frozen_time
    return nows


def _attach_rungs(lines: list[DateLine]) -> None:
    """The last rung that rang for each date, in one query."""
    by_label = {line.occurrence.label: line for line in lines}
    if not by_label:
        return
    brands = {line.occurrence.brand_id for line in lines}
    rung_timers = Timer.objects.filter(brand_id__in=brands, owner_id__in=list(by_label),
                                       state=Timer.State.FIRED,
                                       payload__has_key="rung").order_by("fired")
    for timer in rung_timers.only("owner_id", "fired", "payload"):
        line = by_label.get(timer.owner_id)
        if line is not None:
            line.rang = timer
