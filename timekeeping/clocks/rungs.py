"""A date's rungs: each a timer in place 6 that rings at `rings_at` on its day, N calendar
days before the date kept; the date itself a timer at `late_from`. Armed, re-armed after a
move under the same keys, and ended here.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from calendars import rules
from calendars.moments import day_in_zone
from timekeeping.basics import compiled
from timekeeping.clocks.basis import calendar_for
from timekeeping.models import Clock, Occurrence, Timer
from timekeeping.specs.current import services_of
from timekeeping.specs.services import ClockSpec
from timekeeping.timers import arming

KIND = "clock"


def spec_of(row: Clock) -> ClockSpec:
    return spec_named(row.bundle, row.job.service, row.name)


def spec_named(bundle: str, service: str, name: str) -> ClockSpec:
    """The clock `name` of a Service as the manifest version `bundle` declares it."""
    return services_of(bundle)[service].clocks[name]


def arm(occurrence: Occurrence, spec: ClockSpec, *, why: str = "",
        ahead_of: datetime | None = None, fresh: bool = False) -> None:
    """Arm (or re-arm, after a move) the occurrence's rungs and its date, under stable keys.
    With `ahead_of`, a rung owed by then is not armed (a live timer under its key is
    superseded): a date reopened by a late notice sends no reminder whose day has passed
    (SPEC S2, issue 29). An `ack daily` rung asks each day until the date, so one whose first
    day has passed arms at its next ring after `ahead_of`, while that is not after the date.
    `fresh`: the date's clock was made in this transaction (`rearm_many`'s `fresh`)."""
    row = occurrence.clock
    cal = calendar_for(row.subject)
    wanted = {}
    for rung in spec.rungs:
        owed = cal.rings(occurrence.due - timedelta(days=rung.days))
        if ahead_of is not None and owed <= ahead_of:
            owed = _next_ring(cal, ahead_of, occurrence.due) if rung.action == "ack" else None
        if owed is not None:
            wanted[f"{occurrence.label}:{rung.text}"] = (owed, {"rung": rung.text})
    wanted[f"{occurrence.label}:date"] = (occurrence.late_from, {"date": True})
    # In a constant number of statements, however many rungs (issue 32).
    arming.rearm_many(
        brand=row.brand, test_clock=row.test_clock, kind=KIND, why=why or "re-armed",
        owner_id=occurrence.label, owner_type="occurrence", owner_opened=row.job.opened,
        bundle=row.bundle, fresh=fresh,
        wanted={key: (owed, {"occurrence": occurrence.pk, **payload})
                for key, (owed, payload) in wanted.items()})


def _next_ring(cal: rules.Calendar, after: datetime, due: date) -> datetime | None:
    """The first ring after `after` on a day no later than `due`, or None."""
    day = day_in_zone(after, cal.zone_name)
    ring = cal.rings(day)
    if ring <= after:
        day += timedelta(days=1)
        ring = cal.rings(day)
    return ring if day <= due else None


# A date's live timers, by id: what ends with it (a job's end closes its dates), compiled once.
LIVE_OF_DATE = compiled.Read(lambda brand, test_clock, owner: Timer.objects.filter(
    brand_id=brand, test_clock_id=test_clock, owner_id=owner,
    state__in=[Timer.State.ARMED, Timer.State.HELD]).values_list("id", flat=True))


def end_timers(occurrence: Occurrence, why: str) -> None:
    row = occurrence.clock
    arming.end_many(LIVE_OF_DATE(brand=row.brand_id, test_clock=row.test_clock_id,
                                 owner=occurrence.label), state=Timer.State.SUPERSEDED, by=why)
