"""The demo world that `make demo` loads. Idempotent: loading twice changes nothing new.

Later features add their own examples here, each in its own function called by `demo_load`.
It prints four sign-ins (all with DEMO_PASSWORD): the owner of the demo brand and the tax
practice (a superuser, so the admin too), a customer of the tax subject `sbj_7Hq2` (the
portal), a member of the tax practice with a task held and dates assigned to her (the delivery
portal), and the venue's owner, who keeps that brand alone (the console's scoping). On first
load the console shows a priced date at risk (a test clock advanced to a week before a filing
date), a timer that fired late (a note owed an hour before the load, fired by the first tick)
and a set-aside row (a locker whose timed release a setting refuses); a third taxpayer's
missed filing date is open again, reopened by a relief notice after the fact (`demo_relief`).
Each demo brand has a webhook endpoint pointed at the receiver the demo serves
(`demo_receiver_endpoints`), so the events it sends can be watched arriving at
/demo/receiver/.
"""

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.urls import reverse

from calendars.models import Postponement
from timekeeping import clocks, manifests
from timekeeping.access import invitations
from timekeeping.basics import wallclock
from timekeeping.clocks import gate
from timekeeping.jobs import lifecycle, tasks
from timekeeping.models import (
    Brand,
    Customer,
    Job,
    Member,
    Occurrence,
    Subject,
    Subscription,
    Task,
    TestClock,
    WebhookEndpoint,
)
from timekeeping.recurring import plans
from timekeeping.tick import test_clocks
from timekeeping.timers import delays
from timekeeping.webhooks import endpoints

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "keeping-time-demo"
CUSTOMER_USERNAME = "finance@harbor.example"  # the tax subject's contact, by invitation
VENUE_USERNAME = "venue"
MEMBER_USERNAME = "ada"  # a member of the tax practice: the delivery portal


class DemoRefused(Exception):
    """The demo is not loaded here; the message says why."""


@dataclass(frozen=True)
class SignIn:
    username: str
    password: str
    who: str  # who they are, and where they go


@dataclass(frozen=True)
class DemoLogin:
    username: str
    password: str
    brand: Brand
    sign_ins: tuple[SignIn, ...] = ()
    receiver: str = ""  # where the demo's events arrive, or why they do not


def demo_load() -> DemoLogin:
    """Create (or find) the demo logins, the demo brand, and the other demo worlds. Each part
    commits on its own: the venue and the lockers build real tables, which SQLite builds only
    outside a transaction.

    Refused, before anything is written, when DEBUG is off: the demo logins' password is
    printed by `make demo` and the README, and the owner is a superuser."""
    if not settings.DEBUG:
        raise DemoRefused("the demo login has a published password; load the demo only with "
                          "DEBUG=true")
    with transaction.atomic():
        login = _demo_brand()
    demo_lockers(login.brand)
    venue_owner = _person(VENUE_USERNAME, "venue@keeping-time.example")
    demo_venue(venue_owner)
    demo_rehearsal(Brand.objects.get(slug="demo-venue"))
    subject = Subject.objects.select_related("brand").get(pk=TAX_SUBJECT)
    demo_customer(subject, by=login.brand.owner)
    demo_near(subject.brand)
    demo_member(subject.brand)
    demo_late(subject.brand)
    demo_relief(subject.brand)
    receiver = demo_receiver_endpoints([login.brand, subject.brand,
                                        Brand.objects.get(slug="demo-venue")])
    return DemoLogin(login.username, login.password, login.brand, receiver=receiver, sign_ins=(
        SignIn(DEMO_USERNAME, DEMO_PASSWORD, "the owner of Demo brand and Demo tax practice: "
                                             "the console (a superuser: the admin too)"),
        SignIn(CUSTOMER_USERNAME, DEMO_PASSWORD, f"a customer of Harbor Robotics ({TAX_SUBJECT})"
                                                 ": the portal"),
        SignIn(MEMBER_USERNAME, DEMO_PASSWORD, "Ada Park, a member of Demo tax practice: your "
                                               "tasks, a task held and dates assigned to you"),
        SignIn(VENUE_USERNAME, DEMO_PASSWORD, "the owner of Demo venue alone: its console, and "
                                              "404 for the other brands"),
    ))


def _person(username: str, email: str, **flags):
    """A demo login; its password is set each time so the printed one stays true."""
    user, _ = get_user_model().objects.get_or_create(username=username,
                                                     defaults={"email": email, **flags})
    user.set_password(DEMO_PASSWORD)
    for name, value in flags.items():
        setattr(user, name, value)
    user.save(update_fields=["password", *flags])
    return user


