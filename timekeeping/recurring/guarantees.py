"""A date sold as a promise (S12, `clocks.<c>.guarantee`): a penalty notice for the date is
credited to the customer from the brand's line, up to the guarantee's cap for that date.

    credit(job=…, clock="file", amount=25000, currency="USD", notice="CP161", item="US", by=…)

Only a date the brand answers for (owner `brand` or `of_record`) carries the promise. What is
credited for a date is the balance of its own account (`<brand>:guarantee:<clock>`), so the cap
holds across notices and the ledger keeps the running total; every credit is a balanced
posting (the guarantee's account down, the customer's up).

What a notice is credited, in order:

1. `after` (a step of the job's service, or another service): the promise starts only once
   that step is recorded on the job, or a job of that service for the same subject (in the
   same world) has ended. A notice recorded before credits nothing, and the record says why.
2. `excludes: "held"`: of the time the date was late (from its late instant until it was kept,
   or until now), the part the job spent waiting on the customer (an ask of the job open: the
   same time its deadlines are held) is not covered. The penalty is shared out by time:
   `penalty × held ÷ late` is not covered, rounded down, so the credit rounds in the
   customer's favour.
3. The cap: what is left of `up_to` for the date.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F

from money import ledger
from timekeeping import clocks
from timekeeping.basics import shown
from timekeeping.models import Ask, Clock, Job, Occurrence
from timekeeping.specs.current import services_of
from timekeeping.timers import records
from timekeeping.timers.firing import now_for

ITEMS_NAMED = 5  # a refusal names at most this many items


@transaction.atomic
def credit(*, job: Job, clock: str, amount: int, currency: str, notice: str, item: str = "",
           by: str = "") -> dict:
    row = _guaranteed(job, clock)
    promise = clocks.spec_of(row).guarantee
    cap = promise["up_to"]
    if currency != cap["currency"]:
        raise clocks.OrderRefused("currency", f"the guarantee is in {cap['currency']}, not "
                                              f"{currency}")
    now = now_for(job.brand, job.test_clock)
    missed = _missed(row, item, now)
    waiting = waiting_on(promise, job, now)
    held, late = held_time(job, missed, now) if promise.get("excludes") == "held" and missed \
        else (timedelta(0), timedelta(0))
    covered = 0 if waiting else amount - (amount * held // late if late else 0)
    line = f"{job.brand_id}:guarantee:{row.pk}"
    ledger.account(line, currency, brand=job.brand_id)
    credited = -ledger.balance(line, brand=job.brand_id)
    given = max(0, min(covered, cap["amount"] - credited))
    if given:
        ledger.post(brand=job.brand_id, kind="guarantee.credit", reference=f"{row.pk}:{notice}",
                    currency=currency, at=now, lines=[
                        (line, -given), (f"{job.brand_id}:customer:{job.subject_id}", given)])
    said = {"clock": row.pk, "name": clock, "item": missed.item if missed else item,
            "notice": notice, "penalty": amount, "covered": covered, "credited": given,
            "left": cap["amount"] - credited - given, "currency": currency,
            "waiting_on": waiting, "held_seconds": int(held.total_seconds()),
            "late_seconds": int(late.total_seconds()), "by": by}
    said["why"] = why(said)
    records.write("guarantee.credited", brand=job.brand, instant=now,
                  test_clock=job.test_clock, subject=job.subject_id, job=job.pk, data=said)
    return said


def _guaranteed(job: Job, clock: str) -> Clock:
    row = job.clocks.filter(name=clock).first()
    if row is None:
        raise clocks.OrderRefused("clock", f"{clock!r} is not a clock of job {job.pk}")
    if not clocks.spec_of(row).guarantee:
        raise clocks.OrderRefused("clock", f"{clock!r} carries no guarantee")
    if row.owner not in ("brand", "of_record"):
        raise clocks.OrderRefused("clock", f"{clock!r} is the {row.owner}'s date: a guarantee "
                                           "covers a date the brand answers for")
    return row


def _missed(row: Clock, item: str, now: datetime) -> Occurrence | None:
    """The date the notice is for: the one missed (late by `now`, not kept before its late
    instant), of `item` when given. None when none was missed: nothing to share out."""
    dates = row.occurrences.all()
    if item:
        if not dates.filter(item=item).exists():
            raise clocks.OrderRefused("item", f"{item!r} is not an item of {row.name!r}")
        dates = dates.filter(item=item)
    missed = list(dates.filter(late_from__lte=now).exclude(
        status=Occurrence.Status.SATISFIED, settled__lt=F("late_from")
    ).order_by("-late_from")[:50])  # the latest first; a clock with `every` has many
    items = sorted({each.item for each in missed})
    if len(items) > 1:
        raise clocks.OrderRefused("item", f"{row.name!r} was missed for {len(items)} items "
                                          f"({', '.join(items[:ITEMS_NAMED])}): name the item "
                                          "the notice is for")
    return missed[0] if missed else None


def waiting_on(promise: dict, job: Job, now: datetime) -> str:
    """What the promise still waits for before it covers anything, in words ("" once it has
    started): `after` names a step of the job's service or another service."""
    after = promise.get("after")
    if not after:
        return ""
    if after in services_of(job.bundle)[job.service].steps:
        return "" if after in job.steps_done else f"'{after}' is recorded"
    ended = Job.objects.filter(brand_id=job.brand_id, test_clock_id=job.test_clock_id,
                               subject_id=job.subject_id, service=after,
                               state=Job.State.ENDED, ended__lte=now).exists()
    return "" if ended else f"the {shown.service(after)} work is done"


