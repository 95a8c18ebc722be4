"""The demo world that `make demo` loads. Idempotent: loading twice changes nothing new.

Later features add their own examples here, each in its own function called by `demo_load`.
"""

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

from timekeeping import clock, clocks, delays, manifests
from timekeeping.models import Brand, Job, Subject, TestClock

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "keeping-time-demo"


@dataclass(frozen=True)
class DemoLogin:
    username: str
    password: str
    brand: Brand


@transaction.atomic
def demo_load() -> DemoLogin:
    """Create (or find) the demo login and the demo brand it owns."""
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
