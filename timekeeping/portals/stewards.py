"""Keeping a customer's dates with us (S16): on a subject whose dates between jobs are in
their owner's hands, the portal offers the brand's steward service at its price; taking the
offer orders it through the function the API's `POST /api/jobs` calls (`clocks.order`), and
the steward takes up the dates as its job opens (`timekeeping.clocks.stewards`).

    offer_of(subject)           the offer, or None (no steward service, one ordered already,
                                or the brand's plan does not run it live)
    keep_with_us(subject, by=…) order it: what happened, in a sentence
"""

from __future__ import annotations

from dataclasses import dataclass

from timekeeping import clocks
from timekeeping.basics import shown
from timekeeping.clocks import stewards
from timekeeping.models import Subject
from timekeeping.portals.controls import Said
from timekeeping.specs import tiers


@dataclass(frozen=True)
class Offer:
    service: str
    price: str  # its one-off price as people read it; "" when it costs nothing


def offer_of(subject: Subject) -> Offer | None:
    spec = stewards.steward_service(subject)
    if spec is None or stewards.steward_of(subject) is not None:
        return None
    if subject.test_clock_id is None:  # live, only what the brand's plan runs (S26)
        try:
            tiers.check_live(subject.brand.plan, spec)
        except tiers.PlanLacksKey:
            return None
    price = shown.money(spec.plan.amount, spec.plan.currency) if spec.plan.amount else ""
    return Offer(spec.name, price)


def keep_with_us(subject: Subject, *, by: str) -> Said:
    """Order the steward service for the subject. A second order (two clicks at once, an old
    page) finds it ordered and says so: it is ordered, and charged, once."""
    brand = subject.brand.name
    offer = offer_of(subject)
    if offer is None:
        if stewards.steward_of(subject) is not None:
            return Said(True, f"{brand} keeps these dates for you already.")
        return Said(False, f"Not ordered: {brand} does not offer to keep these dates now.")
    try:
        clocks.order(brand=subject.brand, service=offer.service, subject=subject, by=by)
    except clocks.PeriodTaken:
        if stewards.steward_of(subject) is not None:
            return Said(True, f"{brand} keeps these dates for you already.")
        return Said(False, f"Not ordered: {shown.service(offer.service)} was ordered for "
                           f"{subject.name} before and has ended; ask {brand} to keep them.")
    except clocks.OrderRefused as refused:
        return Said(False, f"Not ordered: {refused.message}.")
    cost = f" for {offer.price}" if offer.price else ""
    return Said(True, f"Ordered{cost}: {brand} keeps these dates for you from now on.")