def held_time(job: Job, missed: Occurrence, now: datetime) -> tuple[timedelta, timedelta]:
    """(held, late): how long the date was late (from its late instant until it was kept, or
    `now`) and how much of that the job waited on the customer (an ask of the job open)."""
    start = missed.late_from
    end = missed.settled if missed.status == Occurrence.Status.SATISFIED and missed.settled \
        else now
    end = min(end, now)
    if end <= start:
        return timedelta(0), timedelta(0)
    held, reach = timedelta(0), start
    for opened, closed in sorted(_asked(job, now)):
        low, high = max(opened, reach), min(closed, end)
        if high > low:  # spans may overlap: count each instant once
            held += high - low
            reach = high
    return held, end - start


def _asked(job: Job, now: datetime) -> list[tuple[datetime, datetime]]:
    """When the job waited on a party: each ask of the job, from its opening until it was
    answered, lapsed (its last expiry) or closed with the job (or until now, still open)."""
    spans = []
    # A job has an ask per step at most: a handful of rows.
    for ask in Ask.objects.filter(brand_id=job.brand_id, job=job).only(
            "opened", "answered", "expires", "state"):
        closed = {Ask.State.ANSWERED: ask.answered, Ask.State.LAPSED: ask.expires,
                  Ask.State.CLOSED: job.ended}.get(ask.state) or now
        spans.append((ask.opened, min(closed, now)))
    return spans


def why(said: dict) -> str:
    """What a notice was credited, and why not more, in words (the record's sentence)."""
    def money(amount: int) -> str:
        return shown.money(amount, said["currency"])

    if said["waiting_on"]:
        return (f"Nothing was credited: the promise covers penalties once "
                f"{said['waiting_on']}.")
    text = f"{money(said['credited'])} was credited"
    if said["held_seconds"]:
        text += (f"; {money(said['penalty'] - said['covered'])} is not covered: for "
                 f"{shown.span(timedelta(seconds=said['held_seconds']))} of the "
                 f"{shown.span(timedelta(seconds=said['late_seconds']))} the date was late, "
                 "the work waited on the customer")
    if said["covered"] > said["credited"]:
        text += "; the promise's cap for the date is reached"
    return text + f"; {money(said['left'])} of the promise is left."
