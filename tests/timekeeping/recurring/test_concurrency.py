"""Two tick processes at once over acceptance windows (PostgreSQL, real processes): every
window closes once and every job's charge is released exactly once."""

from collections import Counter
from datetime import UTC, datetime

import pytest
from django.contrib.auth import get_user_model

from money.models import Posting
from tests.processes import needs_postgres, start_manage
from timekeeping import clocks, manifests
from timekeeping.basics import wallclock
from timekeeping.jobs import lifecycle
from timekeeping.models import Brand, Record, Subject

from .test_charges import document

pytestmark = [needs_postgres, pytest.mark.django_db(transaction=True)]

T0 = datetime(2026, 1, 5, 14, tzinfo=UTC)
BRANDS, JOBS = 10, 5


def test_two_ticks_at_once_release_each_charge_exactly_once():
    users = get_user_model().objects
    for b in range(BRANDS):
        brand = Brand.objects.create(name=f"Brand {b}", slug=f"brand-{b}",
                                     owner=users.create_user(f"owner{b}"))
        manifests.load(brand, document(final_after="1d"))
        with wallclock.fixed(T0):
            for n in range(JOBS):
                subject = Subject.objects.create(brand=brand, kind="client", key=str(n),
                                                 name=f"S{n}")
                lifecycle.end(clocks.order(brand=brand, service="work", subject=subject),
                              by="test")
    ticks = [start_manage("tick"), start_manage("tick")]
    outputs = [process.communicate(timeout=300) for process in ticks]
    assert [process.returncode for process in ticks] == [0, 0], outputs
    taken = Counter(Posting.objects.filter(kind="take").values_list("reference", flat=True))
    assert len(taken) == BRANDS * JOBS and set(taken.values()) == {1}
    assert Record.objects.filter(kind="job.accepted").count() == BRANDS * JOBS
