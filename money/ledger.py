"""The ledger: the only writer of money (DESIGN decision 10).

Every posting balances (its entries sum to zero in one currency) and no account goes below
its floor; a posting that would break either is refused whole (`LedgerRefused`). Holds:

    hold(brand=…, reference=…, payer="customer:7", amount=1250, currency="GBP", until=instant,
         at=now)
    take(reference, brand=…, at=now)        # the held money is earned
    give_back(reference, brand=…, at=now)   # the held money returns to the payer (the reverse)

Every function takes the instant from its caller: money never reads a clock. Every function
takes the brand whose books it keeps (its id) and reads and writes only that brand's rows, so
a database sharded by brand finds them on one shard (DESIGN "Scale").
"""

from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction
from django.db.models import Sum

from money.models import Account, Entry, Hold, Posting


class LedgerRefused(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code


def account(key: str, currency: str, *, brand: str, floor: int | None = None) -> Account:
    try:
        found, _ = Account.objects.get_or_create(
            brand_id=brand, key=key, defaults={"currency": currency, "floor": floor})
    except IntegrityError:  # the key is taken, and not by this brand's books
        raise LedgerRefused("brand_mismatch", f"{key} is not an account of {brand}") from None
    if found.currency != currency:
        raise LedgerRefused("currency_mismatch", f"{key} keeps {found.currency}, not {currency}")
    return found


def balance(key: str, *, brand: str) -> int:
    return Entry.objects.filter(brand_id=brand, account__key=key).aggregate(
        total=Sum("amount"))["total"] or 0


@transaction.atomic
def post(*, brand: str, kind: str, reference: str, currency: str,
         lines: list[tuple[str, int]], at: datetime) -> Posting:
    if any(not isinstance(amount, int) or isinstance(amount, bool) for _, amount in lines):
        raise LedgerRefused("amount_invalid", "amounts are whole minor units")
    if sum(amount for _, amount in lines) != 0:
        raise LedgerRefused("unbalanced", f"the {kind} posting for {reference} does not balance")
    accounts = {key: account(key, currency, brand=brand) for key, _ in lines}
    locked = {a.pk: a for a in Account.objects.select_for_update().filter(
        brand_id=brand, pk__in=[a.pk for a in accounts.values()])}
    for key, amount in lines:
        floor = locked[accounts[key].pk].floor
        if floor is not None and amount < 0 and balance(key, brand=brand) + amount < floor:
            raise LedgerRefused("floor", f"{key} would fall below its floor of {floor}")
    posting = Posting.objects.create(brand_id=brand, kind=kind, reference=reference,
                                     currency=currency, at=at)
    Entry.objects.bulk_create([Entry(brand_id=brand, posting=posting, account=accounts[key],
                                     amount=amount) for key, amount in lines])
    return posting


def _held(payer: str) -> str:
    return f"held:{payer}"


@transaction.atomic
def hold(*, brand: str, reference: str, payer: str, amount: int, currency: str,
         until: datetime, at: datetime) -> Hold:
    existing = Hold.objects.filter(brand_id=brand, reference=reference).first()
    if existing is not None:
        return existing
    post(brand=brand, kind="hold", reference=reference, currency=currency, at=at,
         lines=[(payer, -amount), (_held(payer), amount)])
    return Hold.objects.create(brand_id=brand, reference=reference,
                               payer=account(payer, currency, brand=brand), amount=amount,
                               currency=currency, until=until)


@transaction.atomic
def take(reference: str, *, brand: str, at: datetime, to: str = "earned") -> bool:
    found = Hold.objects.select_for_update().filter(brand_id=brand, reference=reference,
                                                    state=Hold.State.HELD).first()
    if found is None:
        return False
    post(brand=brand, kind="take", reference=reference, currency=found.currency, at=at,
         lines=[(_held(found.payer.key), -found.amount), (f"{to}:{found.currency}",
                                                          found.amount)])
    found.state = Hold.State.TAKEN
    found.save(update_fields=["state"])
    return True


@transaction.atomic
def give_back(reference: str, *, brand: str, at: datetime) -> bool:
    """The hold's reverse: the held money returns to the payer."""
    found = Hold.objects.select_for_update().filter(brand_id=brand, reference=reference,
                                                    state=Hold.State.HELD).first()
    if found is None:
        return False
    post(brand=brand, kind="give_back", reference=reference, currency=found.currency, at=at,
         lines=[(_held(found.payer.key), -found.amount), (found.payer.key, found.amount)])
    found.state = Hold.State.GIVEN_BACK
    found.save(update_fields=["state"])
    return True


def due_holds(*, brand: str, prefix: str, now: datetime, limit: int = 500) -> list[Hold]:
    """The brand's held holds whose moment has passed (and not waiting out a refusal), oldest
    first."""
    found = Hold.objects.filter(brand_id=brand, state=Hold.State.HELD, until__lte=now,
                                reference__startswith=prefix).exclude(retry_after__gt=now)
    return list(found.order_by("until")[:limit])


def refused_until(hold_row: Hold, *, code: str, retry_after: datetime) -> None:
    Hold.objects.filter(brand_id=hold_row.brand_id, pk=hold_row.pk).update(
        retry_after=retry_after, last_refusal=code)