def _demo_brand() -> DemoLogin:
    user = _person(DEMO_USERNAME, "demo@keeping-time.example", is_staff=True,
                   is_superuser=True)
    brand, _ = Brand.objects.get_or_create(
        slug="demo", defaults={"name": "Demo brand", "owner": user}
    )
    demo_delays(brand)
    demo_tax(user)
    return DemoLogin(username=DEMO_USERNAME, password=DEMO_PASSWORD, brand=brand)


# The demo brand's manifest: a heartbeat every minute on its real clock (SPEC J), and lockers
# released at their time only while the settings allow it (timed moves, A8).
DEMO_MANIFEST = {
    "schedules": {"demo": {"heartbeat": {"every": "1m", "run": "heartbeat"}}},
    "tables": {
        "settings": {"settings": True,
                     "columns": [{"ref": "auto_release", "type": "boolean"}]},
        "lockers": {
            "columns": [{"ref": "holder", "type": "text", "maxLength": 120},
                        {"ref": "release_at", "type": "timestamptz"}],
            "states": {
                "column": "status", "initial": "held",
                "moves": {"held": [{"to": "released", "requires": {"setting": [
                    {"table": "settings", "column": "auto_release", "eq": True}]}}]},
                "timed": [{"from": "held", "to": "released", "at": {"column": "release_at"}}],
            },
        },
    },
}


def demo_lockers(brand: Brand) -> None:
    """The set-aside row: a sample locker whose release was due an hour before the load, while
    the settings keep automatic release off. The first tick's timed-move job is refused
    (`STATE_MOVE_REFUSED`, the setting) and sets the row aside for an hour, and again after."""
    from timekeeping.models import Connection, SampleRow
    from timekeeping.moves import samples
    from timekeeping.moves.rows import Venue

    manifests.load(brand, DEMO_MANIFEST)
    venue = Venue.of(Connection.objects.select_related("brand").get(brand=brand))
    if not venue.model("settings").objects.exists():
        venue.model("settings").objects.create(auto_release=False)
    if SampleRow.objects.filter(brand_id=venue.link.brand_id, connection=venue.link).exists():
        return
    samples.add(venue, "lockers", [{"holder": "Locker 7 (sample)",
                                    "release_at": {"@in": "-PT1H"}}], now=wallclock.wall_now())


def demo_delays(brand: Brand) -> None:
    """Delays that fire while the demo runs: a note each minute for the next ten minutes.

    Keyed by the minute they are owed, so loading twice in one minute arms nothing new, and
    each later `make demo` arms a fresh set.
    """
    now = wallclock.wall_now().replace(second=0, microsecond=0)
    for minutes in range(1, 11):
        at = now + timedelta(minutes=minutes)
        delays.delay("timekeeping.note", {"demo": f"a note owed at {at:%H:%M}Z"}, brand=brand,
                     at=at, key=f"demo:note:{at:%Y-%m-%dT%H:%M}", owner="demo")


TAX_MANIFEST = Path(__file__).parent / "manifests" / "examples" / "tax.json"
TAX_SUBJECT, TAX_CLOCK = "sbj_7Hq2", "tc_7Hq4"
TAX_ZONE = ZoneInfo("America/New_York")
TAX_YEAR_START = datetime(2027, 1, 20, 14, tzinfo=UTC)  # 09:00 in New York: the plan starts
TAX_START = datetime(2028, 2, 1, 4, 59, tzinfo=UTC)  # the last minute of 31 January there
TAX_PLAN_ANCHOR = date(2027, 1, 20)
TAX_INPUT = {"jurisdictions": ["US", "US-CA", "US-NY", "US-NJ"],
             "earliest_credit_expiry": "2046-12-31", "entity": "C corp"}
# What the 2026 return found, kept on the subject for the 2027 return: a carryforward (the
# earliest one expires 2046-12-31) and a franchise report now owed in Texas.
TAX_FOUND = {"carryforward": {"amount": 1_380_000, "currency": "USD",
                              "what": "of US credit from 2026"},
             "franchise_reports": ["US-TX"]}


