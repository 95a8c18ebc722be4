"""Webhooks in a real browser (issue 30): the owner finds them under Settings, adds an endpoint
(the loopback receiver), copies its secret from the one page that shows it, sends a test event
from the endpoint's page (in place, with htmx), and after the outbox's sweep reads its delivery
in the log. Every page visited is screenshotted and checked for the accessibility basics."""

import pytest
from playwright.sync_api import expect

from timekeeping.models import WebhookEndpoint
from timekeeping.timers import outbox

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

OWNER = ("owner", "pw-owner")


def test_the_owner_adds_an_endpoint_and_sees_its_test_event_in_the_log(
        page, live_server, desk, sign_in, look, receiver):
    sign_in(page, *OWNER)
    page.goto(f"{live_server.url}{desk.url('settings')}")
    page.get_by_role("link", name="Webhooks").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Webhooks")
    look("webhooks-none")
    page.get_by_role("link", name="Add an endpoint").click()
    # An address inside a private network is refused, in words, on its field.
    page.get_by_label("Address (URL)").fill("http://10.0.0.1/")
    page.get_by_role("button", name="Add the endpoint").click()
    expect(page.locator(".errorlist")).to_contain_text("The address 10.0.0.1")
    look("webhook-add-refused")
    page.get_by_label("Address (URL)").fill(receiver.url)
    page.get_by_label("Description").fill("Billing system")
    page.get_by_label("Date missed").check()
    page.get_by_label("Job opened").check()
    look("webhook-add")
    page.get_by_role("button", name="Add the endpoint").click()

    expect(page.get_by_role("heading", level=1)).to_have_text("Added: Billing system")
    secret = page.get_by_label("The signing secret").input_value()
    endpoint = WebhookEndpoint.objects.get(brand=desk.brand)
    assert secret.startswith("whsec_") and secret == endpoint.secret
    look("webhook-secret")
    page.get_by_role("link", name="Go to the endpoint and its delivery log").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Billing system")
    assert secret not in page.content()
    expect(page.locator(".card.endpoint")).to_contain_text("It hears Date missed, Job opened.")

    page.evaluate("window.stillThisPage = true")
    page.get_by_role("button", name="Send test event").click()
    expect(page.get_by_role("status")).to_contain_text("A test event is on its way")
    assert page.evaluate("window.stillThisPage === true")  # answered in place
    look("webhook-test-sent")
    # The tick's outbox phase, as it would run within the minute.
    assert outbox.sweep().sent == 1
    assert len(receiver.requests) == 1
    page.reload()
    log = page.locator("ol.log")
    expect(log).to_contain_text("Test event")
    expect(log).to_contain_text("Delivered.")
    expect(log).to_contain_text("Delivered: answered 204 No Content")
    look("webhook-log")
    look("webhook-log-phone", phone=True)
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{live_server.url}{desk.url('help/webhooks')}")
    look("webhook-help")
    page.goto(f"{live_server.url}{desk.url('webhooks/')}")
    expect(page.locator("table")).to_contain_text("Billing system")
    look("webhooks-one")

    # The receiver answers that it is gone: the endpoint is turned off, and the home says so.
    receiver.statuses = [410]
    page.get_by_role("link", name="Billing system").click()
    page.get_by_role("button", name="Send test event").click()
    expect(page.locator("#test-said")).to_contain_text("A test event is on its way")
    outbox.sweep()
    page.goto(f"{live_server.url}{desk.url()}?test=off")
    item = page.locator("ul.attention li", has_text="Events no longer go to Billing system")
    expect(item).to_contain_text("its receiver answered that it is gone (410)")
    look("webhook-needs-attention")
    receiver.statuses = [204]
    item.get_by_role("button", name="Turn on and send what it missed").click()
    expect(page.get_by_role("status")).to_contain_text(
        "Turned on: new events go to Billing system again. It had missed nothing.")
    look("webhook-turned-on")
    look.assert_accessible()
