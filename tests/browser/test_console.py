"""The owner console in a real browser: the at-risk list and the controls that settle a date
(with htmx in place, and without JavaScript), a subject's page, the Why box and each operations
page. Every page visited is screenshotted and checked for the accessibility basics."""

import json
import re
import time
from datetime import timedelta

import pytest
from playwright.sync_api import expect

from tests.timekeeping.console.conftest import OPENED, tax
from tests.world import manifest
from timekeeping import manifests
from timekeeping.basics import wallclock
from timekeeping.models import Connection, Schedule, ScheduleRun, SetAside, Timer
from timekeeping.moves.rows import Venue
from timekeeping.tick import phases, test_clocks
from timekeeping.timers.faults import Faults

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

# The desk (tests/timekeeping/console/conftest.py) lives on test clock "spring" at
# 2028-04-10 10:00 in New York: pay (hard) and the federal filing (priced) are near.
OWNER = ("owner", "pw-owner")
FILING_COST = "about $324 a month late"


def row(page, desk, clock_name: str, item: str = ""):
    return page.locator(f"#date-{desk.occurrence(clock_name, item).pk}")


def test_the_owner_settles_dates_in_place_with_htmx(page, live_server, desk, sign_in, look):
    # A second rehearsal with a longer name, as a brand would have: the chart's "On" menu
    # names each test clock.
    test_clocks.create(brand=desk.brand, name="year-end rehearsal", frozen_time=OPENED)
    sign_in(page, *OWNER)
    home = f"{live_server.url}{desk.url()}"
    expect(page).to_have_url(home)
    expect(page.get_by_role("heading", level=1)).to_have_text("Northwind Filing")
    # The desk's dates live in its test world: the owner switches test mode on to see them.
    page.get_by_label("Test mode").select_option(label="On: spring")
    page.get_by_role("button", name="Switch").click()
    expect(page.locator(".banner.test-mode")).to_contain_text("the test world \u201cspring\u201d")
    home = page.url  # the address says the world: /console/<brand>/?test=<spring>
    assert home.endswith(f"?test={desk.test_clock.pk}")
    filing, pay = row(page, desk, "file", "US"), row(page, desk, "pay")
    expect(filing).to_contain_text("file the 2027 return, US")
    expect(filing).to_contain_text(FILING_COST)
    expect(filing).to_contain_text("soon")
    expect(pay).to_contain_text("fixed date")
    look("console-home")
    look("console-home-phone", phone=True)
    page.set_viewport_size({"width": 1280, "height": 720})
    # htmx answers in place: a page load would forget this mark.
    page.evaluate("window.stillThisPage = true")

    pay.get_by_role("button", name="Acknowledge").click()
    expect(pay.get_by_role("status")).to_have_text("Acknowledged: pay the 2027 tax.")
    pay.get_by_label("Assign pay the 2027 tax to").select_option(label="staff (manager)")
    pay.get_by_role("button", name="Assign").click()
    expect(pay.get_by_role("status")).to_have_text("Assigned to staff: pay the 2027 tax.")
    expect(pay).to_contain_text("assigned to staff")
    look("console-home-acknowledged-assigned")

    filing.get_by_label("Choose for file the 2027 return, US").select_option("extend")
    filing.get_by_role("button", name="Choose").click()
    expect(filing.get_by_role("status")).to_contain_text(
        "Chosen: extend committed · US · moved US 2028-04-18 → 2028-10-16")
    look("console-home-chosen")

    # htmx asks first (hx-confirm): the browser's dialog names the date, and yes sends it.
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    pay.get_by_role("button", name="Mark done").click()
    expect(pay).to_contain_text("Marked done: pay the 2027 tax. It is no longer open, so it left "
                                "this list")
    expect(pay.get_by_role("button")).to_have_text(["Undo"])  # for 15 minutes
    expect(pay).to_contain_text("You can undo this for 15 minutes")
    assert asked == ["Mark pay the 2027 tax done? Its reminders stop and it leaves the dates at "
                     "risk."]
    look("console-home-marked-done")
    expect(page).to_have_url(home)
    assert page.evaluate("window.stillThisPage") is True
    page.reload()
    expect(row(page, desk, "pay")).to_have_count(0)

    page.get_by_role("link", name="Harbor Books").first.click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Harbor Books")
    history = page.locator("ol.record")
    expect(history).to_contain_text("extend")
    expect(history).to_contain_text(re.compile(r"chose|chosen", re.IGNORECASE))
    look("console-subject")
    look.assert_accessible()


