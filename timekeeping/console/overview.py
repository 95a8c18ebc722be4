"""The console's first page for a person who keeps several brands (issue 27): each brand at a
glance, live only (test worlds stay behind each brand's test mode), with a link in.

    glance(brand, now=…)  -> Glance: dates at risk and their total, what needs attention (how
                             many failed, ran late), and how many dates fall due in 7 days

A glance costs a fixed number of queries for its brand (the at-risk count and totals, one per
attention source, the week ahead), whatever the brand's size; the page shows at most `SHOWN`
brands, by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from timekeeping.attention import lists
from timekeeping.clocks import dates
from timekeeping.console import ahead
from timekeeping.models import Brand

SHOWN = 50
WEEK = 7


@dataclass
class Glance:
    brand: Brand
    at_risk: dates.Totals
    failures: int  # things that failed, of what needs attention
    late: int  # timers that ran late
    needs: int  # everything that needs attention
    more: bool  # more need attention than were counted
    next_week: int  # dates that fall due in the next seven days

    @property
    def quiet(self) -> bool:
        return not (self.at_risk.dates or self.needs)


def glance(brand: Brand, *, now: datetime) -> Glance:
    needs = lists.attention(brand, now=now)
    week = ahead.ahead(brand, now=now, days=WEEK)
    due = sum(n for day in week.days for kind, n in day.counts.items()
              if kind in (ahead.HARD, ahead.DATE))
    return Glance(brand, dates.AtRisk(brand).totals(), needs.failures,
                  sum(1 for item in needs.items if item.kind == "late"), len(needs.items),
                  bool(needs.more), due)
