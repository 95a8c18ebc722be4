"""Any sequence of payments, reversals, a loss and days passing on an outcome keeps its books
whole: every posting balances, each invoice's share is held, then taken or given back once, and
once every window has closed the brand has earned exactly the share of what was collected and
not reversed (hypothesis, through `timekeeping.recurring.outcomes` and the tick)."""

from datetime import UTC, datetime, timedelta

from django.contrib.auth import get_user_model
from django.db.models import Sum
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from money import ledger
from money.models import Entry, Hold, Posting
from timekeeping import clocks, manifests
from timekeeping.models import Brand, Outcome, Record, Subject
from timekeeping.recurring import outcomes
from timekeeping.tick import test_clocks

START = datetime(2027, 9, 20, 13, tzinfo=UTC)
steps = st.lists(st.one_of(
    st.tuples(st.just("pay"), st.integers(0, 4), st.integers(1, 10**7),
              st.sampled_from(["bank", "card"])),
    st.tuples(st.just("reverse"), st.integers(0, 4)),
    st.tuples(st.just("lose")),
    st.tuples(st.just("wait"), st.integers(1, 90)),
), max_size=12)


def document() -> dict:
    work = {"subject": {"kind": "client"}, "steps": {"claim": {}},
            "price": {"share": "33%", "currency": "USD"},
            "outcome": {"due": "30d", "window": {"bank": "20d", "card": "45d"},
                        "collect": "each", "tail": "15d"}}
    return {"calendar": {"zone": "America/New_York", "weekends": []},
            "services": {"recovery": work}}


class OutcomeProperties(TestCase):
    @settings(max_examples=40, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow])
    @given(plan=steps)
    def test_any_sequence_keeps_the_books_whole(self, plan):
        owner = get_user_model().objects.create_user("o", email="o@example.test")
        brand = Brand.objects.create(name="N", slug="n", owner=owner)
        manifests.load(brand, document())
        clock = test_clocks.create(brand=brand, name="t", frozen_time=START)
        subject = Subject.objects.create(brand=brand, test_clock=clock, kind="client", key="1",
                                         name="H", zone="America/New_York")
        outcome = clocks.order(brand=brand, service="recovery", subject=subject).outcome
        for step in plan:
            before = Entry.objects.count()
            try:
                if step[0] == "pay":
                    outcomes.collect(outcome, amount=step[2], currency="USD", method=step[3],
                                     invoice=f"I{step[1]}", by="t")
                elif step[0] == "reverse":
                    outcomes.reverse(outcome, invoice=f"I{step[1]}", why="refund", by="t")
                elif step[0] == "lose":
                    outcomes.lose(outcome, why="denied", by="t")
                else:
                    clock.refresh_from_db()
                    test_clocks.advance(clock, to=clock.frozen_time + timedelta(days=step[1]))
            except outcomes.OutcomeRefused:
                assert Entry.objects.count() == before  # whole or absent
        clock.refresh_from_db()
        test_clocks.advance(clock, to=clock.frozen_time + timedelta(days=50))  # every window
        for posting in Posting.objects.all():
            assert posting.entries.aggregate(total=Sum("amount"))["total"] == 0
        assert (Entry.objects.aggregate(total=Sum("amount"))["total"] or 0) == 0
        for hold in Hold.objects.all():
            assert hold.state != Hold.State.HELD
            moved = Posting.objects.filter(reference=hold.reference).exclude(kind="hold")
            assert moved.count() == 1
        reversed_ = set(Record.objects.filter(kind="outcome.reversed").values_list(
            "data__invoice", flat=True))
        kept = [r.data for r in Record.objects.filter(kind="outcome.collected")
                if r.data["invoice"] not in reversed_]
        earned = ledger.balance(f"{brand.pk}:earned:USD", brand=brand.pk)
        assert earned == sum(d["charge"] for d in kept)
        assert all(d["charge"] == d["amount"] * 33 // 100 for d in kept)
        found = Outcome.objects.get(pk=outcome.pk)
        assert found.collected == sum(d["amount"] for d in kept)
        assert (found.state == "won") == Record.objects.filter(
            kind="outcome.collected").exists()
