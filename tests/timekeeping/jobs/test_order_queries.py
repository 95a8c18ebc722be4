"""What ordering a job costs in statements (issue 32): the demo's annual return, three
jurisdictions: five dates and their reminders. A date's reminders are armed together
(`timers.arming.rearm_many`), so the count no longer grows with its rungs: 126 statements
before, 59 after; and a new job's clocks, dates, timers and records are each written in one
statement (`timers.arming.gathering`), a step's reads cut to what it could touch, and the
job looked for before it is made instead of a savepoint: 20; and the job's deadline, written
before its filing date, reads that date as the order opened it and is written held at once: 18
now (17 on PostgreSQL, which sends no BEGIN of its own). The bound fails a regression."""

import io

import pytest
from django.core.management import call_command

from timekeeping import clocks
from timekeeping.models import Brand, Job, Occurrence, Subject, Timer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]


def test_ordering_the_annual_return_costs_a_bounded_number_of_statements(
        settings, django_assert_max_num_queries):
    settings.DEBUG = True
    call_command("demo", stdout=io.StringIO())
    tax = Brand.objects.get(slug="demo-tax")
    model = Job.objects.filter(brand=tax, service="annual-return").first()
    like = model.subject
    subject = Subject.objects.create(brand=tax, kind=like.kind, key="order-queries",
                                     name="Order Queries Ltd", zone=like.zone, input=like.input)
    # 15 on both databases (PostgreSQL's COPY of the timers and records counted, SQLite's BEGIN
    # and INSERTs); 18 before a new job's asks and deadlines were known without a read
    # (`jobs.common.made_here`), when PostgreSQL's count left out its COPY of the records.
    with django_assert_max_num_queries(15):
        job = clocks.order(brand=tax, service="annual-return", subject=subject, period="2031",
                           input=model.input, by="a test")
    dates = Occurrence.objects.filter(clock__job=job)
    armed = Timer.objects.filter(brand=tax, state=Timer.State.ARMED,
                                 owner_id__in=[date.label for date in dates])
    assert dates.count() == 5 and armed.count() == 16  # its five dates and their reminders
    assert {key.rsplit(":", 1)[0] for key in armed.filter(key__endswith=":date")
            .values_list("key", flat=True)} == {date.label for date in dates}
