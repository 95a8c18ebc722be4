"""The world every door test asks into (tests/test_authorization.py, the hostile requests,
the schema tests): brands A and B with services, tables, a subject, a job and its clocks, a
test clock, rows and link codes for each caller, API keys, a manager and a viewer of A, and a
customer of A's subject; one client per caller."""

import copy
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from timekeeping import clocks, manifests
from timekeeping.access import keys
from timekeeping.basics import wallclock
from timekeeping.clocks import gate
from timekeeping.jobs import asks
from timekeeping.manifests import services_of
from timekeeping.models import (
    Brand,
    Connection,
    Customer,
    Delivery,
    Member,
    Schedule,
    Subject,
    Task,
    TestClock,
    Timer,
    WebhookEndpoint,
)
from timekeeping.moves.rows import Venue
from timekeeping.recurring import plans

EXAMPLES = Path(__file__).resolve().parents[1] / "timekeeping" / "manifests" / "examples"
ACTORS = ("owner_a", "staff_a", "owner_b", "nobody", "anonymous", "key_a", "key_b", "viewer_a",
          "customer_a")
NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def manifest() -> dict:
    tax = json.loads((EXAMPLES / "tax.json").read_text())
    venue = json.loads((EXAMPLES / "venue.json").read_text())
    found = {**copy.deepcopy(tax), "tables": venue["tables"]}
    found["services"]["tax-plan"] = {  # a plan, for the subscription doors
        "subject": {"kind": "taxpayer"},
        "price": {"every": "1y", "amount": 240000, "currency": "USD",
                  "includes": {"annual-return": 1}},
        "on": {"schedule": {"annual": {"order": "annual-return", "each": "tax_year",
                                       "at": "1mo after end", "catch_up": "last"}},
               "event": {"notice.received": {"order": "notice-response"}}}}
    found["services"]["notice-response"] = {
        "subject": {"kind": "taxpayer"}, "steps": {"reply": {}},
        "clocks": {"reply": {"title": "reply to the notice", "due": {"input": "reply_by"},
                             "owner": "brand", "satisfied_by": ["reply"]}}}
    found["services"]["recovery"] = {  # a job paid by its outcome, for the outcome doors
        "subject": {"kind": "taxpayer"}, "steps": {"claim": {}},
        "price": {"share": "25%", "currency": "USD"},
        "outcome": {"due": "180d", "window": {"bank": "60d"}, "collect": "each"}}
    return found


@dataclass
class World:
    brand: Brand
    other: Brand
    subject: Subject
    job: object
    clock: object
    test_clock: TestClock
    orders: list[int]
    codes: list[str]
    spare_key: object
    secrets: dict[str, str]
    buyer_clock: object
    clients: dict[str, Client] = field(default_factory=dict)
    task: object = None  # A's `prepare` task, open in the pool (the task doors)
    date: object = None  # A's refund-window date, assigned to staff_a (the delivery doors)
    link: str = ""  # the key of a party's link on A's job, open (the link doors)
    ask: str = ""  # that link's ask (the portal's ask page)
    endings: list = field(default_factory=list)  # one open job of A per caller, to end
    subscription: object = None  # A's subject on A's plan
    outcome: object = None  # the outcome of A's recovery job, waiting


def failed_delivery(world: World) -> Delivery:
    """An email of A's that could not be sent (the delivery doors' `{delivery}`), made when a
    door first asks for it, so the world's outbox stays as the other tests expect it."""
    found, _ = Delivery.objects.get_or_create(
        idempotency_key="doors:failed", defaults={
            "brand": world.brand, "channel": "email", "state": Delivery.State.FAILED,
            "payload": {"subject": "Your reminder"}, "attempts": 5, "next_attempt": NOW,
            "last_error": "550 no such mailbox", "created": NOW})
    return found


def parked_timer(world: World) -> Timer:
    """A timer of A's parked after its failures (the doors' `{parked}`), parked again each
    time a door asks for it, so every caller finds it parked."""
    found, _ = Timer.objects.get_or_create(
        brand=world.brand, key="doors:parked", test_clock=None, defaults={
            "kind": "delay", "place": 4, "owed": NOW, "owner_opened": NOW,
            "payload": {"operation": "timekeeping.note", "input": {}, "overdue_s": None}})
    Timer.objects.filter(pk=found.pk).update(state=Timer.State.HELD, parked=NOW, attempts=10,
                                             ended_by="parked", last_error="RuntimeError")
    return found


def parked_connection(world: World, n: int = 0) -> dict:
    """A's timed moves parked after ten failed minutes (issue 31), parked again (and not
    paused) each time a door asks, so every caller finds them parked; a door's empty body."""
    Connection.objects.filter(brand=world.brand).update(
        parked=NOW, paused=False, attempts=10, next_attempt=None,
        last_error="ConnectionDoesNotExist: The connection 'venue' doesn't exist.")
    return {}


def erasable(world: World) -> Subject:
    """A subject of A's for the erase doors (`{erasable}`), made when a door first asks for
    it, and made again once erased, so the world's own subject stays as the other doors
    need it."""
    found, _ = Subject.objects.get_or_create(
        brand=world.brand, kind="taxpayer", key="doors:erase", test_clock=None,
        defaults={"name": "Erasable Co", "contact_email": "books@erasable.example"})
    return found