def demo_tax(user) -> Subject:
    """A tax practice on a test clock: a taxpayer (a C corp) filing in US, US-CA, US-NY and
    US-NJ, on the Tax Plan from 20 January 2027, with a year of its work already kept on the
    test clock (`tax_year`). The ids are fixed so documented command lines work:

        manage.py tick --test-clock tc_7Hq4 --to 2028-02-01T20:00:00Z --trace
        manage.py subjects calendar sbj_7Hq2 --from 2027-02-01 --test-clock tc_7Hq4
        manage.py tick --test-clock tc_7Hq4 --to 2028-04-16T00:00:00Z --trace
    """
    brand, _ = Brand.objects.get_or_create(
        slug="demo-tax", defaults={"name": "Demo tax practice", "owner": user})
    manifests.load(brand, json.loads(TAX_MANIFEST.read_text()))
    test_clock, _ = TestClock.objects.get_or_create(
        id=TAX_CLOCK, defaults={"brand": brand, "name": "a year of a taxpayer",
                                "frozen_time": TAX_YEAR_START})
    subject, _ = Subject.objects.get_or_create(
        id=TAX_SUBJECT, defaults={"brand": brand, "test_clock": test_clock,
                                  "kind": "taxpayer", "key": "98-7654321",
                                  "name": "Harbor Robotics", "zone": "America/New_York",
                                  "owner_name": "Grace Okafor", "input": TAX_INPUT,
                                  "contact_email": "finance@harbor.example"})
    if not Subscription.objects.filter(subject=subject, service="tax-plan").exists():
        tax_year(subject, test_clock)
    return subject


def tax_year(subject: Subject, test_clock: TestClock) -> None:
    """2027 on the test clock, as a practice keeps it, stopping at the last minute of 31
    January 2028 in New York so the next tick mints the 2027 return (docs/recurring.md):

    - 20 January: the taxpayer joins the Tax Plan, and the practice takes on its 2025 return,
      filed before, for the refund window that return still holds.
    - 1 February: the plan mints the 2026 return; 5 April, 5 June, 5 September, 5 December:
      it mints each quarter's estimate, paid that day.
    - 12 April: the return's `run tentative 3d` rung files the extension for US, US-CA and
      US-NY (US-NJ's own, on 14 May); the 2026 tax is paid that day, before its hard date.
    - 11 July: filed in US, US-CA and US-NJ; 13 July: the organizer is answered, US-NY filed
      and the return delivered, with what the work found (a carryforward, a Texas report).
    - 18 October: a CP161 notice arrives (the plan mints its response); replied 14 November.
    - 20 January 2028: the plan renews, cycle 2.
    """
    def job(service: str, period: str) -> Job:
        return Job.objects.select_related("subject", "brand", "test_clock").get(
            subject=subject, service=service, period=period)

    def step(service: str, period: str, name: str, items=None, by="the practice") -> None:
        outcome = gate.propose(job=job(service, period), step=name, items=items, by=by)
        if not outcome.committed:
            raise DemoRefused(f"the demo's {service} {period}: {name} was refused: "
                              f"{outcome.reason}")

    def paid(quarter: str) -> None:
        step("estimate", quarter, "pay", by=subject.owner_name)
        lifecycle.end(job("estimate", quarter), by="the practice")

    def filed_2026() -> None:
        step("annual-return", "2026", "organizer", by=subject.owner_name)
        step("annual-return", "2026", "file", ["US-NY"])
        lifecycle.end(job("annual-return", "2026"), by="the practice", facts=TAX_FOUND)

    def replied() -> None:
        step("notice-response", "CP161", "reply")
        lifecycle.end(job("notice-response", "CP161"), by="the practice")

    plans.subscribe(subject=subject, service="tax-plan", anchor=TAX_PLAN_ANCHOR,
                    by="the demo")
    prior = clocks.order(brand=subject.brand, service="prior-return", subject=subject,
                         period="2025", by="the demo")
    lifecycle.end(prior, by="the practice")
    script = [
        ("2027-04-05 09:00", lambda: paid("2027-Q1")),
        ("2027-04-12 10:00", lambda: step("annual-return", "2026", "pay",
                                          by=subject.owner_name)),
        ("2027-06-05 09:00", lambda: paid("2027-Q2")),
        ("2027-07-11 10:00", lambda: step("annual-return", "2026", "file",
                                          ["US", "US-CA", "US-NJ"])),
        ("2027-07-13 10:00", filed_2026),
        ("2027-09-05 09:00", lambda: paid("2027-Q3")),
        ("2027-10-18 10:00", lambda: plans.receive(
            subject=subject, event="notice.received", key="CP161",
            input={"reply_by": "2027-12-14"}, by="the demo")),
        ("2027-11-14 10:00", replied),
        ("2027-12-05 09:00", lambda: paid("2027-Q4")),
    ]
    _play(test_clock, script)


