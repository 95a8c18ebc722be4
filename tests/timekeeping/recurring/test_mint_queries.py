"""What minting costs in statements (issue 32): a tax practice's clients on its Tax Plan, whose
schedule mints each client's annual return on 1 February. Counted as the tick's statements
for more clients less those for fewer, so what the tick spends once (its phases, its brand
clocks) is left out: each return minted, ordered with its five dates and their reminders,
costs a bounded number of statements, and a regression fails."""

import json
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from timekeeping import manifests
from timekeeping.basics import wallclock
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Brand, Job, Record, Subject
from timekeeping.recurring import plans
from timekeeping.tick import phases

SUBSCRIBED = datetime(2028, 1, 25, 14, tzinfo=UTC)  # 09:00 in New York
MINTED = datetime(2028, 2, 1, 14, 5, tzinfo=UTC)  # the mint owed at 09:00 New York
CLIENT = {"jurisdictions": ["US", "US-CA", "US-NY"], "earliest_credit_expiry": "2046-12-31"}
# Measured: 1 on PostgreSQL (its use of the plan's allowance), whose batch writes its orders'
# new rows together (`timers.made`); 8.5 on SQLite, which writes them as each order makes
# them, in a savepoint of its own. 9 on both before that; 17 before a batch of mints read its
# subscriptions, subjects and held periods at once and a new job's asks and deadlines were
# known without a read (the 11.5 written here before counted what the first tick of a process
# reads once among the few's statements; the first tick now reads it). 72.5 before orders
# gathered their writes.
PER_RETURN = {"postgresql": 1.5, "sqlite": 10}


def subscribed(actors, slug: str, clients: int) -> Brand:
    """A practice of `clients` in New York, each on the Tax Plan from 25 January 2028."""
    brand = Brand.objects.create(name=f"Practice {slug}", slug=slug, owner=actors["owner"],
                                 plan="team")
    manifests.load(brand, json.loads(TAX_MANIFEST.read_text()))
    subjects = Subject.objects.bulk_create(
        [Subject(brand=brand, kind="taxpayer", key=f"{slug}-{n}", name=f"Client {n}",
                 zone="America/New_York", input=CLIENT) for n in range(clients)])
    with wallclock.fixed(SUBSCRIBED):
        for subject in subjects:
            plans.subscribe(subject=subject, service="tax-plan", anchor=SUBSCRIBED.date())
    return brand


def _mint(actors, slug: str, clients: int) -> tuple[int, int]:
    """A practice of `clients` on the Tax Plan, and its February tick: the tick's statements,
    and the returns it opened."""
    brand = subscribed(actors, slug, clients)
    with wallclock.fixed(MINTED), CaptureQueriesContext(connection) as tick:
        phases.run_once(now=MINTED, brand_ids=[brand.pk], sweep=False)
    return len(tick), Job.objects.filter(brand=brand, service="annual-return").count()


@pytest.mark.django_db(transaction=True)
def test_a_return_minted_costs_a_bounded_number_of_statements(actors, settings):
    settings.DEBUG = True
    _mint(actors, "first", 1)  # what the first tick of a process reads once, read
    few, opened_few = _mint(actors, "few", 3)
    many, opened_many = _mint(actors, "many", 9)
    assert (opened_few, opened_many) == (3, 9)
    assert Record.objects.filter(kind="schedule.minted").count() == 13
    per_return = (many - few) / 6
    assert per_return <= PER_RETURN[connection.vendor], f"{per_return:.1f} a return minted"
