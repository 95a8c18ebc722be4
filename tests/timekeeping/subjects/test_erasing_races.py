"""An erasure and an order or an invitation at the same moment, on PostgreSQL: whichever reads
the subject before the erasure commits waits for it on the subject's row, and is then refused;
nothing new is ever left on an erased subject (`clocks.lock_unerased`)."""

import threading
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from django.db import connection, transaction

from tests.processes import needs_postgres
from tests.timekeeping.console.conftest import tax
from timekeeping import clocks, manifests
from timekeeping.access import invitations
from timekeeping.basics import wallclock
from timekeeping.models import Invitation, Job
from timekeeping.subjects import erasing, making

pytestmark = [needs_postgres, pytest.mark.django_db(transaction=True)]

T0 = datetime(2028, 3, 1, 9, 30, tzinfo=ZoneInfo("America/New_York"))


def _beside_an_erasure(subject, act) -> dict:
    """`act(subject)` in a thread of its own, started while an erasure of the subject is
    written and not yet committed (the thread's copy of the subject says it is not erased);
    what it answered or raised."""
    outcome: dict = {}

    def other():
        try:
            with wallclock.fixed(T0):
                outcome["made"] = act(subject)
        except (clocks.OrderRefused, invitations.InvitationRefused) as refused:
            outcome["refused"] = str(refused)
        finally:
            connection.close()

    thread = threading.Thread(target=other)
    with wallclock.fixed(T0), transaction.atomic():
        erasing.erase(subject, by="the test")
        thread.start()  # it waits on the subject's row until this commits
    thread.join(timeout=60)
    assert not thread.is_alive()
    return outcome


@pytest.fixture
def juniper(brand):
    manifests.load(brand, tax())
    with wallclock.fixed(T0):
        return making.make(brand, kind="taxpayer", key="12-3456789", name="Juniper Labs",
                           contact_email="books@juniper.example")


def test_an_order_that_read_the_subject_before_the_erasure_is_refused_after_it(juniper):
    outcome = _beside_an_erasure(juniper, lambda subject: clocks.order(
        brand=subject.brand, service="estimate", subject=subject, period="2028-Q2"))
    assert "was erased on 2028-03-01" in outcome["refused"]
    assert not Job.objects.filter(subject=juniper).exists()


def test_an_invitation_that_read_the_subject_before_the_erasure_is_refused_after_it(juniper):
    outcome = _beside_an_erasure(juniper, lambda subject: invitations.invite(
        subject=subject, email="books@juniper.example", by=None, now=T0))
    assert "nobody can be invited" in outcome["refused"]
    assert not Invitation.objects.exists()
