"""A schedule's mints that did not open their job, on the record and heard (S23).

    refused(subscription, schedule, label, refused, instant)  the order was refused
                                                              (`schedule.mint_refused`)
    skipped(subscription, schedule, gap, armed, instant)      a catch-up skipped periods
                                                              (`schedule.catch_up_skipped`)

Both are the brand's to settle, so its owner hears them, by email and on the console's needs
attention and the subject's page (`clocks.lapses`); the customer is not emailed: whether to
open the work by hand, change plans or tell the client is the brand's call.
"""

from __future__ import annotations

from datetime import datetime

from timekeeping import clocks
from timekeeping.basics import shown
from timekeeping.clocks import lapses
from timekeeping.models import Subscription
from timekeeping.specs.plans import ScheduleSpec

GAP_NAMED = 24  # skipped periods the record names; `count` says how many in all


def _work(subscription: Subscription, schedule: ScheduleSpec, label: str) -> str:
    """The work as the owner names it: "the 2026 annual return for Harbor"."""
    return (f"the {label} {shown.service(schedule.order)} for "
            f"{subscription.subject.name}")


def refused(subscription: Subscription, schedule: ScheduleSpec, label: str,
            refused: clocks.OrderRefused, instant: datetime) -> str:
    why = refused.said or f"its order was refused: {refused.message}"  # the field: Details
    work = _work(subscription, schedule, label)
    lapses.note("schedule.mint_refused", subject=subscription.subject, at=instant,
                key=f"{subscription.pk}:{schedule.name}:{label}",
                data={"subscription": subscription.pk, "schedule": schedule.name,
                      "service": schedule.order, "period": label, "code": refused.code,
                      "field": refused.field, "why": refused.message, "said": why},
                said=(f"Not opened: {work}",
                      f"{work[0].upper()}{work[1:]} was due to open on its schedule and was "
                      f"not opened: {why}. Change what stops it and open it by hand, or it "
                      "stays unopened. See it here:"))
    return f"{schedule.name} · period {label} · refused ({refused.code}): {refused.message}"


def skipped(subscription: Subscription, schedule: ScheduleSpec, gap: list[str], armed: str,
            instant: datetime) -> str:
    named = ", ".join(gap[:GAP_NAMED]) + (f" and {len(gap) - GAP_NAMED} more"
                                          if len(gap) > GAP_NAMED else "")
    service = shown.service(schedule.order)
    why = ("only the latest period is opened after a gap" if schedule.catch_up == "last" else
           "a period more than a day late is not opened")
    lapses.note("schedule.catch_up_skipped", subject=subscription.subject, at=instant,
                key=f"{subscription.pk}:{schedule.name}:{gap[0]}",
                data={"subscription": subscription.pk, "schedule": schedule.name,
                      "service": schedule.order, "catch_up": schedule.catch_up,
                      "periods": gap[:GAP_NAMED], "count": len(gap), "next": armed},
                said=(f"Not opened: {service} for {subscription.subject.name}, {named}",
                      f"No tick ran while {service} for {subscription.subject.name} was due "
                      f"to open for {named}, and its schedule skips them: {why}. Open any "
                      "that are needed by hand. See it here:"))
    return f"{schedule.name} · periods {named} · skipped by catch_up {schedule.catch_up}"
