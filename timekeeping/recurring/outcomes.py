"""A job paid by its outcome (S21): its wait, its windows and its tail. Place 7 (`window`).

    "price": {"share": "25%", "currency": "USD"},
    "outcome": {"due": "180d", "window": {"bank": "60d", "card": "120d"}, "collect": "each",
                "tail": "90d", "pay": "40%"}

When the job opens, its outcome (`out_…`) waits for a payment that matches it (the refund, the
settlement) until `due`. The brand records each one (`collect`, through the API), with how it
was paid and its invoice:

- the first wins the outcome; with `collect: "once"` it is the only one, with `"each"` every
  invoice is collected on its own;
- each collection holds the brand's share (`price.share` of it, from the customer) and the
  member's share pay (`outcome.pay` of that share, from the brand's line, to the member who did
  the job's last task), and arms its window, `out_…:window:<invoice>`, as long as its method
  says; a refund or chargeback inside it (`reverse`) gives both back; when it closes both are
  final: the share is earned and the pay is the member's;
- no payment by `due`: the outcome lapses, nothing is charged and no share pay accrues; the
  buyer, the member and the brand's owner hear it. A lapse, or a loss the brand records
  (`lose`), is a lost end: with `outcome.tail` a payment that matches it until the tail ends
  still wins it, and is charged once like any other.

Amounts are whole minor units; a share and a pay are floors of whole percents.
"""

from __future__ import annotations

import re
from datetime import datetime

from django.conf import settings
from django.db import transaction

from money import ledger
from money.models import Hold
from timekeeping import clocks
from timekeeping.jobs import common
from timekeeping.models import Job, Member, Outcome, Record, Task, Timer
from timekeeping.specs.current import services_of
from timekeeping.specs.jobs import parse_span
from timekeeping.timers.firing import now_for

KIND = "window"
INVOICE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
AMOUNT_MAX = 10**12


class OutcomeRefused(Exception):
    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def spec_of(outcome: Outcome):
    return services_of(outcome.job.bundle)[outcome.job.service].plan


def _zone(job: Job) -> str:
    return clocks.calendar_for(job.subject).zone_name


def when_opened(job: Job, spec, now: datetime) -> None:
    terms = spec.plan.outcome
    if terms is None:
        return
    due = parse_span(terms.due).after(now, _zone(job))
    outcome = Outcome.objects.create(brand=job.brand, test_clock=job.test_clock,
                                     subject=job.subject, job=job, due=due, opened=now)
    common.arm(job, KIND, f"{outcome.pk}:due", due, {"outcome": outcome.pk, "window": "due"})
    common.record(job, "outcome.opened", {"outcome": outcome.pk, "due": due}, at=now)


def _locked(outcome: Outcome) -> Outcome:
    return Outcome.objects.select_for_update(of=("self",)).select_related(
        "job__brand__owner", "job__subject", "job__test_clock", "brand", "test_clock").get(
        pk=outcome.pk)


def _member(job: Job) -> str:
    """Who earns the share pay: the member who did the job's last task ("" when nobody)."""
    task = Task.objects.filter(brand_id=job.brand_id, job=job, state=Task.State.DONE,
                               holder__isnull=False).order_by(
        "-done").select_related("holder").first()
    return task.holder.pk if task is not None else ""


