"""Every page each of the demo's people reaches has no serious or critical accessibility
violation by axe-core, nor any of accessibility.js's basics (issue 27): the console as the
owner of three brands, as a manager and as a viewer of the tax practice, live and in test
mode; the delivery portal; the customer's portal with an open ask; sign-in and the 404 page.
Each failure names the page and the rule."""

import pytest
from django.contrib.auth import get_user_model

from tests.browser.conftest import VIEWER_USERNAME
from tests.browser.pages import Crawl
from timekeeping.demo import CUSTOMER_USERNAME, DEMO_PASSWORD, DEMO_USERNAME, MEMBER_USERNAME
from timekeeping.models import TestClock, brands_kept_by

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

# Where each person starts; the console's people also start in each test world they keep.
STARTS = {DEMO_USERNAME: ("/console/",), MEMBER_USERNAME: ("/console/", "/delivery/"),
          VIEWER_USERNAME: ("/console/",), CUSTOMER_USERNAME: ("/portal/",)}
# Not a vacuous pass: the least each person's crawl reads (kinds of page, not pages).
AT_LEAST = {DEMO_USERNAME: 90, MEMBER_USERNAME: 40, VIEWER_USERNAME: 40, CUSTOMER_USERNAME: 3}


def _test_worlds(username: str) -> list[str]:
    user = get_user_model().objects.get(username=username)
    return [f"/console/{world.brand_id}/?test={world.pk}"
            for world in TestClock.objects.filter(brand__in=brands_kept_by(user)).order_by("pk")]


@pytest.mark.parametrize("person", list(STARTS))
def test_every_page_a_person_reaches_passes_axe(page, live_server, demo, sign_in, person):
    sign_in(page, person, DEMO_PASSWORD)
    crawl = Crawl(page, live_server.url)
    crawl.visit(*STARTS[person])
    # In test mode after live: the switch is kept in the session, so live pages come first.
    crawl.visit(*_test_worlds(person), mode="test")
    assert not crawl.problems, f"{person} meets accessibility violations:\n{crawl.told()}"
    assert len(crawl.read) >= AT_LEAST[person], crawl.read


def test_sign_in_and_the_404_page_pass_axe(page, live_server, demo, settings):
    crawl = Crawl(page, live_server.url)
    crawl.visit("/accounts/login/")
    settings.DEBUG = False  # the 404 page people see, not Django's debug page
    answer = page.goto(f"{live_server.url}/console/no-such-page/")
    assert answer.status == 404
    crawl.check("the 404 page")
    assert len(crawl.read) >= 3, crawl.read  # sign-in, password reset, the 404 page
    assert not crawl.problems, f"accessibility violations:\n{crawl.told()}"
