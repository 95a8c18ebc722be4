"""How much work one request or one manifest may ask for (issue 31, "Fair shares and bounds"):
every bound in one place, each stated in docs/security.md "Limits".

Each is set well past what a real business asks for (the reason beside it), and low enough
that one request's work stays within seconds and one brand cannot buy the tick's time for
everyone. Past a bound an order is refused naming the field and the limit (a 400 from the
API), and a manifest is refused by its check at the path of what is too many.

The schedules a brand may declare, and how often one may run, depend on the brand's plan
(`Brand.plan`, `timekeeping.specs.tiers`): a higher plan raises them. The loop ticks as often
as the shortest schedule asks (`timekeeping.tick.loop`), so the shortest interval is what
stops one brand's schedule from making every brand's tick run each second.

This module imports nothing: the checks, the clocks and the doors all read it.
"""

from __future__ import annotations

from dataclasses import dataclass

# A request's body (the API's strict reader, and Django's own for forms): a manifest of the
# largest shape below is well under 1 MiB.
BODY_MAX = 2 * 1024 * 1024

# A manifest. The largest real manifests we know hold a few dozen services of a handful of
# clocks each (a tax practice's return, extension, payment and franchise dates).
SERVICES_MAX = 100
STEPS_PER_SERVICE = 50  # a job's lifecycle has a dozen steps at most
CLOCKS_PER_SERVICE = 50  # one clock a date; a service with 50 separate dates is a programme
RUNGS_PER_CLOCK = 20  # reminders before one date: 90d, 30d, 7d, 1d and escalations fit in 10

# One order. `each` clocks open a date per item (a jurisdiction, a report); an order opens its
# dates and arms a timer for each rung of each: about 10 ms each on PostgreSQL, so WORK_MAX
# keeps an order within a few seconds. 100 jurisdictions is every US state and then some.
ITEMS_PER_JOB = 100
WORK_MAX = 600  # the dates and reminders one order opens: items x (1 + rungs), every clock


@dataclass(frozen=True)
class Schedules:
    most: int  # schedules a brand's manifest declares, across its domains
    shortest_s: int  # the shortest `every`, in seconds


# A brand's schedules, by plan. A business's recurring chores (purges, exports, syncs) number
# in the tens and run hourly or daily; a minute is the tick's own period.
SCHEDULES = {
    "free": Schedules(most=25, shortest_s=60),
    "launch": Schedules(most=100, shortest_s=60),
    "team": Schedules(most=250, shortest_s=60),
}


def schedules_for(plan: str | None) -> Schedules:
    """The schedules' bounds of a plan; with no plan (a check with no brand), the highest's,
    so a manifest that passes for no brand may still be refused for a brand on a lower plan."""
    return SCHEDULES.get(plan or "team", SCHEDULES["team"])