@transaction.atomic
def collect(outcome: Outcome, *, amount: int, currency: str, method: str, invoice: str,
            by: str) -> dict:
    """A payment that matches the outcome arrived: it wins the outcome (or is one more invoice
    of a won one), and its share and share pay are held until its window closes. Refused,
    naming the field, when it cannot match; nothing is written then."""
    outcome = _locked(outcome)
    job, terms, plan = outcome.job, spec_of(outcome).outcome, spec_of(outcome)
    now = now_for(outcome.brand, outcome.test_clock)
    if currency != plan.currency:
        raise OutcomeRefused("currency", f"the outcome is charged in {plan.currency}")
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 < amount <= AMOUNT_MAX:
        raise OutcomeRefused("amount", f"a payment is whole minor units from 1 to {AMOUNT_MAX}")
    if method not in terms.window:
        raise OutcomeRefused("method", f"{method!r} is not a payment method of this outcome; "
                                       f"the methods are: {', '.join(terms.window)}")
    if not isinstance(invoice, str) or INVOICE.fullmatch(invoice) is None:
        raise OutcomeRefused("invoice", "an invoice is 1 to 64 characters A-Z, a-z, 0-9, '.', "
                                        "'-' and '_', starting with a letter or digit")
    reference = f"{outcome.pk}:window:{invoice}"
    if Hold.objects.filter(brand_id=outcome.brand_id, reference=reference).exists():
        raise OutcomeRefused("invoice", f"invoice {invoice} of {outcome.pk} is collected "
                                        "already")
    _may_win(outcome, terms, now)
    charge = amount * plan.share // 100
    pay = charge * terms.pay // 100
    member = _member(job) if pay else ""
    closes = parse_span(terms.window[method]).after(now, _zone(job))
    customer = f"{job.brand_id}:customer:{job.subject_id}"
    ledger.hold(brand=job.brand_id, reference=reference, payer=customer, amount=charge,
                currency=currency, until=closes, at=now)
    if member:
        ledger.hold(brand=job.brand_id, reference=f"{outcome.pk}:pay:{invoice}",
                    payer=f"{job.brand_id}:line:{currency}", amount=pay, currency=currency,
                    until=closes, at=now)
    won = outcome.state != Outcome.State.WON
    if won:
        common.cancel(job, f"{outcome.pk}:due", f"{outcome.pk}:tail", why="won")
        outcome.state, outcome.ended = Outcome.State.WON, now
    outcome.collected += amount
    outcome.save(update_fields=["state", "ended", "collected"])
    common.arm(job, KIND, reference, closes,
               {"outcome": outcome.pk, "window": "collected", "invoice": invoice})
    said = {"outcome": outcome.pk, "invoice": invoice, "method": method, "amount": amount,
            "charge": charge, "pay": pay if member else 0, "member": member,
            "currency": currency, "closes": closes, "won": won, "by": by}
    common.record(job, "outcome.collected", said, at=now)
    return said


def _may_win(outcome: Outcome, terms, now: datetime) -> None:
    if outcome.state == Outcome.State.WAITING:
        return
    if outcome.state == Outcome.State.WON:
        if terms.collect == "once":
            raise OutcomeRefused("invoice", f"{outcome.pk} was won by one payment, and is "
                                            "collected once")
        return
    if outcome.tail_until is None or now >= outcome.tail_until:
        ended = f"{outcome.ended:%Y-%m-%d %H:%MZ}" if outcome.ended else "before"
        raise OutcomeRefused("outcome", f"{outcome.pk} {outcome.state} at {ended}" + (
            f" and its tail ended at {outcome.tail_until:%Y-%m-%d %H:%MZ}"
            if outcome.tail_until else ", and has no tail"))


@transaction.atomic
def reverse(outcome: Outcome, *, invoice: str, why: str, by: str) -> dict:
    """A refund or chargeback of one invoice inside its window: its share and share pay are
    given back and its window ends. After the window closes both are final (refused)."""
    outcome = _locked(outcome)
    job = outcome.job
    now = now_for(outcome.brand, outcome.test_clock)
    reference = f"{outcome.pk}:window:{invoice}"
    window = common.live(job, reference)
    if window is None or now >= window.owed:
        held = Hold.objects.filter(brand_id=outcome.brand_id, reference=reference).first()
        raise OutcomeRefused("invoice", f"invoice {invoice} of {outcome.pk} is not in its "
                                        "window" + (f": it is {held.get_state_display()}"
                                                    if held is not None else ""))
    charge = Hold.objects.get(brand_id=outcome.brand_id, reference=reference).amount
    ledger.give_back(reference, brand=outcome.brand_id, at=now)
    ledger.give_back(f"{outcome.pk}:pay:{invoice}", brand=outcome.brand_id, at=now)
    common.cancel(job, reference, why=f"reversed: {why}")
    amount = _collection(outcome, invoice).get("amount", 0)
    outcome.collected -= amount
    outcome.save(update_fields=["collected"])
    said = {"outcome": outcome.pk, "invoice": invoice, "why": why, "charge": charge,
            "amount": amount, "currency": spec_of(outcome).currency, "by": by}
    common.record(job, "outcome.reversed", said, at=now)
    return said


def _collection(outcome: Outcome, invoice: str) -> dict:
    """What the invoice's collection recorded (its amount, its member)."""
    found = Record.objects.filter(brand=outcome.brand, job=outcome.job_id,
                                  kind="outcome.collected", data__invoice=invoice).first()
    return found.data if found is not None else {}