def parked_schedule(world: World) -> Schedule:
    """A schedule of A's parked after ten failed runs (issue 31; the doors' `{schedule}`),
    parked again (and not paused) each time a door asks for it, so every caller finds it
    parked. The world's manifest declares no schedule: a tick would make its row, so it is
    made here, as a tick would."""
    found, _ = Schedule.objects.get_or_create(
        key=f"{world.brand.pk}:-:doors.nightly", defaults={
            "name": "doors.nightly", "brand": world.brand, "action": "doors.nightly",
            "every_s": 3600, "next_due": NOW})
    Schedule.objects.filter(pk=found.pk).update(
        parked=NOW, paused=False, attempts=10, run_requested=False,
        last_error="RuntimeError: the books service did not answer")
    return found


DOORS_HOOK = "https://hooks.example.test/in"


def webhook(world: World) -> WebhookEndpoint:
    """A webhook endpoint of A's (the webhook doors' `{webhook}`), made when a door first asks
    for it, so the world's outbox and records stay as the other tests expect them. Made
    directly: its address is never sent to (nothing sweeps the doors' outbox)."""
    found, _ = WebhookEndpoint.objects.get_or_create(
        brand=world.brand, description="doors", defaults={
            "url": DOORS_HOOK, "secret": "whsec_doors", "created": NOW,
            # Off, so the records other doors write make no deliveries to it; its "on" door
            # comes before its "off" door, which leaves it off again.
            "enabled": False, "disabled": WebhookEndpoint.Disabled.BY_OWNER,
            "disabled_at": NOW})
    return found


def _venue(brand: Brand) -> Venue:
    return Venue.of(Connection.objects.select_related("brand").get(brand=brand))


def _rows(venue: Venue) -> tuple[list[int], list[str]]:
    orders = [venue.model("orders").objects.create(customer=f"c{n}", status="placed",
                                                   pickup_at=datetime(2030, 1, 1, tzinfo=UTC)).pk
              for n in range(len(ACTORS))]
    codes = [f"Code{n:012d}" for n in range(len(ACTORS))]
    for code in codes:
        venue.model("tickets").objects.create(holder="h", status="offered", link_token=code,
                                              doors_at=datetime(2030, 1, 1, tzinfo=UTC),
                                              valid_to=datetime(2030, 1, 2, tzinfo=UTC))
    return orders, codes


@pytest.fixture
def world() -> World:
    users = get_user_model().objects
    people = {name: users.create_user(name, password="pw") for name in
              ("owner_a", "staff_a", "owner_b", "nobody", "viewer_a", "customer_a")}
    brand = Brand.objects.create(name="A", slug="a", owner=people["owner_a"])
    staff = Member.objects.create(brand=brand, user=people["staff_a"], role=Member.Role.MANAGER)
    Member.objects.create(brand=brand, user=people["viewer_a"], role=Member.Role.VIEWER)
    other = Brand.objects.create(name="B", slug="b", owner=people["owner_b"])
    for each in (brand, other):
        manifests.load(each, manifest())
    subject = Subject.objects.create(brand=brand, kind="taxpayer", key="1", name="S",
                                     input={"jurisdictions": ["US", "US-CA", "US-NY",
                                                              "US-NJ"]})
    job = clocks.order(brand=brand, service="annual-return", subject=subject, period="2027",
                       input={"jurisdictions": ["US", "US-CA", "US-NY", "US-NJ"]})
    Customer.objects.create(brand=brand, user=people["customer_a"]).subjects.add(
        subject, through_defaults={"brand": brand})
    orders, codes = _rows(_venue(brand))
    made = {name: keys.make(brand=b, name=name, by=None, now=NOW)
            for name, b in (("key_a", brand), ("key_b", other), ("spare", brand))}
    test_clock = TestClock.objects.create(brand=brand, name="t", frozen_time=NOW)
    found = World(brand, other, subject, job, job.clocks.get(name="file"), test_clock, orders,
                  codes, made["spare"].key, {n: made[n].secret for n in ("key_a", "key_b")},
                  job.clocks.get(name="pay"))
    # The organizer answered: `prepare` opens as a task in the pool; then a second link for
    # the organizer, open, whose answer commits that step again.
    gate.propose(job=job, step="organizer", by="the world")
    found.task = Task.objects.get(job=job, step="prepare")
    opened = asks.open_ask(job, now=wallclock.wall_now(), step="organizer",
                           spec=services_of(job.bundle)[job.service].work.deliver["organizer"])
    found.link, found.ask = opened.token, opened.ask.pk
    # Anchored on NOW, not on the day the suite runs: the tenancy tick renews it within a year
    # and five days of NOW, whatever the wall clock says.
    found.subscription = plans.subscribe(subject=subject, service="tax-plan", by="the world",
                                         anchor=NOW.date())
    found.outcome = clocks.order(brand=brand, service="recovery", subject=subject,
                                 period="2027").outcome
    found.endings = [clocks.order(brand=brand, service="annual-return", subject=subject,
                                  period=str(2040 + n), input={"jurisdictions": ["US"]})
                     for n in range(len(ACTORS))]
    found.date = job.clocks.get(name="refund-window").occurrences.get()
    found.date.assignee = staff
    found.date.save(update_fields=["assignee"])
    for name in ACTORS:
        client = Client()
        if name in people:
            client.force_login(people[name])
        found.clients[name] = client
    return found
