"""A party's link in a real browser, with no account: the page says until when it works, in
the subject's zone, and the answer is recorded. The subject lives on a test clock, so the page
judges the link by that clock, whatever the day the test runs (its expiry is tested in
tests/timekeeping/jobs/test_link.py). Screenshotted, and checked for the accessibility basics
at a phone's width too."""

import re
from datetime import UTC, datetime

import pytest
from playwright.sync_api import expect

from tests.timekeeping.jobs.test_work import manifest
from timekeeping import clocks, manifests
from timekeeping.models import Delivery, Subject
from timekeeping.tick import test_clocks

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]


@pytest.fixture
def link(brand, actors) -> str:
    actors["owner"].email = "owner@northwind.test"  # a test world's emails reach the owner
    actors["owner"].save()
    manifests.load(brand, manifest(deliver={"organizer": {"title": "the organizer",
                                                          "ask": "owner", "expires": "3d"}}))
    spring = test_clocks.create(brand=brand, name="spring",
                                frozen_time=datetime(2028, 3, 10, 15, tzinfo=UTC))
    subject = Subject.objects.create(brand=brand, test_clock=spring, kind="client", key="1",
                                     name="Harbor", zone="America/New_York", owner_name="Grace",
                                     contact_email="grace@harbor.test")
    clocks.order(brand=brand, service="work", subject=subject, input={"due": "2028-06-30"})
    body = Delivery.objects.get(payload__to=["owner@northwind.test"]).payload["body"]
    return re.search(r"/ask/[\w-]+/", body)[0]


def test_a_party_answers_by_the_link_before_it_expires(page, live_server, link, look):
    page.goto(f"{live_server.url}{link}")
    expect(page.get_by_role("heading", level=1)).to_have_text("The organizer")
    expect(page.locator("main")).to_contain_text(
        "This link works until Mon 13 Mar 2028, 10:00 EDT (America/New_York)")
    look("link")
    look("link-phone", phone=True)
    page.get_by_role("button", name="Send my answer").click()
    expect(page.get_by_role("status")).to_contain_text("your answer is recorded")
    look("link-answered")
    look.assert_accessible()
