"""Money at risk (S12, S25): what the brand's unkept dates would cost a month late, summed per
week they turn late, in the brand's zone, per currency.

    at_risk(brand, now=…, test_clock=None, weeks=8)  -> AtRisk

A date's price is its clock's `exposure` made monthly (`exposure.Price.monthly`), kept on the
occurrence with its currency. The first line is what is late already (dates that passed
unkept and are not yet kept); then each week ahead, Monday to Sunday; then all that turns late
after them. Three queries, whatever the data: the sums are made by the database. Each line's
currencies stand side by side ("€300 · $972"), each bar scaled to its own currency's largest
line: amounts in two currencies are never added or compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from django.db.models import Count, Sum
from django.db.models.functions import TruncDate

from calendars.moments import day_in_zone, wall_time
from timekeeping.basics import shown
from timekeeping.models import Brand, Occurrence, TestClock

WEEKS = 8


@dataclass
class Week:
    start: date | None  # None: late already, or after the weeks shown (`later`)
    dates: int = 0
    totals: dict[str, int] = field(default_factory=dict)  # currency -> minor units a month
    bars: list[int] = field(default_factory=list)  # each currency's share of its peak, in %

    def add(self, currency: str, dates: int, total: int) -> None:
        self.dates += dates
        self.totals[currency or "?"] = self.totals.get(currency or "?", 0) + total

    @property
    def text(self) -> str:
        """Each currency's total side by side ("€300 · $972"), never added."""
        return shown.moneys(self.totals)


@dataclass
class AtRisk:
    late: Week
    weeks: list[Week]
    later: Week  # every priced date that turns late after the weeks shown

    @property
    def any(self) -> bool:
        return any(week.dates for week in self.rows)

    @property
    def rows(self) -> list[Week]:
        """The lines a page shows: late already and later (each when any), and the weeks."""
        return (([self.late] if self.late.dates else []) + self.weeks
                + ([self.later] if self.later.dates else []))

    @property
    def peaks(self) -> dict[str, int]:
        """Each currency's largest line: its bars' scale. A euro bar is measured against
        euros only: two currencies' amounts are never compared (issue 29)."""
        found: dict[str, int] = {}
        for week in self.rows:
            for currency, amount in week.totals.items():
                found[currency] = max(found.get(currency, 0), amount)
        return found


def at_risk(brand: Brand, *, now: datetime, test_clock: TestClock | None = None,
            weeks: int = WEEKS) -> AtRisk:
    zone = ZoneInfo(brand.calendar_rules().zone_name)
    if test_clock is not None:
        now = test_clock.frozen_time
    today = day_in_zone(now, zone)
    monday = today - timedelta(days=today.weekday())
    end = wall_time(monday + timedelta(weeks=weeks), "00:00", zone)
    # No ordering: the model's (by clock, and so by job) would join both tables to every sum.
    unkept = Occurrence.objects.filter(
        brand=brand, test_clock=test_clock, miss_cost__gt=0,
        status__in=[Occurrence.Status.OPEN, Occurrence.Status.LAPSED]).order_by()
    late, later = Week(None), Week(None)
    for week, found in ((late, unkept.filter(late_from__lte=now)),
                        (later, unkept.filter(late_from__gte=end))):
        for row in found.values("miss_currency").annotate(total=Sum("miss_cost"),
                                                          n=Count("id")):
            week.add(row["miss_currency"], row["n"], row["total"])
    ahead = {monday + timedelta(weeks=n): Week(monday + timedelta(weeks=n))
             for n in range(weeks)}
    for row in unkept.filter(late_from__gt=now, late_from__lt=end).annotate(
            day=TruncDate("late_from", tzinfo=zone)).values("day", "miss_currency").annotate(
            total=Sum("miss_cost"), n=Count("id")):
        ahead[row["day"] - timedelta(days=row["day"].weekday())].add(
            row["miss_currency"], row["n"], row["total"])
    found = AtRisk(late, list(ahead.values()), later)
    peaks = found.peaks
    for week in found.rows:
        week.bars = [max(1, 100 * amount // peaks[currency])
                     for currency, amount in sorted(week.totals.items())]
    return found