def test_without_javascript_marking_done_posts_and_the_date_leaves(browser, live_server, desk,
                                                                    sign_in, look):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    sign_in(page, *OWNER)
    home = f"{live_server.url}{desk.url()}?test={desk.test_clock.pk}"  # its test world
    page.goto(home)
    filing = row(page, desk, "file", "US")
    expect(filing).to_contain_text(FILING_COST)
    filing.get_by_role("button", name="Mark done").click()
    # Without JavaScript a page asks first, and its yes posts the control.
    expect(page.get_by_role("heading", level=1)).to_have_text("Mark file the 2027 return, US done?")
    look("console-ask-first-nojs", on=page)
    page.get_by_role("button", name="Yes, mark it done").click()
    expect(page).to_have_url(home)
    expect(page.locator(".messages")).to_have_text("Marked done: file the 2027 return, US.")
    expect(filing).to_have_count(0)
    look("console-home-nojs-marked-done", on=page)
    context.close()
    look.assert_accessible()


@pytest.fixture
def operations(desk):
    """The desk with a venue's tables (a second manifest version), a nightly schedule whose last
    run failed, a row set aside and a ticket whose offer runs out within the day."""
    manifests.load(desk.brand, {**tax(), "tables": manifest()["tables"]})
    now = wallclock.wall_now()  # the live server reads the real clock
    nightly = Schedule.objects.create(key=f"{desk.brand.pk}:-:nightly", name="nightly",
                                      brand=desk.brand, action="timekeeping.schedules.pulses.nothing",  # noqa: E501
                                      every_s=86400, next_due=now + timedelta(hours=3))
    ScheduleRun.objects.create(schedule=nightly, due=now - timedelta(days=1),
                               tick=now - timedelta(days=1), outcome="failed", reason="boom")
    link = Connection.objects.select_related("brand").get(brand=desk.brand)
    venue = Venue.of(link)
    order = venue.model("orders").objects.create(customer="c1", status="placed",
                                                 pickup_at=now - timedelta(hours=2))
    SetAside.objects.create(brand_id=link.brand_id, connection=link,
                            table="orders", row=order.pk, rule=1,
                            code="STATE_MOVE_REFUSED", until=now + timedelta(minutes=30))
    venue.model("tickets").objects.create(holder="h", status="offered", link_token="C" * 16,
                                          offer_until=now + timedelta(hours=2),
                                          doors_at=now + timedelta(days=2),
                                          valid_to=now + timedelta(days=3))
    return desk


