"""A brand's data as a whole in a real browser (issue 31): its owner finds "Download or delete"
under Settings, downloads the file, is asked the brand's name before deleting, lands on the
deleted brands, and brings it back. Every page is screenshotted and checked for the basics."""

import json

import pytest
from playwright.sync_api import expect

from timekeeping.demo import DEMO_PASSWORD, VENUE_USERNAME
from timekeeping.models import Brand, BrandArchive

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]


def test_the_owner_downloads_deletes_and_brings_back_the_brand(page, live_server, demo,
                                                                 sign_in, look):
    venue = Brand.objects.get(slug="demo-venue")
    sign_in(page, VENUE_USERNAME, DEMO_PASSWORD)
    page.goto(f"{live_server.url}/console/{venue.pk}/settings")
    page.get_by_role("link", name="Download or delete").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Download or delete Demo venue")
    look("leave")
    with page.expect_download() as waiting:
        page.get_by_role("link", name="Download Demo venue's data").click()
    download = waiting.value
    assert download.suggested_filename.startswith("demo-venue-")
    document = json.loads(open(download.path(), encoding="utf-8").read())
    assert document["brand"] == venue.pk

    page.get_by_label("Type the brand's name to delete it").fill("Demo")
    page.get_by_role("button", name="Delete Demo venue").click()
    expect(page.locator(".errorlist")).to_contain_text("Type Demo venue exactly")
    look("leave-wrong-name")
    assert Brand.objects.filter(pk=venue.pk).exists()
    page.get_by_label("Type the brand's name to delete it").fill("Demo venue")
    page.get_by_role("button", name="Delete Demo venue").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Deleted brands")
    expect(page.get_by_role("status")).to_contain_text(
        "Demo venue is deleted.")
    look("deleted")
    look("deleted-phone", phone=True)
    page.set_viewport_size({"width": 1280, "height": 720})
    assert not Brand.objects.filter(pk=venue.pk).exists()

    page.get_by_role("button", name="Bring Demo venue back").click()
    expect(page.locator("body")).to_contain_text("Demo venue is back.")
    assert Brand.objects.filter(pk=venue.pk).exists() and not BrandArchive.objects.exists()
    look("brought-back")
