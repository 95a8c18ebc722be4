"""Plans kept (S24): what a change of the brand's plan leaves on the old terms, and the change.

    kept_on(brand, plan)               what would stay on a higher plan than `plan`, until when
    change_plan(brand=…, plan=…, by=…) the brand moves to `plan`; answers what stays behind

A job, subject and subscription keep the brand's plan they opened under (`plan`, set by
`clocks.order`, `subjects.making.make` and `plans.subscribe`), and run to their end on it
(`specs.tiers.kept`): a smaller plan refuses new orders only. What stays on the old terms is
the running live work whose kept plan is higher than the new one: active subscriptions, open
jobs, and subjects holding open dates on clocks that outlive their job. Each ends when known:
a subscription cancelled at its cycle's end on the day it stops, one that renews has no end
until it is cancelled; a job on its last open date; a subject on the last open date kept on
it. Work on a test clock runs every key whatever the plan, so it is not counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from django.db import transaction
from django.db.models import Max, Q

from timekeeping.basics import shown
from timekeeping.models import Brand, Job, Occurrence, Subject, Subscription
from timekeeping.recurring import plans
from timekeeping.specs import tiers
from timekeeping.timers import records
from timekeeping.timers.firing import now_for


class PlanRefused(ValueError):
    """A plan that is not one of the brand's plans (`field` names it)."""

    field = "plan"


@dataclass
class Behind:
    """What keeps one old plan: how many of each, the last end known, and how many have none."""

    plan: str
    subscriptions: int = 0
    jobs: int = 0
    subjects: int = 0
    last_ends: date | None = None
    open_ended: int = 0

    def end(self, day: date | None) -> None:
        if day is None:
            self.open_ended += 1
        elif self.last_ends is None or day > self.last_ends:
            self.last_ends = day

    def as_dict(self) -> dict:
        return {"plan": self.plan, "subscriptions": self.subscriptions, "jobs": self.jobs,
                "subjects": self.subjects, "last_ends": self.last_ends,
                "open_ended": self.open_ended}


@dataclass
class Kept:
    """A plan change's answer: the plan, the one before, and what keeps each older plan."""

    plan: str
    was: str
    behind: list[Behind] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"plan": self.plan, "was": self.was,
                "kept": [each.as_dict() for each in self.behind], "said": said(self)}


def kept_on(brand: Brand, plan: str) -> Kept:
    """What would stay on a plan higher than `plan` if the brand moved to it (S24)."""
    _check(plan)
    above = [name for name in tiers.PLANS if tiers.RANK[name] > tiers.RANK[plan]]
    behind = {name: Behind(name) for name in above}
    live = {"brand": brand, "test_clock__isnull": True, "plan__in": above}
    for subscription in Subscription.objects.filter(
            state=Subscription.State.ACTIVE, **live).select_related("subject"):
        behind[subscription.plan].subscriptions += 1
        stops = subscription.ends_after
        behind[subscription.plan].end(None if stops is None else
                                      plans.renews_on(subscription, stops + 1))
    # One row per job or subject, its kept plan and last open date (a rare, owner-asked read).
    for kept, last in Job.objects.filter(state=Job.State.OPEN, **live).annotate(
            last=Max("clocks__occurrences__due", filter=_open())).values_list("plan", "last"):
        behind[kept].jobs += 1
        behind[kept].end(last)
    held = Occurrence.objects.filter(brand=brand, status=Occurrence.Status.OPEN,
                                     clock__lives_on_subject=True).values("clock__subject_id")
    for kept, last in Subject.objects.filter(pk__in=held, **live).annotate(
            last=Max("clocks__occurrences__due", filter=_open(clocks__lives_on_subject=True))
    ).values_list("plan", "last"):
        behind[kept].subjects += 1
        behind[kept].end(last)
    found = [each for each in behind.values() if each.subscriptions or each.jobs
             or each.subjects]
    return Kept(plan=plan, was=brand.plan, behind=found)


def _open(**more) -> Q:
    """A job's or subject's open dates, as its aggregate reads them."""
    return Q(clocks__occurrences__status=Occurrence.Status.OPEN, **more)


def change_plan(*, brand: Brand, plan: str, by: str) -> Kept:
    """Move the brand to `plan`, on the record with what stays on the old terms (S24). The
    brand row is locked, so two changes at once each count against the plan the other left."""
    _check(plan)
    with transaction.atomic():
        locked = Brand.objects.select_for_update().get(pk=brand.pk)
        kept = kept_on(locked, plan)
        if plan != locked.plan:
            locked.plan = plan
            locked.save(update_fields=["plan"])
            records.write("brand.plan_changed", brand=locked, instant=now_for(locked, None),
                          data={"plan": plan, "was": kept.was, "by": by,
                                "kept": [each.as_dict() for each in kept.behind]})
    brand.plan = plan  # the caller's copy reads the plan it asked for
    return kept


def _check(plan: object) -> None:
    if plan not in tiers.PLANS:
        raise PlanRefused(f"plan: one of {', '.join(tiers.PLANS)}")


def tier(plan: str) -> str:
    """The brand's plan as people say it: "the Team plan"."""
    return f"the {plan.capitalize()} plan"


def said(kept: Kept) -> str:
    """In plain words: what keeps the old plan, and until when."""
    if kept.plan == kept.was:
        return f"You are on {tier(kept.plan)} already."
    if not kept.behind:
        return "Nothing running stays on the old plan."
    return " ".join(_said_one(each) for each in kept.behind)


def _counted(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _said_one(behind: Behind) -> str:
    counted = [_counted(n, noun) for n, noun in ((behind.subscriptions, "subscription"),
                                                 (behind.jobs, "job"),
                                                 (behind.subjects, "subject"))
               if n]
    listed = counted[0] if len(counted) == 1 else (", ".join(counted[:-1]) + " and "
                                                   + counted[-1])
    total = behind.subscriptions + behind.jobs + behind.subjects
    line = (f"{listed} {'keeps' if total == 1 else 'keep'} "
            f"{tier(behind.plan)} until {'it ends' if total == 1 else 'they end'}")
    if behind.last_ends is not None:
        line += f"; the last ends on {shown.day(behind.last_ends)}"
    if behind.open_ended:
        line += (f"; {behind.open_ended} {'has' if behind.open_ended == 1 else 'have'} no end "
                 "date yet (a subscription renews until it is cancelled)")
    return line + "."
