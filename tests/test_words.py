"""Pages speak the reader's words (issue 27, ../shared/WORDS.md): every page each of the
demo's people reaches by following links is read as they read it (outside the "Details"
disclosures) and must hold no public id, no code or field path and no engine word.

The pages that speak so far are SPOKEN: the customer's portal and each brand's home in the
console. The console's other pages (subjects, schedules, timed moves, test worlds, keys,
manifests, standby, postponements) still speak the engine's language: issue 27 stays open for
them, and the Why page keeps the engine's words by design (it answers with ids and codes)."""

import io
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from tests.words import crawl, engine_words, visible_text
from timekeeping.basics import wallclock
from timekeeping.demo import CUSTOMER_USERNAME, DEMO_USERNAME, MEMBER_USERNAME, VENUE_USERNAME
from timekeeping.tick import phases

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

# New York's spring-forward morning (02:00 EST is 03:00 EDT): the demo's tax practice keeps
# New York's time, and its dates are judged on both sides of the change.
LOADED = datetime(2027, 3, 14, 6, 30, tzinfo=UTC)
SPOKEN = (re.compile(r"^/portal/"), re.compile(r"^/console/brd_\w+/(\?.*)?$"),
          re.compile(r"^/delivery/"))
WITHIN = ("/console/", "/portal/", "/delivery/")
PEOPLE = {DEMO_USERNAME: "/console/", VENUE_USERNAME: "/console/", CUSTOMER_USERNAME: "/portal/",
          MEMBER_USERNAME: "/delivery/"}


@pytest.fixture
def demo(settings):
    """The demo as its first tick leaves it: a priced date at risk, a task that ran late, a
    row held back; the wall clock stands still while the pages are read."""
    settings.DEBUG = True
    with wallclock.fixed(LOADED):
        call_command("demo", stdout=io.StringIO())
    ticked = LOADED + timedelta(minutes=1)
    with wallclock.fixed(ticked):
        phases.run_once(now=ticked)
        yield ticked


def _spoken(person: str) -> dict[str, list[str]]:
    """Each SPOKEN page the person reaches, and the engine's words found on it."""
    client = Client()
    client.force_login(get_user_model().objects.get(username=person))
    found = {}
    for path, html in crawl(client, PEOPLE[person], within=WITHIN, skip=("/feed", "logout")):
        if any(pattern.match(path) for pattern in SPOKEN):
            found[path] = engine_words(visible_text(html))
    return found


@pytest.mark.parametrize("person", list(PEOPLE))
def test_every_page_a_person_reads_names_things_and_hides_the_engine(demo, person):
    found = _spoken(person)
    # Not a vacuous pass: the owner reads three brands' homes and their test worlds, the
    # venue's owner one home, the customer the portal and their subject's page.
    assert len(found) >= {DEMO_USERNAME: 5, VENUE_USERNAME: 1, CUSTOMER_USERNAME: 2,
                          MEMBER_USERNAME: 1}[person]
    assert {path: words for path, words in found.items() if words} == {}


def test_the_reader_sees_plain_dates_money_and_names_where_the_engine_kept_ids(demo):
    client = Client()
    client.force_login(get_user_model().objects.get(username=CUSTOMER_USERNAME))
    page = visible_text(client.get("/portal/subjects/sbj_7Hq2/").content.decode())
    assert "Practice run." in page  # the demo's subject lives on a test clock
    assert "Times are New York time." in page
    assert "Demo tax practice takes care of this date" in page
    assert "The tax-plan plan renewed for cycle 2: $2,400.00 owed." in page
    assert "USD" not in page


def test_the_scanner_finds_ids_codes_and_engine_words_only_outside_details():
    seen = visible_text("<p>Timer tmr_7Hq2abc fired: <b>STATE_MOVE_REFUSED</b></p>"
                        "<p>'notice 30d' rang</p><script>var sbj_1 = 1;</script>"
                        "<details><summary>Details</summary><code>clk_Hidden1 x_y</code>"
                        "</details><p hidden>of record</p><p>Sam's 2027 return</p>")
    assert engine_words(seen) == ["tmr_7Hq2abc", "STATE_MOVE_REFUSED", "rang", "Timer"]
    assert "Details" in seen and "Sam's 2027 return" in seen
