"""Collecting a plan's charges (place 8) and dunning a renewal left unpaid (S19, S23).

    collect(subscription_id, cycle, attempt, instant)   a `money` timer fires
    pay(subscription, amount=…, currency=…, by=…)        a payment the brand received
    owed(subscription)                                   what its cycles charged, unpaid

Only a plan that states `price.dunning` (retries after the renewal: ["3d", "7d", "14d"])
is collected this way; without it a cycle's charge is posted owed and collecting it is the
brand's own business. With it, each cycle's start arms a `money` timer at the renewal: paid by
then (the brand recorded the payment), it is collected; unpaid, the buyer and the owner hear it
and the next retry is armed. Unpaid after the last retry, the subscription is frozen: its
allowances take no use (an event is refused) and its schedules' mints are held, not lost. A
payment that covers every cycle so far unfreezes it and releases the held mints, each minting
as if on time.

No card is charged here: a payment is what the brand records as received (the API's
`POST /subscriptions/{id}/payments`), in the plan's currency, never more than is owed.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import transaction

from calendars.moments import day_in_zone
from money import ledger
from timekeeping.basics import shown
from timekeeping.models import Subscription, Timer
from timekeeping.recurring.spec import plan_of
from timekeeping.specs.jobs import parse_span
from timekeeping.timers import arming, outbox, records
from timekeeping.timers.firing import Hold, now_for


class PaymentRefused(Exception):
    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field, self.message = field, message


def currency_of(subscription: Subscription) -> str:
    return plan_of(subscription).currency


def collects(subscription: Subscription) -> bool:
    plan = plan_of(subscription)
    return bool(plan.dunning and plan.amount)


def owed(subscription: Subscription) -> int:
    """What the cycles so far charged and no payment covered, in minor units."""
    return max(plan_of(subscription).amount * subscription.cycle - subscription.paid, 0)


def shown_owed(subscription: Subscription) -> str:
    """What is owed as pages say it ("198.00 USD"), or "" when nothing is."""
    due = owed(subscription)
    return shown.money(due, plan_of(subscription).currency) if due else ""


def paid_through(subscription: Subscription) -> int:
    """The last cycle whose charge is paid in full (0: none)."""
    amount = plan_of(subscription).amount
    return subscription.cycle if not amount else min(subscription.paid // amount,
                                                     subscription.cycle)


def arm(subscription: Subscription, cycle: int, at: datetime) -> None:
    """The cycle's charge is due at `at` (its renewal): the first collection."""
    if collects(subscription):
        _arm(subscription, cycle, 0, at, since=at)


def _arm(subscription: Subscription, cycle: int, attempt: int, owed_at: datetime, *,
         since: datetime) -> Timer:
    return arming.arm(brand=subscription.brand, test_clock=subscription.test_clock,
                      kind="money", key=f"{subscription.pk}:collect:{cycle}:{attempt}",
                      owed=owed_at, owner_type="subscription", owner_id=subscription.pk,
                      owner_opened=subscription.opened, bundle=subscription.bundle,
                      payload={"subscription": subscription.pk, "cycle": cycle,
                               "attempt": attempt, "since": since.isoformat()})


def _record(subscription: Subscription, kind: str, data: dict, at: datetime) -> None:
    records.write(kind, brand=subscription.brand, instant=at,
                  test_clock=subscription.test_clock, subject=subscription.subject_id,
                  data={"subscription": subscription.pk, **data})


def _plan_name(subscription: Subscription) -> str:
    return f"the {subscription.service.replace('-', ' ')}"


def _day(instant: datetime, subscription: Subscription) -> str:
    return shown.day(day_in_zone(instant, subscription.subject.zone or "UTC"))


def _tell(subscription: Subscription, subject: str, body: str, *, key: str) -> None:
    """The buyer (the subject's contact) hears it with the link to their portal page, and the
    brand's owner with the link to the subject's console page (`outbox.tell`: in a test
    clock's world, only the owner)."""
    brand, site = subscription.brand, settings.SITE_URL
    owner = brand.owner.email if brand.owner else ""
    buyer = "" if subscription.test_clock_id else subscription.subject.contact_email
    for to, link, who in ((buyer, f"{site}/portal/subjects/{subscription.subject_id}/", "buyer"),
                          (owner, f"{site}/console/{brand.pk}/subjects/"
                                  f"{subscription.subject_id}/", "owner")):
        if to and (who == "owner" or to != owner):
            outbox.tell(brand=brand, test_clock_id=subscription.test_clock_id, to=[to],
                        subject=subject, body=f"{body}\n\n{link}\n",
                        key=f"{subscription.pk}:{key}:{who}")


