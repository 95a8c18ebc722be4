"""The demo's three people do their main jobs in Chromium (issue 27), each walk screenshotted
and checked for the accessibility basics:

- the owner of three brands sees the overview, opens the tax practice, switches test mode on
  and off, assigns a date, marks it done (asked first) and undoes it; without JavaScript, a
  confirmation page asks before the date leaves the list;
- the customer sees what they pay and what the practice waits for, answers the ask, cancels
  the plan at the cycle's end (asked first) and resumes it;
- the member sees her tasks and the dates assigned to her, and extends her hold.

The demo's dates live on test clocks in New York and Chicago (tests/browser/conftest.py's
`demo`), frozen whatever the live server's real clock says."""

import re

import pytest
from playwright.sync_api import expect

from timekeeping.demo import (
    CUSTOMER_USERNAME,
    DEMO_PASSWORD,
    DEMO_USERNAME,
    MEMBER_USERNAME,
    NEAR_CLOCK,
    NEAR_SUBJECT,
)
from timekeeping.models import Occurrence, Task

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

BANNER = "Test mode: you are looking at the test world"


def date(page, name: str, item: str = ""):
    """Juniper Labs' date of clock `name` (`item`), in its test world, on the page."""
    found = Occurrence.objects.get(clock__job__subject_id=NEAR_SUBJECT, clock__name=name,
                                   item=item)
    return page.locator(f"#date-{found.pk}")


def filing(page, item: str):
    """Juniper Labs' filing date in `item`, a week away in its test world."""
    return date(page, "file", item)


def test_the_owner_sees_the_overview_tries_test_mode_and_undoes_a_date_done(
        page, live_server, demo, sign_in, look):
    sign_in(page, DEMO_USERNAME, DEMO_PASSWORD)
    expect(page).to_have_url(f"{live_server.url}/console/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Your brands")
    brands = page.locator("main table tbody tr")
    expect(brands).to_have_count(3)
    expect(brands.filter(has_text="Demo tax practice")).to_contain_text("1 ran late")
    look("console-overview")

    page.get_by_role("link", name="Demo tax practice").first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Demo tax practice")
    expect(page.get_by_text(BANNER)).to_have_count(0)
    page.get_by_label("Test mode").select_option(label="On: a week before filing")
    page.get_by_role("button", name="Switch").click()
    expect(page).to_have_url(re.compile(rf"\?test={NEAR_CLOCK}$"))
    expect(page.get_by_role("status").filter(has_text=BANNER)).to_be_visible()
    us = filing(page, "US")
    expect(us).to_contain_text("about $324 a month late")
    look("console-home-test-mode")

    # The banner stays on every page of the brand while test mode is on.
    page.get_by_role("navigation").get_by_role("link", name="Subjects").first.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Subjects")
    expect(page.get_by_text(BANNER)).to_be_visible()
    expect(page.locator("main")).to_contain_text("Juniper Labs")
    look("console-subjects")
    page.go_back()

    # Paying the tax: no other date is measured from it, so marking it done can be undone.
    pay = date(page, "pay")
    pay.get_by_label("Assign pay the 2027 tax to").select_option(label="Ada Park (manager)")
    pay.get_by_role("button", name="Assign").click()
    expect(pay.get_by_role("status")).to_contain_text("Assigned to Ada Park")

    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    pay.get_by_role("button", name="Mark done").click()
    expect(pay).to_contain_text("Marked done: pay the 2027 tax.")
    assert asked and "pay the 2027 tax" in asked[0]
    expect(pay).to_contain_text("You can undo this for 15 minutes")
    look("console-home-marked-done")
    pay.get_by_role("button", name="Undo").click()
    expect(pay).to_contain_text("Undone")
    page.reload()
    expect(date(page, "pay").get_by_role("button", name="Mark done")).to_be_visible()

    page.get_by_role("button", name="Leave test mode").click()
    expect(page.get_by_text(BANNER)).to_have_count(0)
    expect(page.get_by_label("Test mode")).to_have_value("off")
    look("console-home-live")
    look.assert_accessible()


def test_without_javascript_the_owner_is_asked_before_a_date_leaves(browser, live_server, demo,
                                                                     sign_in, look):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    sign_in(page, DEMO_USERNAME, DEMO_PASSWORD)
    page.goto(f"{live_server.url}/console/{demo.pk}/?test={NEAR_CLOCK}")
    california = filing(page, "US-CA")
    california.get_by_role("button", name="Mark done").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(
        "Mark file the 2027 return, US-CA done?")
    look("console-ask-first-nojs-demo", on=page)
    page.get_by_role("button", name="Yes, mark it done").click()
    expect(page.locator(".messages")).to_contain_text("Marked done: file the 2027 return, US-CA.")
    expect(filing(page, "US-CA")).to_have_count(0)
    expect(filing(page, "US")).to_have_count(1)
    look("console-home-nojs-demo-marked-done", on=page)
    context.close()
    look.assert_accessible()


def test_the_customer_sees_what_they_pay_answers_the_ask_and_cancels_then_resumes(
        page, live_server, demo, sign_in, look):
    sign_in(page, CUSTOMER_USERNAME, DEMO_PASSWORD)
    expect(page).to_have_url(f"{live_server.url}/portal/")
    practice = page.locator(".world.practice")
    expect(practice).to_contain_text("tax plan · $2,400.00 every year")
    expect(practice).to_contain_text("Next charge: $2,400.00 on Sat 20 Jan 2029")
    waiting = practice.locator("ul.waiting")
    expect(waiting).to_contain_text("Demo tax practice needs it")
    look("portal-home")

    waiting.get_by_role("link").first.click()
    page.get_by_role("button", name="Send my answer").click()
    expect(page.get_by_role("status")).to_have_text("Thank you: your answer is recorded.")
    look("portal-ask-answered")

    page.goto(f"{live_server.url}/portal/")
    expect(page.locator(".world.practice ul.waiting")).to_have_count(0)
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    page.get_by_role("button", name=re.compile(r"^Cancel at the cycle's end")).click()
    plan = page.locator(".world.practice [id^='plan-']")
    expect(plan).to_contain_text("Your tax plan stops on Sat 20 Jan 2029")
    assert asked and "does not renew" in asked[0]
    look("portal-plan-cancelled")
    plan.get_by_role("button", name=re.compile(r"^Resume")).click()
    expect(plan).to_contain_text("Resumed: your tax plan renews on Sat 20 Jan 2029")
    look.assert_accessible()


def test_the_member_sees_her_tasks_and_dates_and_extends_her_hold(page, live_server, demo,
                                                                  sign_in, look):
    sign_in(page, MEMBER_USERNAME, DEMO_PASSWORD)
    page.goto(f"{live_server.url}/delivery/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Your work")
    held = Task.objects.get(job__subject_id=NEAR_SUBJECT, state=Task.State.HELD)
    task = page.locator(f"#task-{held.pk}")
    expect(task).to_contain_text("prepare the return")
    expect(task).to_contain_text("held by you until Wed 12 Apr 2028, 08:00 CDT")
    expect(filing(page, "US")).to_contain_text("about $324 a month late")
    expect(filing(page, "US-CA")).to_be_visible()
    look("delivery-home")

    task.get_by_role("button", name="Extend").click()
    expect(task.get_by_role("status")).to_contain_text(
        "Extended: prepare the return is yours until")
    expect(task).to_contain_text("(extended once)")
    expect(task.get_by_role("button", name="Extend")).to_have_count(0)
    look("delivery-extended-demo")
    look.assert_accessible()
