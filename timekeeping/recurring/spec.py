"""The plan a subscription keeps: its service's plan, as the manifest version it subscribed
under writes it. Its own module so that the cycles (`plans`) and the dunning that collects
them both read it, and the dunning need not import the cycles."""

from __future__ import annotations

from timekeeping.models import Subscription
from timekeeping.specs.current import services_of
from timekeeping.specs.plans import PlanSpec


def plan_of(subscription: Subscription) -> PlanSpec:
    return services_of(subscription.bundle)[subscription.service].plan