def collect(subscription_id: str, cycle: int, attempt: int, instant: datetime, *,
            since: datetime) -> str:
    with transaction.atomic():
        subscription = Subscription.objects.select_for_update(of=("self",)).select_related(
            "subject", "brand__owner").get(pk=subscription_id)
        plan = plan_of(subscription)
        if paid_through(subscription) >= cycle:
            return f"cycle {cycle} · paid: collected"
        if subscription.state != Subscription.State.ACTIVE:
            return f"cycle {cycle} · the subscription is {subscription.state}: nothing to do"
        due = shown.money(owed(subscription), plan.currency)
        if attempt < len(plan.dunning):
            next_try = parse_span(plan.dunning[attempt]).after(since, "UTC")
            _arm(subscription, cycle, attempt + 1, next_try, since=since)
            _record(subscription, "renewal.unpaid", {
                "cycle": cycle, "attempt": attempt, "owed": due, "next_try": next_try},
                at=instant)
            said = (f"The renewal of {_plan_name(subscription)} for "
                    f"{subscription.subject.name} is unpaid: {due} owed.")
            _tell(subscription, f"Unpaid: {_plan_name(subscription)} for "
                                f"{subscription.subject.name}",
                  f"{said} What it includes is paused if it is still unpaid on "
                  f"{_day(next_try, subscription)}. See it here:"
                  if attempt + 1 == len(plan.dunning) else
                  f"{said} We look again on {_day(next_try, subscription)}. See it here:",
                  key=f"unpaid:{cycle}:{attempt}")
            return (f"cycle {cycle} · unpaid, {due} owed · retry {attempt + 1} of "
                    f"{len(plan.dunning)} on {next_try:%Y-%m-%d %H:%MZ}")
        if subscription.frozen_since is None:
            subscription.frozen_since = instant
            subscription.save(update_fields=["frozen_since"])
        _record(subscription, "subscription.frozen", {"cycle": cycle, "owed": due,
                                                      "retries": len(plan.dunning)}, at=instant)
        _tell(subscription, f"Paused: {_plan_name(subscription)} for "
                            f"{subscription.subject.name}",
              f"The renewal of {_plan_name(subscription)} for {subscription.subject.name} is "
              f"still unpaid after {len(plan.dunning)} tries: {due} owed. What it includes "
              "is paused, and no new work starts under it, until it is paid. See it here:",
              key=f"frozen:{cycle}")
        return f"cycle {cycle} · unpaid after {len(plan.dunning)} retries: frozen, {due} owed"


def hold_mint(subscription: Subscription) -> None:
    """Inside a mint: a frozen subscription's mint waits, held, until a payment frees it."""
    if subscription.frozen_since is not None:
        raise Hold(f"held by {subscription.pk} while its renewal is unpaid")


@transaction.atomic
def pay(subscription: Subscription, *, amount: int, currency: str, by: str) -> Subscription:
    """A payment the brand received toward the subscription's charges. Refused, naming the
    field, when it is not a positive whole amount in the plan's currency up to what is owed."""
    subscription = Subscription.objects.select_for_update(of=("self",)).select_related(
        "subject", "brand", "test_clock").get(pk=subscription.pk)
    plan = plan_of(subscription)
    if not plan.amount:
        raise PaymentRefused("subscription", f"{subscription.service!r} charges nothing")
    if currency != plan.currency:
        raise PaymentRefused("currency", f"the plan is charged in {plan.currency}")
    due = owed(subscription)
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 < amount <= due:
        raise PaymentRefused("amount", f"a payment is whole minor units from 1 to what is owed, "
                                       f"{due} ({shown.money(due, plan.currency)})")
    now = now_for(subscription.brand, subscription.test_clock)
    brand = subscription.brand_id
    ledger.post(brand=brand, kind="cycle.payment",
                reference=f"{subscription.pk}:paid:{subscription.paid}", currency=currency, at=now,
                lines=[(f"{brand}:received:{currency}", amount),
                       (f"{brand}:owed:{subscription.subject_id}", -amount)])
    subscription.paid += amount
    subscription.save(update_fields=["paid"])
    _record(subscription, "subscription.paid", {
        "amount": amount, "currency": currency, "by": by,
        "paid_through": paid_through(subscription), "owed": owed(subscription)}, at=now)
    _collected(subscription, by=by)
    if subscription.frozen_since is not None and paid_through(subscription) >= \
            subscription.cycle:
        _unfreeze(subscription, now, by=by)
    return subscription


def _collected(subscription: Subscription, *, by: str) -> None:
    """The retries of the cycles now paid have nothing left to collect: they end. A cycle's
    first collection still fires on its day, and says it was paid."""
    through = paid_through(subscription)
    for timer in Timer.objects.filter(owner_type="subscription", owner_id=subscription.pk,
                                      kind="money", state=Timer.State.ARMED):
        if timer.payload.get("attempt", 0) and timer.payload.get("cycle", 0) <= through:
            arming.end(timer.pk, state=Timer.State.CANCELLED, by=f"paid by {by}")


def _unfreeze(subscription: Subscription, now: datetime, *, by: str) -> None:
    subscription.frozen_since = None
    subscription.save(update_fields=["frozen_since"])
    held = list(Timer.objects.filter(owner_type="subscription", owner_id=subscription.pk,
                                     kind="schedule", state=Timer.State.HELD))
    for timer in held:
        # A mint the freeze held is owed, not part of a gap: it mints whatever its catch_up.
        Timer.objects.filter(pk=timer.pk).update(payload={**timer.payload, "released": True})
        arming.release(timer.pk)
    _record(subscription, "subscription.unfrozen", {"by": by, "released": [t.pk for t in held]},
            at=now)
