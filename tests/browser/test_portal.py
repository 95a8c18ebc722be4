"""The customer portal in a real browser: a customer sees only their subject's dates,
acknowledges one of their own (a buyer-owned clock) in place, and subscribes to the feed.
Every page visited is screenshotted and checked for the accessibility basics."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

# The portal (tests/timekeeping/portal/conftest.py): the buyer is a customer of Fernhill Tools;
# "Someone Else" is another subject of the same brand, "A Stranger" one of another brand.
BUYER = ("buyer", "pw-buyer")


def test_a_customer_sees_only_their_subject_and_acknowledges_their_own_date(page, live_server,
                                                                            portal, sign_in,
                                                                            look):
    sign_in(page, *BUYER)
    expect(page).to_have_url(f"{live_server.url}/portal/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Your dates")
    dates = page.locator("table.dates tbody tr")
    expect(dates.first).to_be_visible()
    for each in dates.all():
        expect(each.get_by_role("link").first).to_have_text("Fernhill Tools")
    body = page.locator("main")
    expect(body).not_to_contain_text("Someone Else")
    expect(body).not_to_contain_text("A Stranger")
    look("portal-home")
    look("portal-home-phone", phone=True)
    page.set_viewport_size({"width": 1280, "height": 720})

    filing = page.locator(f"#date-{portal.clock('file').occurrences.get(item='US').pk}")
    expect(filing).to_contain_text("Northwind Filing takes care of this date")
    expect(filing.get_by_role("button")).to_have_count(0)
    pay = page.locator(f"#date-{portal.clock('pay').occurrences.get().pk}")
    page.evaluate("window.stillThisPage = true")
    pay.get_by_role("button", name="Acknowledge").click()
    expect(pay.get_by_role("status")).to_have_text("Acknowledged: pay the 2027 tax.")
    expect(pay.get_by_role("button", name="Acknowledge")).to_have_count(0)
    expect(pay.get_by_role("button", name="Mark done")).to_be_visible()
    expect(page).to_have_url(f"{live_server.url}/portal/")
    assert page.evaluate("window.stillThisPage") is True
    look("portal-home-acknowledged")

    pay.get_by_role("link", name="Fernhill Tools").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Fernhill Tools")
    expect(page.locator("ol.history")).to_contain_text("acknowledged")
    look("portal-subject")
    look.assert_accessible()


def test_a_customer_subscribes_by_webcal_or_by_downloading_the_ics(page, live_server, portal,
                                                                   sign_in, look):
    sign_in(page, *BUYER)
    page.goto(f"{live_server.url}/portal/subjects/{portal.subject.pk}/")
    subscribe = page.get_by_role("link", name="Subscribe in your calendar app")
    webcal = subscribe.get_attribute("href")
    assert webcal.startswith("webcal://")
    assert f"/subjects/{portal.subject.pk}/calendar.ics?token=" in webcal

    download = page.get_by_role("link", name="Download the .ics file")
    answer = page.request.get(f"{live_server.url}{download.get_attribute('href')}")
    assert answer.status == 200
    assert answer.headers["content-type"].startswith("text/calendar")
    ics = answer.text()
    assert ics.startswith("BEGIN:VCALENDAR") and ics.count("BEGIN:VEVENT") >= 3
    assert "BEGIN:VALARM" in ics  # pay is the buyer's: its notice rungs ring in the calendar
    with page.expect_download() as downloading:
        download.click()
    saved = downloading.value
    assert saved.suggested_filename.endswith(".ics")
    assert "BEGIN:VEVENT" in open(saved.path(), encoding="utf-8").read()

    page.once("dialog", lambda dialog: dialog.accept())  # htmx asks first: yes
    page.get_by_role("button", name="Make a new link").click()
    expect(page.get_by_role("status")).to_have_text(
        "A new calendar link: the old one no longer works.")
    expect(subscribe).not_to_have_attribute("href", webcal)
    expect(subscribe).to_have_attribute("href", re.compile(r"^webcal://"))
    look("portal-subject-new-link")
    look.assert_accessible()