def _play(test_clock: TestClock, script: list) -> None:
    """Each action of `script` in turn, the test clock advanced first to its New York wall
    time; then the clock stops at TAX_START."""
    for when, action in script:
        at = datetime.fromisoformat(when).replace(tzinfo=TAX_ZONE).astimezone(UTC)
        test_clocks.advance(test_clock, to=at)
        action()
    test_clocks.advance(test_clock, to=TAX_START)


def demo_customer(subject: Subject, *, by) -> None:
    """The tax subject's contact, a customer by the product's own invitation: invited, and the
    invitation accepted with the demo's password (on a test clock, its email goes to the
    brand's owner). Loading again only sets the password again."""
    found = get_user_model().objects.filter(username=CUSTOMER_USERNAME).first()
    if found is not None:
        found.set_password(DEMO_PASSWORD)
        found.save(update_fields=["password"])
        customer = Customer.objects.get_or_create(brand=subject.brand, user=found)[0]
        customer.subjects.add(subject, through_defaults={"brand": subject.brand})
        return
    now = wallclock.wall_now()
    made = invitations.invite(subject=subject, email=CUSTOMER_USERNAME, by=by, now=now)
    invitations.accept(made, now=now, password=DEMO_PASSWORD)


NEAR_CLOCK, NEAR_SUBJECT = "tc_7Hq5", "sbj_7Hq3"
NEAR_START = datetime(2028, 3, 1, 14, tzinfo=UTC)
NEAR_AT = datetime(2028, 4, 10, 13, tzinfo=UTC)  # a week before the 2028-04-18 filing dates


def demo_near(brand: Brand) -> None:
    """A priced date at risk: a second taxpayer on its own test clock, advanced once from
    2028-03-01 to 2028-04-10 (its notices ring on the way), so its filing dates, priced "about
    $324 a month late", are a week away."""
    test_clock, _ = _taxpayer_world(
        brand, NEAR_CLOCK, "a week before filing", NEAR_START, NEAR_SUBJECT,
        {"key": "12-3456789", "name": "Juniper Labs", "zone": "America/Chicago",
         "owner_name": "Sam Reyes", "contact_email": "books@juniper.example"},
        {"jurisdictions": ["US", "US-CA"], "earliest_credit_expiry": "2031-06-30"})
    if test_clock.frozen_time < NEAR_AT:
        test_clocks.advance(test_clock, to=NEAR_AT)


def _taxpayer_world(brand: Brand, clock_id: str, clock_name: str, start: datetime,
                    subject_id: str, subject: dict, given: dict) -> tuple[TestClock, Subject]:
    """A test clock of the tax practice frozen at `start`, a taxpayer living on it, and its
    2027 annual return ordered once with `given`; loading again finds them."""
    test_clock, _ = TestClock.objects.get_or_create(
        id=clock_id, defaults={"brand": brand, "name": clock_name, "frozen_time": start})
    taxpayer, _ = Subject.objects.get_or_create(
        id=subject_id, defaults={"brand": brand, "test_clock": test_clock,
                                 "kind": "taxpayer", **subject})
    if not Job.objects.filter(subject=taxpayer).exists():
        clocks.order(brand=brand, service="annual-return", subject=taxpayer, period="2027",
                     by="demo", input=given)
    return test_clock, taxpayer


def demo_member(brand: Brand) -> None:
    """A member of the tax practice with work of her own (the delivery portal): Juniper Labs'
    organizer is answered, so its "prepare the return" task opens and she holds it, and its
    filing dates are assigned to her. Loading again changes nothing."""
    user = _person(MEMBER_USERNAME, "ada@keeping-time.example", first_name="Ada",
                   last_name="Park")
    member, _ = Member.objects.get_or_create(brand=brand, user=user,
                                             defaults={"role": Member.Role.MANAGER})
    job = Job.objects.select_related("subject", "brand", "test_clock").get(
        subject_id=NEAR_SUBJECT, service="annual-return", period="2027")
    if not Task.objects.filter(job=job).exists():
        gate.propose(job=job, step="organizer", by="Sam Reyes")
    for task in Task.objects.filter(job=job, state=Task.State.OPEN):
        tasks.take(task, member)
    for occurrence in Occurrence.objects.filter(clock__job=job, clock__name="file",
                                                assignee__isnull=True).select_related("clock"):
        clocks.assign(occurrence, member, by="the demo")


