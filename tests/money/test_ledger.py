from datetime import UTC, datetime

import pytest

from money import ledger
from money.models import Account, Hold, Posting
from timekeeping.models import Brand

AT = datetime(2026, 11, 30, 12, tzinfo=UTC)


def test_every_posting_balances_in_whole_minor_units(brand):
    b = brand.pk
    with pytest.raises(ledger.LedgerRefused, match="unbalanced"):
        ledger.post(brand=b, kind="x", reference="r", currency="GBP", at=AT,
                    lines=[("a", 100), ("b", -99)])
    with pytest.raises(ledger.LedgerRefused, match="amount_invalid"):
        ledger.post(brand=b, kind="x", reference="r", currency="GBP", at=AT,
                    lines=[("a", 1.5), ("b", -1.5)])
    assert not Posting.objects.exists()
    ledger.post(brand=b, kind="x", reference="r", currency="GBP", at=AT,
                lines=[("a", 100), ("b", -100)])
    assert (ledger.balance("a", brand=b), ledger.balance("b", brand=b)) == (100, -100)


def test_a_hold_is_taken_or_given_back_once(brand):
    b = brand.pk
    ledger.hold(brand=b, reference="o:1", payer="ines", amount=1250, currency="GBP", until=AT,
                at=AT)
    assert (ledger.balance("ines", brand=b), ledger.balance("held:ines", brand=b)) == (-1250,
                                                                                       1250)
    assert ledger.give_back("o:1", brand=b, at=AT) is True
    assert ledger.give_back("o:1", brand=b, at=AT) is False  # nothing is held any more
    assert ledger.take("o:1", brand=b, at=AT) is False
    assert (ledger.balance("ines", brand=b), ledger.balance("held:ines", brand=b)) == (0, 0)
    ledger.hold(brand=b, reference="o:2", payer="ines", amount=900, currency="GBP", until=AT,
                at=AT)
    assert ledger.take("o:2", brand=b, at=AT, to="shop:earned") is True
    assert ledger.balance("shop:earned:GBP", brand=b) == 900


def test_a_floor_refuses_the_whole_posting(brand):
    ledger.account("till", "GBP", brand=brand.pk, floor=0)
    with pytest.raises(ledger.LedgerRefused, match="floor"):
        ledger.post(brand=brand.pk, kind="x", reference="r", currency="GBP", at=AT,
                    lines=[("till", -1), ("cash", 1)])
    assert ledger.balance("cash", brand=brand.pk) == 0


def test_it_keeps_each_brands_books_apart(brand):
    """Every row carries the brand whose books it is; one brand's hold, balance or account is
    not another's, and a posting to another brand's account is refused whole."""
    other = Brand.objects.create(name="Other", slug="other")
    ledger.hold(brand=brand.pk, reference="o:1", payer="ines", amount=500, currency="GBP",
                until=AT, at=AT)
    assert ledger.balance("ines", brand=other.pk) == 0
    assert ledger.take("o:1", brand=other.pk, at=AT) is False
    assert ledger.due_holds(brand=other.pk, prefix="o:", now=AT) == []
    assert [h.reference for h in ledger.due_holds(brand=brand.pk, prefix="o:", now=AT)] == [
        "o:1"]
    with pytest.raises(ledger.LedgerRefused, match="brand_mismatch"):
        ledger.post(brand=other.pk, kind="x", reference="r", currency="GBP", at=AT,
                    lines=[("ines", 1), ("cash", -1)])
    assert not Posting.objects.filter(brand=other).exists()
    assert set(Account.objects.values_list("brand_id", flat=True)) == {brand.pk}
    assert Hold.objects.get().brand_id == brand.pk
    assert {entry.brand_id for p in Posting.objects.all() for entry in p.entries.all()} == {
        brand.pk}
