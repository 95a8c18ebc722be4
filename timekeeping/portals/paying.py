"""What a customer pays, as the portal's home shows it (issue 27): for each plan of their
subjects, its price and cycle, the next charge and its date (or, once cancelled at the cycle's
end, the day it stops), the charges and payments so far from the ledger (date, amount, state),
and each allowance left this cycle.

    plans_of(subjects)   {subject id: [Plan]}, in a fixed number of queries however many
                         subjects and plans there are: the plans, their allowances' use, and
                         their ledger lines, one query each

Money is said only through `shown.money`; days through `shown.day`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime

from calendars.moments import day_in_zone
from money.models import Entry
from timekeeping.basics import shown
from timekeeping.models import Allowance, Subject, Subscription
from timekeeping.recurring import dunning, plans
from timekeeping.timers.firing import now_for

SHOWN_LINES = 12  # the latest charges and payments a plan shows; the rest are in the totals


@dataclass(frozen=True)
class Line:
    """A charge or a payment: when, how much, and where it stands."""
    when: str  # the day, in the subject's zone
    what: str  # "Charge for cycle 2", "Payment"
    amount: str
    state: str  # "paid", "part paid", "owed", "received"


@dataclass
class Plan:
    subscription: Subscription
    name: str
    price: str  # "$99.00 every month"
    renews_on: date
    ends_on: date | None  # cancelled at the cycle's end: the day it stops
    next_charge: str  # "$99.00 on Mon 15 Feb 2027", or "" for none
    charged: str
    paid: str
    owed: str
    allowances: list[dict]
    lines: list[Line] = field(default_factory=list)
    more_lines: int = 0  # older lines not shown

    @property
    def resumable(self) -> bool:
        return self.ends_on is not None


EVERY = {"d": "day", "w": "week", "mo": "month", "y": "year"}


def _every(every: str) -> str:
    unit = every.lstrip("0123456789")
    count = every[:-len(unit)] or "1"
    name = EVERY.get(unit, unit)
    return f"every {name}" if count == "1" else f"every {count} {name}s"


def plans_of(subjects: list[Subject]) -> dict[str, list[Plan]]:
    by_pk = {subject.pk: subject for subject in subjects}
    subscriptions = list(Subscription.objects.filter(
        brand_id__in={subject.brand_id for subject in subjects}, subject_id__in=list(by_pk),
        state=Subscription.State.ACTIVE).order_by("subject_id", "service"))
    if not subscriptions:
        return {}
    used: dict[str, dict[int, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for row in Allowance.objects.filter(
            brand_id__in={sub.brand_id for sub in subscriptions},
            subscription__in=subscriptions).values_list(
            "subscription_id", "cycle", "service", "used"):
        used[row[0]][row[1]][row[2]] = row[3]
    lines = _ledger_lines(subscriptions, by_pk)
    found: dict[str, list[Plan]] = defaultdict(list)
    for subscription in subscriptions:
        subject = by_pk[subscription.subject_id]
        # The subject the page holds already: its brand, calendar and test clock, no query.
        subscription.subject, subscription.brand = subject, subject.brand
        subscription.test_clock = subject.test_clock
        found[subject.pk].append(_plan(subscription, used[subscription.pk],
                                       lines.get(subscription.pk, [])))
    return found


def _ledger_lines(subscriptions: list[Subscription],
                  by_pk: dict[str, Subject]) -> dict[str, list[tuple]]:
    """Each subscription's charges and payments, oldest first, from the subjects' owed
    accounts (a charge adds to what is owed, a payment takes from it), in one query."""
    owed_keys = [f"{by_pk[s.subject_id].brand_id}:owed:{s.subject_id}" for s in subscriptions]
    found: dict[str, list[tuple]] = defaultdict(list)
    for kind, reference, at, currency, amount in Entry.objects.filter(
            brand_id__in={s.brand_id for s in subscriptions}, account__key__in=owed_keys,
            posting__kind__in=["cycle.charge", "cycle.payment"]).order_by(
            "posting__at", "posting_id").values_list(
            "posting__kind", "posting__reference", "posting__at", "posting__currency",
            "amount"):
        found[reference.split(":", 1)[0]].append((kind, reference, at, currency, amount))
    return found


def _plan(subscription: Subscription, used: dict[int, dict[str, int]],
          ledger_lines: list[tuple]) -> Plan:
    spec = plans.plan_of(subscription)
    now = now_for(subscription.brand, subscription.test_clock)
    renews = plans.renews_on(subscription, subscription.cycle + 1)
    cancelled = subscription.ends_after is not None
    zone = plans.zone_of(subscription)
    lines = [_line(subscription, spec.amount, zone, *row) for row in ledger_lines]
    charged = sum(row[4] for row in ledger_lines if row[0] == "cycle.charge")
    return Plan(
        subscription=subscription, name=shown.plan(subscription.service),
        price=(f"{shown.money(spec.amount, spec.currency)} {_every(spec.every)}"
               if spec.amount else f"no charge, renewed {_every(spec.every)}"),
        renews_on=renews, ends_on=renews if cancelled else None,
        next_charge=("" if cancelled or not spec.amount else
                     f"{shown.money(spec.amount, spec.currency)} on {shown.day(renews)}"),
        charged=shown.money(charged, spec.currency),
        paid=shown.money(subscription.paid, spec.currency),
        owed=dunning.shown_owed(subscription) if spec.amount else "",
        allowances=plans.allowances(subscription, at=now, used_by_cycle=used),
        lines=list(reversed(lines))[:SHOWN_LINES],
        more_lines=max(len(lines) - SHOWN_LINES, 0))


def _line(subscription: Subscription, price: int, zone: str, kind: str, reference: str,
          at: datetime, currency: str, amount: int) -> Line:
    when = shown.day(day_in_zone(at, zone))
    if kind == "cycle.payment":
        return Line(when, "Payment", shown.money(-amount, currency), "received")
    cycle = int(reference.rsplit(":", 1)[-1])
    through = dunning.paid_through(subscription)
    if cycle <= through:
        state = "paid"
    elif cycle == through + 1 and subscription.paid > through * price:
        state = "part paid"
    else:
        state = "owed"
    return Line(when, f"Charge for cycle {cycle}", shown.money(amount, currency), state)