def demo_late(brand: Brand) -> None:
    """A timer that fires late: a note owed an hour before the load, which the first tick
    fires an hour late. Keyed by the minute of the load, as the demo's other notes."""
    now = wallclock.wall_now().replace(second=0, microsecond=0)
    delays.delay("timekeeping.note", {"demo": f"a note owed at {now - timedelta(hours=1):%H:%M}Z"
                                              ", fired late"},
                 brand=brand, at=now - timedelta(hours=1), key=f"demo:late:{now:%Y-%m-%dT%H:%M}",
                 owner="demo")


RELIEF_CLOCK, RELIEF_SUBJECT = "tc_7Hq6", "sbj_7Hq4"
RELIEF_START = datetime(2028, 2, 1, 14, tzinfo=UTC)
RELIEF_AT = datetime(2028, 10, 20, 14, tzinfo=UTC)  # 10:00 in New York, after the filing lapsed
RELIEF_NOTICE = "IR-2028-41 (hurricane relief)"


def demo_relief(brand: Brand) -> None:
    """A late postponement (SPEC S2, issue 29): a third taxpayer on its own test clock,
    whose federal filing, extended in April to 16 October 2028, lapsed unfiled on 17 October;
    on 20 October an authority's relief notice covering October moves it to 15 February 2029.
    The miss is withdrawn on the record, the date is open again with only its reminders still
    ahead armed, and the practice is told. Loading again changes nothing."""
    test_clock, _ = _taxpayer_world(
        brand, RELIEF_CLOCK, "a relief notice after the fact", RELIEF_START, RELIEF_SUBJECT,
        {"key": "45-6789012", "name": "Cedar Mill Co.", "zone": "America/New_York",
         "owner_name": "Lena Ortiz", "contact_email": "office@cedarmill.example"},
        {"jurisdictions": ["US"]})
    if test_clock.frozen_time < RELIEF_AT:
        test_clocks.advance(test_clock, to=RELIEF_AT)
    if not Postponement.objects.filter(test_clock=test_clock.pk).exists():
        clocks.add_postponement(calendar=brand.calendar, from_date=date(2028, 10, 1),
                                through=date(2028, 10, 31), to=date(2029, 2, 15), where={},
                                notice=RELIEF_NOTICE, test_clock_id=test_clock.pk,
                                by="the demo")


VENUE_MANIFEST = Path(__file__).parent / "manifests" / "examples" / "venue.json"
VENUE_HOURS = [("mon", "11:00", "21:00", False), ("tue", "11:00", "21:00", True),
               ("wed", "11:00", "21:00", True), ("thu", "11:00", "21:00", True),
               ("fri", "11:00", "22:00", True), ("sat", "18:00", "02:00", True),
               ("sun", "12:00", "20:00", True)]

# The demo venue's rule (issue 30, A7): an order that becomes ready tells its customer, whoever
# moved it; the Why page says "Heard by rule 1: emailed the customer" under the order.
VENUE_AUTOMATIONS = [
    {"when": {"row": "orders", "enters": "ready"},
     "do": {"email": {"to": {"column": "email"}, "who": "the customer",
                      "subject": "Your order is ready, {customer}",
                      "body": "Order {id} is ready: come and pick it up when it suits you."}}},
]