def test_the_owner_reads_why_and_works_each_operations_page(page, live_server, operations,
                                                            sign_in, look):
    desk = operations
    sign_in(page, *OWNER)
    console = f"{live_server.url}{desk.url()}"
    nav = page.get_by_role("navigation", name="Northwind Filing: the console")
    attention = page.locator("ul.attention")
    expect(attention).to_contain_text("The nightly schedule failed")
    expect(attention).to_contain_text("Couldn't move row")
    look("console-home-needs-attention")

    nav.get_by_role("link", name="Subjects").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Subjects of Northwind Filing")
    look("console-subjects")

    timer = Timer.objects.filter(brand=desk.brand, state=Timer.State.ARMED).order_by(
        "owed").first()
    nav.get_by_role("link", name="Why").click()
    look("console-why")
    page.get_by_label("A date, a schedule's name or a table row").fill(timer.pk)
    page.get_by_role("button", name="Ask why").click()
    expect(page.get_by_role("heading", level=2)).to_have_text("The answer")
    expect(page.locator("ul.answer li").first).to_be_visible()
    expect(page.locator("ul.answer")).to_contain_text(timer.pk)
    look("console-why-timer")

    nav.get_by_role("link", name="Schedules").click()
    nightly = page.get_by_role("row").filter(has_text="nightly")
    expect(nightly).to_contain_text("failed")
    look("console-schedules")
    nightly.get_by_role("button", name="Pause").click()
    expect(page.locator(".messages")).to_contain_text("nightly is paused")
    expect(nightly.get_by_role("button", name="Resume")).to_be_visible()
    look("console-schedules-paused")

    nav.get_by_role("link", name="Timed moves").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Timed moves")
    expect(page.locator("body")).to_contain_text("is running")
    held = page.locator("section[aria-labelledby='aside'] li")
    expect(held).to_have_count(1)
    expect(held).to_contain_text("Couldn't move row")  # the code under Details
    expect(held.locator("details")).to_contain_text("STATE_MOVE_REFUSED")
    look("console-moves")

    nav.get_by_role("link", name="Settings").click()
    page.locator("dl.settings").get_by_role("link", name="Postponements").click()
    page.get_by_label("Dates due from").fill("2028-04-17")
    page.get_by_label(re.compile(r"^through")).fill("2028-04-19")
    page.get_by_label("move to").fill("2028-05-01")
    page.get_by_label("The notice that moves them").fill("IR-2028-77: storms")
    page.get_by_label("In which world").select_option(desk.test_clock.pk)
    look("console-postponements")
    page.get_by_role("button", name="Add it and move the dates").click()
    expect(page.locator(".messages")).to_contain_text(
        "Notice added: 2 dates moved to Mon 1 May 2028")
    expect(page.get_by_role("row").filter(has_text="IR-2028-77: storms")).to_have_count(1)
    look("console-postponement-added")

    nav.get_by_role("link", name="Settings").click()
    page.locator("dl.settings").get_by_role("link", name="Test clocks").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Test worlds")
    look("console-test-clocks")
    page.get_by_role("link", name="spring").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Test world spring")
    page.get_by_role("link", name="look at it in test mode").click()
    expect(page.locator(".banner.test-mode")).to_contain_text("\u201cspring\u201d")
    ahead = page.locator("section[aria-labelledby='ahead']")
    expect(ahead.get_by_role("heading", level=3).first).to_be_visible()
    expect(ahead.get_by_role("img")).to_be_visible()
    expect(ahead).to_contain_text("pay the 2027 tax")
    look("console-home-test-clock-next-30-days")
    page.go_back()
    page.get_by_label(re.compile(r"^Move it on to")).fill("2028-04-19T09:00")
    page.get_by_role("button", name="Move it on").click()
    # Asked for: the page shows the walk coming, and asks for its part again every 2 s.
    walk = page.locator("#walk")
    expect(walk.get_by_role("heading", name="Moving on")).to_be_visible()
    expect(walk).to_contain_text("0% · reached Mon 10 Apr 2028, 10:00 EDT")
    look("console-test-clock-advancing")
    # The tick walks it (here, its walks phase); the page, asking again, shows the end and
    # the trace.
    phases.walk_test_clocks(Faults(wallclock.wall_now()), deadline=time.monotonic() + 60,
                            holder="the browser test")
    expect(page.get_by_role("heading", name="What happened the last time it moved on")
           ).to_be_visible(timeout=15_000)
    expect(walk).to_contain_text("100% · reached Wed 19 Apr 2028, 09:00 EDT")
    expect(walk).to_contain_text("Wed 19 Apr 2028, 09:00 EDT")
    expect(page.locator("pre")).to_contain_text(
        f"{desk.test_clock.pk} · 2028-04-10 14:00Z → 2028-04-19 13:00Z")
    look("console-test-clock-advanced")

    nav.get_by_role("link", name="Settings").click()
    page.locator("dl.settings").get_by_role("link", name="API keys").click()
    page.get_by_label("What the key is for").fill("bookkeeping")
    look("console-keys")
    page.get_by_role("button", name="Make the key").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your new key: bookkeeping")
    secret = page.get_by_label("The secret").input_value()
    assert secret.startswith("kt_")
    look("console-key-made")
    page.get_by_role("link", name="Back to the keys").click()
    expect(page.get_by_role("row").filter(has_text="bookkeeping")).to_have_count(1)
    assert secret not in page.content()

    nav.get_by_role("link", name="Settings").click()
    page.locator("dl.settings").get_by_role("link", name="Manifests").click()
    broken = tax()
    broken["calendar"]["zone"] = "Mars/Olympus"
    broken["services"]["annual-return"]["clocks"]["pay"]["owner"] = "nobody"
    page.get_by_label("The manifest (JSON)").fill(json.dumps(broken))
    page.get_by_role("button", name="Check it").click()
    expect(page.get_by_role("alert")).to_contain_text("2 problems")
    problems = page.locator("table.problems")
    expect(problems).to_contain_text("$.calendar.zone")
    expect(problems).to_contain_text("$.services.annual-return.clocks.pay.owner")
    look("console-manifests-problems")

    # The plan before the load: a step added, and a clock still keeping open dates removed
    # without saying so in `removes`, which the load would refuse.
    planned = tax()
    planned["services"]["annual-return"]["steps"]["review"] = {}
    del planned["services"]["annual-return"]["clocks"]["pay"]
    page.get_by_label("The manifest (JSON)").fill(json.dumps(planned))
    page.get_by_role("button", name="Check it").click()
    expect(page.locator("table.problems").get_by_role("row").filter(
        has_text="$.services.annual-return.clocks.pay")).to_contain_text("removal_unstated")
    plan = page.locator("table.plan")
    expect(plan.get_by_role("row").filter(has_text="steps.review")).to_contain_text("added")
    removed = plan.get_by_role("row").filter(has_text="clocks.pay")
    expect(removed).to_contain_text("open date")
    expect(removed).to_contain_text("not listed among what it removes")
    look("console-manifests-plan")
    assert page.url.startswith(console)
    look.assert_accessible()
