"""The demo world that `make demo` loads. Idempotent: loading twice changes nothing new.

Later features add their own examples here, each in its own function called by `demo_load`.
"""

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from timekeeping import clock, clocks, delays, manifests
from timekeeping.models import Brand, Job, Subject, TestClock

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "keeping-time-demo"


class DemoRefused(Exception):
    """The demo is not loaded here; the message says why."""


@dataclass(frozen=True)
class DemoLogin:
    username: str
    password: str
    brand: Brand


def demo_load() -> DemoLogin:
    """Create (or find) the demo login, the demo brand it owns, and the other demo worlds.
    Each part commits on its own: the venue builds real tables, which SQLite builds only
    outside a transaction.

    Refused, before anything is written, when DEBUG is off: the demo login is a superuser
    whose password the README and `make demo` print."""
    if not settings.DEBUG:
        raise DemoRefused("the demo login has a published password; load the demo only with "
                          "DEBUG=true")
    with transaction.atomic():
        login = _demo_brand()
    demo_venue(login.brand.owner)
    return login


def _demo_brand() -> DemoLogin:
    user_model = get_user_model()
    user, _ = user_model.objects.get_or_create(
        username=DEMO_USERNAME, defaults={"is_staff": True, "is_superuser": True,
                                          "email": "demo@keeping-time.example"}
    )
    # The demo's password is printed by `make demo`; set it each time so it stays true.
    user.set_password(DEMO_PASSWORD)
    user.is_staff = user.is_superuser = True
    user.save(update_fields=["password", "is_staff", "is_superuser"])
    brand, _ = Brand.objects.get_or_create(
        slug="demo", defaults={"name": "Demo brand", "owner": user}
    )
    demo_delays(brand)
    manifests.load(brand, DEMO_MANIFEST)
    demo_tax(user)
    return DemoLogin(username=DEMO_USERNAME, password=DEMO_PASSWORD, brand=brand)


# The demo brand's manifest: a heartbeat every minute on its real clock (SPEC J).
DEMO_MANIFEST = {"schedules": {"demo": {"heartbeat": {"every": "1m", "run": "heartbeat"}}}}


def demo_delays(brand: Brand) -> None:
    """Delays that fire while the demo runs: a note each minute for the next ten minutes.

    Keyed by the minute they are owed, so loading twice in one minute arms nothing new, and
    each later `make demo` arms a fresh set.
    """
    now = clock.wall_now().replace(second=0, microsecond=0)
    for minutes in range(1, 11):
        at = now + timedelta(minutes=minutes)
        delays.delay("timekeeping.note", {"demo": f"a note owed at {at:%H:%M}Z"}, brand=brand,
                     at=at, key=f"demo:note:{at:%Y-%m-%dT%H:%M}", owner="demo")


TAX_MANIFEST = Path(__file__).parent / "manifests" / "examples" / "tax.json"
TAX_SUBJECT, TAX_CLOCK = "sbj_7Hq2", "tc_7Hq4"
TAX_START = datetime(2028, 2, 1, 14, tzinfo=UTC)


def demo_tax(user) -> Job:
    """A tax practice on a test clock: a taxpayer filing in US, US-CA, US-NY and US-NJ, with
    the file clock per jurisdiction, the hard pay date, the refund window and a credit's
    expiry living on the subject. The ids are fixed so documented command lines work:

        manage.py tick --test-clock tc_7Hq4 --to 2028-04-16T00:00:00Z --trace
        manage.py subjects calendar sbj_7Hq2 --from 2028-01-01 --test-clock tc_7Hq4
    """
    brand, _ = Brand.objects.get_or_create(
        slug="demo-tax", defaults={"name": "Demo tax practice", "owner": user})
    manifests.load(brand, json.loads(TAX_MANIFEST.read_text()))
    test_clock, _ = TestClock.objects.get_or_create(
        id=TAX_CLOCK, defaults={"brand": brand, "name": "the 2027 return",
                                "frozen_time": TAX_START})
    subject, _ = Subject.objects.get_or_create(
        id=TAX_SUBJECT, defaults={"brand": brand, "test_clock": test_clock,
                                  "kind": "taxpayer", "key": "98-7654321",
                                  "name": "Harbor Robotics", "zone": "America/New_York",
                                  "owner_name": "Grace Okafor",
                                  "contact_email": "finance@harbor.example"})
    job = Job.objects.filter(subject=subject, service="annual-return", period="2027").first()
    if job is None:
        job = clocks.order(brand=brand, service="annual-return", subject=subject,
                           period="2027", by="demo",
                           input={"jurisdictions": ["US", "US-CA", "US-NY", "US-NJ"],
                                  "earliest_credit_expiry": "2046-12-31"})
    return job


VENUE_MANIFEST = Path(__file__).parent / "manifests" / "examples" / "venue.json"
VENUE_HOURS = [("mon", "11:00", "21:00", False), ("tue", "11:00", "21:00", True),
               ("wed", "11:00", "21:00", True), ("thu", "11:00", "21:00", True),
               ("fri", "11:00", "22:00", True), ("sat", "18:00", "02:00", True),
               ("sun", "12:00", "20:00", True)]


def demo_venue(user) -> None:
    """A venue on London's clock with the three timed moves: orders still placed at closing
    are cancelled, ticket offers lapse back to the buyer, guests not arrived by 10:00 the next
    day are no-shows. Sample rows are written relative to now, once."""
    from timekeeping.models import Connection, SampleRow
    from timekeeping.moves import samples
    from timekeeping.moves.rows import Venue

    brand, _ = Brand.objects.get_or_create(
        slug="demo-venue", defaults={"name": "Demo venue", "owner": user})
    manifests.load(brand, json.loads(VENUE_MANIFEST.read_text()))
    venue = Venue.of(Connection.objects.select_related("brand").get(brand=brand))
    if not venue.model("settings").objects.exists():
        venue.model("settings").objects.create(no_show_at="10:00", offer_hours=24,
                                               arrive_from="15:00", cancel_hours=48,
                                               reminder_hours=24, door_on=True)
    if not venue.model("opening_hours").objects.exists():
        for weekday, opens, closes, is_open in VENUE_HOURS:
            venue.model("opening_hours").objects.create(weekday=weekday, opens=opens,
                                                        closes=closes, open=is_open)
    if SampleRow.objects.filter(connection=venue.link).exists():
        return
    now = clock.wall_now()
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
