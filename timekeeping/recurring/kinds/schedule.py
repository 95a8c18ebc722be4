"""The schedule kind (place 2): a plan's schedule mints a job for a period (S18); see
timekeeping.recurring.plans."""

from __future__ import annotations

from timekeeping import clocks
from timekeeping.models import Subscription, Timer
from timekeeping.recurring import plans
from timekeeping.timers.firing import Firing

SUBSCRIPTION = "subscription"  # what `prepare` keeps on the batch, by the subscription's id


def describe(timer: Timer) -> str:
    return (f"{timer.payload.get('schedule')} · period {timer.payload.get('period')}, the "
            "next")


def prepare(timers: list[Timer], firing: Firing) -> None:
    """What a batch of mints reads at once (issue 32), rather than each mint for itself: the
    subscriptions, locked in the order of their ids, with their subjects; then what their
    orders need (`clocks.prepare_orders`: the subjects locked, the periods held). A
    subscription another timer of the batch is also owed for (its renewal, its dunning) is
    left to its mint to read, after they changed it."""
    named = {timer.payload.get("subscription") for timer in timers}
    found = {subscription.pk: subscription for subscription in Subscription.objects
             .select_for_update(of=("self",)).select_related("subject")
             .filter(pk__in=sorted(pk for pk in named
                                   if isinstance(pk, str) and firing.owners[pk] == 1),
                     brand=firing.brand).order_by("pk")}
    clock = getattr(firing.test_clock, "pk", None)
    for subscription in found.values():
        subscription.brand = subscription.subject.brand = firing.brand  # read once, not each
        for row in (subscription, subscription.subject):
            if row.test_clock_id == clock:
                row.test_clock = firing.test_clock
        firing.keep_read(SUBSCRIPTION, subscription.pk, subscription, job=subscription.pk)
    clocks.prepare_orders(firing, [
        (found[pk].subject_id, timer.payload["order"], timer.payload["period"])
        for timer in timers if (pk := timer.payload.get("subscription")) in found
        and timer.payload.get("order")])


def fire(timer: Timer, firing: Firing) -> str:
    subscription = timer.payload["subscription"]
    return plans.mint(subscription, timer.payload["schedule"], timer.payload["period"], timer,
                      firing.instant, locked=firing.take_read(SUBSCRIPTION, subscription))
