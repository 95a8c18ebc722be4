"""Signing in, in a real browser: each person lands where they work."""

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]


def sign_in(page, live_server, username: str, password: str = "pw") -> None:
    page.goto(f"{live_server.url}/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def test_an_owner_lands_on_the_console_and_a_customer_on_the_portal(page, live_server, world,
                                                                     look):
    page.goto(f"{live_server.url}/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Sign in")
    look("sign-in")
    sign_in(page, live_server, "owner_a")
    expect(page.get_by_role("heading", level=1)).to_have_text(world.brand.name)
    look("sign-in-owner-lands-on-console")
    page.get_by_role("button", name="Sign out").click()
    sign_in(page, live_server, "customer_a")
    expect(page.get_by_role("heading", level=1)).to_have_text("Your dates")
    look("sign-in-customer-lands-on-portal")
    look.assert_accessible()
