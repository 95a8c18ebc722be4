"""The desk every console test works at: Northwind Filing (the tax manifest, its calendar in
America/New_York) with its owner, a manager and a viewer; a subject in the world of the test
clock "spring", advanced to 2028-04-10 14:00Z, so its pay and federal filing dates are near and
its refund window is a hard date ahead; and a stranger of another brand."""

import copy
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.test import Client

from timekeeping import clocks, manifests
from timekeeping.console import test_mode
from timekeeping.models import Brand, Job, Member, Subject, TestClock
from timekeeping.tick import test_clocks

EXAMPLES = Path(__file__).resolve().parents[3] / "timekeeping" / "manifests" / "examples"
TAX = json.loads((EXAMPLES / "tax.json").read_text())
OPENED = datetime(2028, 2, 1, 14, tzinfo=UTC)
START = datetime(2028, 4, 10, 14, tzinfo=UTC)  # 10:00 in New York


class Browser(Client):
    """A person at a browser: follows redirects on a GET, as the console's test mode sends a
    page asked for without its world to the same page with it."""

    def get(self, path, data=None, follow=True, **extra):
        return super().get(path, data, follow=follow, **extra)


@dataclass
class Desk:
    brand: Brand
    other: Brand
    test_clock: TestClock
    subject: Subject
    job: Job
    manager: Member
    viewer: Member
    clients: dict[str, Client] = field(default_factory=dict)

    def url(self, path: str = "") -> str:
        return f"/console/{self.brand.pk}/{path}"

    def occurrence(self, clock_name: str, item: str = ""):
        return self.job.clocks.get(name=clock_name).occurrences.get(item=item)


def tax() -> dict:
    return copy.deepcopy(TAX)


@pytest.fixture
def desk(brand, actors) -> Desk:
    manifests.load(brand, tax())
    manager = Member.objects.create(brand=brand, user=actors["staff"], role=Member.Role.MANAGER)
    viewer = Member.objects.create(brand=brand, user=actors["member"], role=Member.Role.VIEWER)
    other = Brand.objects.create(name="Elsewhere", slug="elsewhere", owner=actors["outsider"])
    manifests.load(other, tax())
    spring = test_clocks.create(brand=brand, name="spring", frozen_time=OPENED)
    subject = Subject.objects.create(brand=brand, test_clock=spring, kind="taxpayer", key="1",
                                     name="Harbor Books", zone="America/New_York",
                                     owner_name="Grace", contact_email="grace@harbor.test")
    job = clocks.order(brand=brand, service="annual-return", subject=subject, period="2027",
                       input={"jurisdictions": ["US", "US-NJ"]})
    test_clocks.advance(spring, to=START)
    found = Desk(brand, other, spring, subject, job, manager, viewer)
    for name, user in (("owner", actors["owner"]), ("manager", actors["staff"]),
                       ("viewer", actors["member"]), ("stranger", actors["outsider"])):
        found.clients[name] = Browser()
        found.clients[name].force_login(user)
        if name != "stranger":  # the brand's people look at the desk's test world
            _in_test_mode(found.clients[name], brand, spring)
    return found


def _in_test_mode(client: Client, brand: Brand, world: TestClock) -> None:
    """As if the person had switched the brand's pages to the test world (docs/console.md)."""
    session = client.session
    session[test_mode.SESSION_KEY + brand.pk] = world.pk
    session.save()
