"""The delivery portal in a real browser: a manager signs in, takes a task in place with htmx,
extends the hold, and sees a second extension (from a page opened before the first) refused in
words on the task's row. Every page visited is screenshotted and checked for the accessibility
basics, at a phone's width too."""

import pytest
from playwright.sync_api import expect

from tests.timekeeping.delivery import conftest as world

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

# The delivery world (tests/timekeeping/delivery/conftest.py): staff manages Northwind Filing,
# whose subject Harbor lives on test clock "spring" at 2028-03-01 09:00 in New York; its task
# "prepare the return" (hold 2d) is open in the pool, and its filing date is staff's.
MANAGER = ("staff", "pw-staff")
delivery = world.delivery  # the fixture, for this module


def test_a_manager_takes_and_extends_a_task_in_place(page, live_server, delivery, sign_in,
                                                     look):
    sign_in(page, *MANAGER)
    page.goto(f"{live_server.url}/delivery/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Your work")
    task = page.locator(f"#task-{delivery.task.pk}")
    expect(task).to_contain_text("prepare the return")
    expect(task).to_contain_text("Sat 11 Mar 2028, 09:00 EST")
    expect(task).to_contain_text("New York time")
    expect(task).to_contain_text("open in the pool")
    expect(page.locator(f"#date-{delivery.date.pk}")).to_contain_text("file it")
    expect(page.locator("main")).not_to_contain_text("A Stranger")
    look("delivery-home")
    look("delivery-home-phone", phone=True)
    page.set_viewport_size({"width": 1280, "height": 720})

    page.evaluate("window.stillThisPage = true")  # htmx answers in place: a load forgets it
    task.get_by_role("button", name="Take").click()
    expect(task.get_by_role("status")).to_have_text(
        "Taken: prepare the return is yours until Fri 3 Mar 2028, 09:00 EST.")
    expect(task).to_contain_text("held by you until Fri 3 Mar 2028, 09:00 EST")
    expect(task.get_by_role("button", name="Take")).to_have_count(0)
    assert page.evaluate("window.stillThisPage") is True
    look("delivery-taken")

    stale = page.context.new_page()  # a second tab, opened while the hold is not extended
    stale.goto(f"{live_server.url}/delivery/")
    stale_task = stale.locator(f"#task-{delivery.task.pk}")
    expect(stale_task.get_by_role("button", name="Extend")).to_be_visible()

    task.get_by_role("button", name="Extend").click()
    expect(task.get_by_role("status")).to_have_text(
        "Extended: prepare the return is yours until Sun 5 Mar 2028, 09:00 EST. "
        "A hold extends once.")
    expect(task).to_contain_text("(extended once)")
    expect(task.get_by_role("button", name="Extend")).to_have_count(0)
    expect(task.get_by_role("button", name="Release")).to_be_visible()
    expect(task.get_by_role("button", name="Done")).to_be_visible()
    assert page.evaluate("window.stillThisPage") is True
    look("delivery-extended")

    stale_task.get_by_role("button", name="Extend").click()
    expect(stale_task.get_by_role("status")).to_have_text(
        "Not extended: a hold can be extended once; this one was already extended.")
    expect(stale_task).to_contain_text("held by you until Sun 5 Mar 2028, 09:00 EST")
    look("delivery-extend-refused", on=stale)
    look("delivery-extend-refused-phone", on=stale, phone=True)
    look.assert_accessible()