@transaction.atomic
def lose(outcome: Outcome, *, why: str, by: str) -> Outcome:
    """The brand records the outcome lost (a claim denied): a lost end. Its tail, if it has
    one, watches for a payment that still matches."""
    outcome = _locked(outcome)
    if outcome.state != Outcome.State.WAITING:
        raise OutcomeRefused("outcome", f"{outcome.pk} is {outcome.state}: only a waiting "
                                        "outcome is lost")
    now = now_for(outcome.brand, outcome.test_clock)
    common.cancel(outcome.job, f"{outcome.pk}:due", why=f"lost: {why}")
    _end(outcome, Outcome.State.LOST, now, {"why": why, "by": by})
    return outcome


def _end(outcome: Outcome, state: str, now: datetime, data: dict) -> None:
    """A lost end (lapsed or lost): nothing is charged; a tail starts watching."""
    job, terms = outcome.job, spec_of(outcome).outcome
    outcome.state, outcome.ended = state, now
    if terms.tail:
        outcome.tail_until = parse_span(terms.tail).after(now, _zone(job))
        common.arm(job, KIND, f"{outcome.pk}:tail", outcome.tail_until,
                   {"outcome": outcome.pk, "window": "tail"})
    outcome.save(update_fields=["state", "ended", "tail_until"])
    common.record(job, f"outcome.{state}", {"outcome": outcome.pk, "due": outcome.due,
                                            "tail_until": outcome.tail_until, **data}, at=now)


def fire(timer: Timer, instant: datetime) -> str:
    """The outcome's due, a collection's window, or its tail: whichever the timer is."""
    with transaction.atomic():
        outcome = _locked(Outcome(pk=timer.payload["outcome"]))
        what = timer.payload["window"]
        if what == "due":
            return _lapse(outcome, instant)
        if what == "tail":
            common.record(outcome.job, "outcome.tail_ended",
                          {"outcome": outcome.pk, "state": outcome.state}, at=instant)
            return f"outcome {outcome.pk} · its tail ends: {outcome.state}, nothing charged"
        return _final(outcome, timer.payload["invoice"], instant)


def _lapse(outcome: Outcome, instant: datetime) -> str:
    if outcome.state != Outcome.State.WAITING:
        return f"outcome {outcome.pk} · {outcome.state}: nothing lapses"
    job = outcome.job
    _end(outcome, Outcome.State.LAPSED, instant, {})
    body = (f"No payment came in for the result of {common.named(job)} by "
            f"{common.said_at(job, outcome.due)}, so nothing is charged for it"
            + (f"; a payment until {common.said_at(job, outcome.tail_until)} still counts."
               if outcome.tail_until else ".") + " See it here:")
    title = f"Nothing charged: the result of {common.named(job)}"
    common.tell(job, job.subject.contact_email, title, body, key="outcome:buyer",
                link=common.portal_link(job))
    member = _member(job)
    if member:
        email = Member.objects.filter(pk=member).values_list("user__email", flat=True).first()
        common.tell(job, email or "", title, body, key="outcome:member",
                    link=f"{settings.SITE_URL}/delivery/")
    common.tell(job, common.owner_email(job), title, body, key="outcome:owner",
                link=common.console_link(job))
    return f"outcome {outcome.pk} · lapsed: no payment by its due, nothing charged" + (
        f" · tail until {common.at(outcome.tail_until)}" if outcome.tail_until else "")


def _final(outcome: Outcome, invoice: str, instant: datetime) -> str:
    job = outcome.job
    reference = f"{outcome.pk}:window:{invoice}"
    if not ledger.take(reference, brand=job.brand_id, at=instant, to=f"{job.brand_id}:earned"):
        return f"outcome {outcome.pk} · invoice {invoice}: settled already"
    member = _collection(outcome, invoice).get("member", "")
    if member:
        ledger.take(f"{outcome.pk}:pay:{invoice}", brand=job.brand_id, at=instant,
                    to=f"{job.brand_id}:pay:{member}")
    charge = Hold.objects.get(brand_id=job.brand_id, reference=reference).amount
    common.record(job, "outcome.final", {"outcome": outcome.pk, "invoice": invoice,
                                         "charge": charge, "member": member}, at=instant)
    return f"outcome {outcome.pk} · invoice {invoice}: final, {charge} earned"

