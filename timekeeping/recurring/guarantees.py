"""A date sold as a promise (S12, `clocks.<c>.guarantee`): a penalty notice for the date is
credited to the customer from the brand's line, up to the guarantee's cap for that date.

    credit(job=…, clock="file", amount=25000, currency="USD", notice="CP161", by=…)

Only a date the brand answers for (owner `brand` or `of_record`) carries the promise. What is
credited for a date is the balance of its own account (`<brand>:guarantee:<clock>`), so the cap
holds across notices and the ledger keeps the running total; every credit is a balanced
posting (the guarantee's account down, the customer's up).
"""

from __future__ import annotations

from django.db import transaction

from money import ledger
from timekeeping import clocks
from timekeeping.models import Job
from timekeeping.timers import records
from timekeeping.timers.firing import now_for


@transaction.atomic
def credit(*, job: Job, clock: str, amount: int, currency: str, notice: str,
           by: str = "") -> dict:
    row = job.clocks.filter(name=clock).first()
    if row is None:
        raise clocks.OrderRefused("clock", f"{clock!r} is not a clock of job {job.pk}")
    promise = clocks.spec_of(row).guarantee
    if not promise:
        raise clocks.OrderRefused("clock", f"{clock!r} carries no guarantee")
    if row.owner not in ("brand", "of_record"):
        raise clocks.OrderRefused("clock", f"{clock!r} is the {row.owner}'s date: a guarantee "
                                           "covers a date the brand answers for")
    cap = promise["up_to"]
    if currency != cap["currency"]:
        raise clocks.OrderRefused("currency", f"the guarantee is in {cap['currency']}, not "
                                              f"{currency}")
    line = f"{job.brand_id}:guarantee:{row.pk}"
    ledger.account(line, currency, brand=job.brand_id)
    credited = -ledger.balance(line, brand=job.brand_id)
    given = max(0, min(amount, cap["amount"] - credited))
    if given:
        ledger.post(brand=job.brand_id, kind="guarantee.credit", reference=f"{row.pk}:{notice}",
                    currency=currency, at=now_for(job.brand, job.test_clock),
                    lines=[(line, -given), (f"{job.brand_id}:customer:{job.subject_id}",
                                            given)])
    said = {"clock": row.pk, "name": clock, "notice": notice, "penalty": amount,
            "credited": given, "left": cap["amount"] - credited - given, "currency": currency,
            "by": by}
    records.write("guarantee.credited", brand=job.brand,
                  instant=now_for(job.brand, job.test_clock), test_clock=job.test_clock,
                  subject=job.subject_id, job=job.pk, data=said)
    return said
