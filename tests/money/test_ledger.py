from datetime import UTC, datetime

import pytest

from money import ledger
from money.models import Posting

AT = datetime(2026, 11, 30, 12, tzinfo=UTC)


def test_every_posting_balances_in_whole_minor_units(db):
    with pytest.raises(ledger.LedgerRefused, match="unbalanced"):
        ledger.post(kind="x", reference="r", currency="GBP", at=AT, lines=[("a", 100), ("b", -99)])
    with pytest.raises(ledger.LedgerRefused, match="amount_invalid"):
        ledger.post(kind="x", reference="r", currency="GBP", at=AT, lines=[("a", 1.5), ("b", -1.5)])
    assert not Posting.objects.exists()
    ledger.post(kind="x", reference="r", currency="GBP", at=AT, lines=[("a", 100), ("b", -100)])
    assert (ledger.balance("a"), ledger.balance("b")) == (100, -100)


def test_a_hold_is_taken_or_given_back_once(db):
    ledger.hold(reference="o:1", payer="ines", amount=1250, currency="GBP", until=AT, at=AT)
    assert (ledger.balance("ines"), ledger.balance("held:ines")) == (-1250, 1250)
    assert ledger.give_back("o:1", at=AT) is True
    assert ledger.give_back("o:1", at=AT) is False  # let go of: nothing is held any more
    assert ledger.take("o:1", at=AT) is False
    assert (ledger.balance("ines"), ledger.balance("held:ines")) == (0, 0)
    ledger.hold(reference="o:2", payer="ines", amount=900, currency="GBP", until=AT, at=AT)
    assert ledger.take("o:2", at=AT, to="shop:earned") is True
    assert ledger.balance("shop:earned:GBP") == 900


def test_a_floor_refuses_the_whole_posting(db):
    ledger.account("till", "GBP", floor=0)
    with pytest.raises(ledger.LedgerRefused, match="floor"):
        ledger.post(kind="x", reference="r", currency="GBP", at=AT,
                    lines=[("till", -1), ("cash", 1)])
    assert ledger.balance("cash") == 0
