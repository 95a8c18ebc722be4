"""What falls due at a brand in the days ahead (S25), per day in the brand's zone, by kind.

    ahead(brand, now=…, test_clock=None, days=30)  -> Ahead

Kinds: open dates by their clock ("hard date", "date"), and armed timers by their kind ("rung"
for a clock's rung, else the kind's name: "delay", …). A date's own timer (the instant it turns
late) is the date itself, counted once, as a date.

The days are those of one world: the real clock, or a test clock (its frozen time is its now).
Each day's bounds are computed in Python, in the brand's zone (DESIGN decision 1); the database
only counts between them. Three bounded queries, whatever the data: the dates per day and kind,
the timers per day and kind (both counted in SQL), and the first `LISTED` dates for the list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.db.models import Case, CharField, Count, F, IntegerField, Q, Value, When

from calendars.moments import day_in_zone, wall_time
from timekeeping.models import Brand, Occurrence, TestClock, Timer

LISTED = 100
HARD, DATE, RUNG = "hard date", "date", "rung"
FIRST = (HARD, DATE, RUNG)  # the kinds people read first; timer kinds follow by name


@dataclass
class Day:
    day: date
    counts: dict[str, int] = field(default_factory=dict)
    dates: list[Occurrence] = field(default_factory=list)  # the listed ones

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass
class Ahead:
    zone: str
    now: datetime
    days: list[Day]
    kinds: list[str]  # those present, in reading order
    more: bool  # more dates fall due than are listed

    @property
    def total(self) -> int:
        return sum(day.total for day in self.days)


def ahead(brand: Brand, *, now: datetime, test_clock: TestClock | None = None,
          days: int = 30) -> Ahead:
    zone = brand.calendar_rules().zone_name
    if test_clock is not None:
        now = test_clock.frozen_time
    first = day_in_zone(now, zone)
    found = [Day(first + timedelta(days=n)) for n in range(days)]
    by_day = {day.day: day for day in found}
    for due, hard, n in _dates_per_day(brand, test_clock, found):
        by_day[due].counts[HARD if hard else DATE] = n
    for index, kind, n in _timers_per_day(brand, test_clock, found, zone):
        found[index].counts[kind] = found[index].counts.get(kind, 0) + n
    listed = list(_open_dates(brand, test_clock, found).select_related(
        "clock__subject").order_by("due", "clock__title", "item", "pk")[:LISTED + 1])
    for occurrence in listed[:LISTED]:
        by_day[occurrence.due].dates.append(occurrence)
    present = {kind for day in found for kind in day.counts}
    kinds = [kind for kind in FIRST if kind in present] + sorted(present - set(FIRST))
    for day in found:  # each day's kinds in reading order
        day.counts = {kind: day.counts[kind] for kind in kinds if kind in day.counts}
    return Ahead(zone, now, found, kinds, more=len(listed) > LISTED)


def _open_dates(brand: Brand, test_clock: TestClock | None, days: list[Day]):
    # The partial index of a brand's open dates by world and `due` serves this.
    return Occurrence.objects.filter(
        brand=brand, test_clock=test_clock, status=Occurrence.Status.OPEN,
        due__gte=days[0].day, due__lte=days[-1].day)


def _dates_per_day(brand: Brand, test_clock: TestClock | None, days: list[Day]):
    return (_open_dates(brand, test_clock, days).order_by().values("due", "hard")
            .annotate(n=Count("pk")).values_list("due", "hard", "n"))


def _timers_per_day(brand: Brand, test_clock: TestClock | None, days: list[Day], zone: str):
    """(day index, kind, count): the day a timer is owed on, between local midnights."""
    bounds = [wall_time(day.day, "00:00", zone) for day in days]
    bounds.append(wall_time(days[-1].day + timedelta(days=1), "00:00", zone))
    which_day = Case(*[When(owed__lt=bound, then=Value(n)) for n, bound in
                       enumerate(bounds[1:])], output_field=IntegerField())
    kind = Case(When(payload__has_key="rung", then=Value(RUNG)), default=F("kind"),
                output_field=CharField())
    timers = Timer.objects.filter(brand=brand, test_clock=test_clock, state=Timer.State.ARMED,
                                  owed__gte=bounds[0], owed__lt=bounds[-1])
    # A date's own timer is the date itself, counted above.
    return (timers.exclude(Q(kind="clock") & Q(payload__has_key="date"))
            .annotate(day_index=which_day, label=kind).values("day_index", "label")
            .annotate(n=Count("pk")).values_list("day_index", "label", "n"))
