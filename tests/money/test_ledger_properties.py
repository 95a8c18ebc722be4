"""Any sequence of ledger operations keeps the books whole (DESIGN decision 10): every posting
balances, every account stays at or above its floor, a refused operation writes nothing, and
each hold ends once (taken or given back), its money where the operation says."""

from datetime import UTC, datetime

from django.db.models import Sum
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from money import ledger
from money.models import Account, Entry, Hold, Posting
from timekeeping.models import Brand

AT = datetime(2027, 1, 1, tzinfo=UTC)
ACCOUNTS = ["customer:a", "customer:b", "brand:revenue", "brand:owed"]
amounts = st.integers(min_value=-5_000, max_value=5_000)
operations = st.lists(st.one_of(
    st.tuples(st.just("post"), st.sampled_from(ACCOUNTS), st.sampled_from(ACCOUNTS), amounts),
    st.tuples(st.just("hold"), st.sampled_from(ACCOUNTS[:2]), st.integers(1, 3_000),
              st.integers(0, 5)),
    st.tuples(st.just("take"), st.integers(0, 5)),
    st.tuples(st.just("give_back"), st.integers(0, 5)),
), max_size=30)


class LedgerProperties(TestCase):
    @settings(max_examples=150, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(steps=operations)
    def test_any_sequence_keeps_every_posting_balanced_and_every_floor(self, steps):
        self.brand = Brand.objects.create(name="Books", slug="books").pk
        ledger.account("customer:a", "USD", brand=self.brand, floor=0)
        ledger.account("customer:b", "USD", brand=self.brand, floor=-1_000)
        ledger.post(brand=self.brand, kind="seed", reference="seed", currency="USD", at=AT,
                    lines=[("customer:a", 4_000), ("customer:b", 1_000), ("brand:owed", -5_000)])
        for step in steps:
            before = Entry.objects.count()
            try:
                self._do(step)
            except ledger.LedgerRefused as refused:
                assert refused.code in ("floor", "unbalanced")
                assert Entry.objects.count() == before  # whole or absent
        for posting in Posting.objects.all():
            assert posting.entries.aggregate(total=Sum("amount"))["total"] == 0
        for account in Account.objects.exclude(floor=None):
            assert ledger.balance(account.key, brand=self.brand) >= account.floor, account.key
        assert Entry.objects.aggregate(total=Sum("amount"))["total"] == 0
        for hold in Hold.objects.all():
            moved = Posting.objects.filter(reference=hold.reference).exclude(kind="hold")
            assert moved.count() == (0 if hold.state == Hold.State.HELD else 1)

    def _do(self, step) -> None:
        if step[0] == "post":
            _, giver, taker, amount = step
            ledger.post(brand=self.brand, kind="move", reference="move", currency="USD", at=AT,
                        lines=[(giver, -amount), (taker, amount)])
        elif step[0] == "hold":
            _, payer, amount, n = step
            ledger.hold(brand=self.brand, reference=f"h{n}", payer=payer, amount=amount,
                        currency="USD", until=AT, at=AT)
        elif step[0] == "take":
            ledger.take(f"h{step[1]}", brand=self.brand, at=AT)
        else:
            ledger.give_back(f"h{step[1]}", brand=self.brand, at=AT)