def demo_venue(user) -> None:
    """A venue on London's clock with the three timed moves: orders still placed at closing
    are cancelled, ticket offers lapse back to the buyer, guests not arrived by 10:00 the next
    day are no-shows. Sample rows are written relative to now, once."""
    from timekeeping.models import Connection, SampleRow
    from timekeeping.moves import samples
    from timekeeping.moves.rows import Venue

    brand, _ = Brand.objects.get_or_create(
        slug="demo-venue", defaults={"name": "Demo venue", "owner": user})
    if brand.owner_id != user.pk:  # a demo loaded before the venue had its own owner
        brand.owner = user
        brand.save(update_fields=["owner"])
    manifests.load(brand, {**json.loads(VENUE_MANIFEST.read_text()),
                           "automations": VENUE_AUTOMATIONS})
    venue = Venue.of(Connection.objects.select_related("brand").get(brand=brand))
    if not venue.model("settings").objects.exists():
        venue.model("settings").objects.create(no_show_at="10:00", offer_hours=24,
                                               arrive_from="15:00", cancel_hours=48,
                                               reminder_hours=24, door_on=True)
    if not venue.model("opening_hours").objects.exists():
        for weekday, opens, closes, is_open in VENUE_HOURS:
            venue.model("opening_hours").objects.create(weekday=weekday, opens=opens,
                                                        closes=closes, open=is_open)
    if SampleRow.objects.filter(brand_id=venue.link.brand_id, connection=venue.link).exists():
        return
    now = wallclock.wall_now()
    samples.add(venue, "orders", [{"customer": "Ines (sample)", "total": 1250,
                                   "pickup_at": {"@in": "PT20M", "@slot": "opening_hours"}},
                                  {"customer": "Rui (sample)", "pickup_at": {"@in": "-P1D"}}],
                now=now)
    samples.add(venue, "tickets", [{"holder": "Ana (sample)", "status": "offered",
                                    "pending_email": "friend@example.test",
                                    "offer_until": {"@in": "PT5M"}, "doors_at": {"@in": "P2D"},
                                    "valid_to": {"@in": "P2DT4H"}}], now=now)
    samples.add(venue, "stays", [{"guest": "Ola (sample)", "arrive": (now - timedelta(
        days=2)).date()}], now=now)


# Where `make demo` serves the product (`rundemo 127.0.0.1:8000`): the demo's endpoints post
# to the receiver it serves there, which WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOW_HOSTS (the .env
# `make demo` writes) let through.
RECEIVER_AT = "http://127.0.0.1:8000"
RECEIVER_SAYS = "Events the demo sends to its own receiver"


def demo_receiver_endpoints(brands: list[Brand]) -> str:
    """Each demo brand's endpoint, pointed at the receiver the demo serves
    (`timekeeping.demo_receiver`), hearing every event of the real clock and the test worlds,
    with a test event sent when it is made. Once per brand. Returns what the command says:
    where to watch, or, when the settings refuse a plain-http address on this machine, which
    settings would let it through (nothing is made then)."""
    for brand in brands:
        if WebhookEndpoint.objects.filter(brand=brand, url__startswith=RECEIVER_AT + reverse(
                "demo-receiver")).exists():
            continue
        try:
            made = endpoints.make(brand, url=RECEIVER_AT + reverse("demo-receiver"),
                                  description=RECEIVER_SAYS, test_clocks=True)
        except endpoints.Invalid as refused:
            return (f"No webhook endpoint for the demo ({refused.message}): set "
                    "WEBHOOK_ALLOW_HTTP=true and WEBHOOK_ALLOW_HOSTS=127.0.0.1 to see events "
                    "arrive.")
        endpoints.change(made.endpoint, url=RECEIVER_AT + reverse(
            "demo-receiver-post", args=[made.endpoint.pk]))
        endpoints.send_test(made.endpoint)
    return f"Events the demo sends to its own receiver arrive at {RECEIVER_AT}" \
           f"{reverse('demo-receiver')}"


VENUE_REHEARSAL = "The venue's next week"
REHEARSED_ORDERS = [("Noor", "P1DT2H", "placed"), ("Theo", "P2DT3H", "confirmed"),
                    ("Mia", "P4DT1H", "placed"), ("Jonas", "P5DT2H", "placed")]


def demo_rehearsal(brand: Brand) -> TestClock:
    """A rehearsal of the demo venue's week (issue 29): a test clock at the load's minute, the
    venue's orders of the coming seven days copied onto it, four more orders added there across
    the week (one already confirmed), and the clock walked the seven days. In that test world
    the console's timed-moves page says which orders were cancelled at closing, when and why;
    the live orders are left as they are. Once: a later load finds the clock."""
    from timekeeping.moves import rehearse

    found = TestClock.objects.filter(brand=brand, name=VENUE_REHEARSAL).first()
    if found is not None:
        return found
    now = wallclock.wall_now().replace(second=0, microsecond=0)
    clock = test_clocks.create(brand=brand, name=VENUE_REHEARSAL, frozen_time=now)
    rehearse.copy(clock, "orders", start=now, end=now + timedelta(days=7), who="the demo")
    rehearse.add(clock, "orders", [
        {"customer": f"{name} (rehearsal)", "email": f"{name.lower()}@example.test",
         "total": 1800, "status": status,
         "pickup_at": {"@in": later, "@slot": "opening_hours"}}
        for name, later, status in REHEARSED_ORDERS], who="the demo")
    test_clocks.advance(clock, to=now + timedelta(days=7), by="the demo")
    return clock

