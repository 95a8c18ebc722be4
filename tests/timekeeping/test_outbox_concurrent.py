"""Two outbox sweeps at once on PostgreSQL: the second, ranking the same rows while the first
holds the first of them, takes the next in turn (issue 31, "Fair shares")."""

import threading
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection, transaction

from tests.processes import needs_postgres
from timekeeping.models import Brand, Delivery
from timekeeping.timers import outbox

pytestmark = [needs_postgres, pytest.mark.django_db(transaction=True)]

T0 = datetime(2026, 12, 2, 9, tzinfo=ZoneInfo("Asia/Tokyo"))


def test_a_sweep_beside_one_holding_the_first_of_the_rank_takes_the_next_in_turn():
    brands = [Brand.objects.create(name=f"Brand {n}", slug=f"brand-{n}") for n in range(2)]
    Delivery.objects.bulk_create([
        Delivery(brand=brands[n % 2], channel=Delivery.Channel.EMAIL,
                 payload={"to": ["a@example.test"], "subject": f"n{n}", "body": "b"},
                 idempotency_key=f"k:{n}", next_attempt=T0, created=T0 + timedelta(seconds=n))
        for n in range(8)])
    held, release = threading.Event(), threading.Event()

    def first_sweep():
        try:
            with transaction.atomic():
                list(Delivery.objects.select_for_update().filter(idempotency_key__in=["k:0",
                                                                                      "k:1"]))
                held.set()
                release.wait(timeout=30)
        finally:
            connection.close()

    holder = threading.Thread(target=first_sweep)
    holder.start()
    try:
        assert held.wait(timeout=30)
        claimed = outbox._claim(T0 + timedelta(minutes=1), 2)
    finally:
        release.set()
        holder.join(timeout=30)
    # Each brand's second oldest: the next in turn after the rows the first sweep holds.
    assert sorted(d.idempotency_key for d in claimed) == ["k:2", "k:3"]
