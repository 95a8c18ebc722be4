"""Browser tests: Playwright driving Debian's Chromium against pytest-django's live server.

Playwright's own browser download does not work here: the tests launch the `chromium` on the
PATH (`.ci/run` installs it when missing), and fail loudly without it. Screenshots of each page
go to `screenshots/` beside manage.py (ignored by git), for people to look at.
"""

import io
import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from playwright.sync_api import expect

# The desks the console's and the portal's own tests work at, for the browser to visit.
from tests.timekeeping.console.conftest import desk  # noqa: F401
from tests.timekeeping.portal.conftest import portal  # noqa: F401
from timekeeping import clocks
from timekeeping.basics import wallclock
from timekeeping.demo import DEMO_PASSWORD, TAX_CLOCK, TAX_SUBJECT
from timekeeping.models import Ask, Brand, Member, Subject, TestClock
from timekeeping.tick import phases

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SHOTS = ROOT / "screenshots"


def pytest_runtest_setup(item):
    """Playwright's sync API runs an event loop in the test thread and leaves it running; the
    browser tests' own database work (fixtures, assertions, the flush after each) happens
    between its calls. Set only once the browser tests begin: they run last (tests/conftest.py),
    so no earlier test, nor its child processes, inherits it."""
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail("chromium is not installed: `apt-get install -y chromium` (.ci/run does it)")
    return {**browser_type_launch_args, "executable_path": path,
            "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--no-first-run",
                     "--disable-quic"]}


@pytest.fixture
def shoot(page):
    """Save a full-page screenshot named for the step: `shoot("console-home")`."""
    SHOTS.mkdir(exist_ok=True)

    def take(name: str) -> Path:
        path = SHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


def script(name: str) -> str:
    """A check written in JavaScript beside this file, without its header comment."""
    lines = (HERE / name).read_text().splitlines()
    return "\n".join(line for line in lines if not line.startswith("//"))


# Accessibility basics, read from the page as the browser built it: every field has a name
# (a <label for>, a wrapping label, aria-label or aria-labelledby), one <h1>, heading levels that
# never skip on the way down, images with alt text, buttons with names, ids used once (a
# repeated id points a <label for> at the wrong field). Each problem names its element.
ACCESSIBILITY = script("accessibility.js")

# A page at a phone's width must not scroll sideways (WCAG 1.4.10, reflow): what overflows,
# named by its element.
OVERFLOW = script("reflow.js")

PHONE = {"width": 390, "height": 844}


class Looks:
    """Each page a test visits: its screenshot and its accessibility problems, gathered so one
    failure at the end names every page and element at once."""

    def __init__(self, page):
        self.page = page
        self.problems: dict[str, list[str]] = {}

    def __call__(self, name: str, on=None, *, phone: bool = False) -> Path:
        """Screenshot the page as `name` and check it; `on` another page (a second browser
        context); `phone` at 390×844, also checking nothing spills sideways."""
        page = on or self.page
        SHOTS.mkdir(exist_ok=True)
        # A click on a link returns once the next page's navigation has committed, before its
        # document is built: wait for it, or a busy machine checks a page still empty.
        page.wait_for_load_state("load")
        if phone:
            page.set_viewport_size(PHONE)
        found = list(page.evaluate(ACCESSIBILITY))
        if phone:
            found += [f"at phone width, {spill}" for spill in page.evaluate(OVERFLOW)]
        if found:
            self.problems[f"{name} ({page.url})"] = found
        path = SHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    def assert_accessible(self) -> None:
        told = "\n".join(f"{where}:\n" + "\n".join(f"  - {each}" for each in found)
                         for where, found in self.problems.items())
        assert not self.problems, f"accessibility basics fail on these pages:\n{told}"


@pytest.fixture
def look(page) -> Looks:
    """`look("console-home")`: screenshot the page and check its accessibility basics; end the
    test with `look.assert_accessible()`."""
    return Looks(page)


@pytest.fixture
def sign_in(live_server):
    """Sign someone in through the login page, as a person would."""

    def enter(page, username: str, password: str) -> None:
        page.goto(f"{live_server.url}/accounts/login/")
        page.get_by_label("Username").fill(username)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Sign in").click()
        expect(page.get_by_role("button", name="Sign out")).to_be_visible()

    return enter


# The demo as `manage.py demo` loads it, on New York's spring-forward morning (its tax practice
# keeps New York's time), and ticked once, as tests/test_words.py reads it.
DEMO_LOADED = datetime(2027, 3, 14, 6, 30, tzinfo=UTC)
HARBOR_2027 = {"jurisdictions": ["US", "US-CA"], "earliest_credit_expiry": "2031-06-30"}
VIEWER_USERNAME = "vera"  # a viewer of the tax practice, which the demo itself does not seat


@pytest.fixture
def demo(settings) -> Brand:
    """The demo's world, its tax practice returned, with two things the pages need more of:
    Harbor Robotics' 2027 return, taken on by hand, asking the customer for the organizer (an
    open ask); and a viewer.
    The demo's dates live on test clocks, so the live server's real clock never moves them."""
    settings.DEBUG = True  # the demo refuses to load its published password otherwise
    with wallclock.fixed(DEMO_LOADED):
        call_command("demo", stdout=io.StringIO())
    ticked = DEMO_LOADED + timedelta(minutes=1)
    with wallclock.fixed(ticked):
        phases.run_once(now=ticked)
    harbor = TestClock.objects.get(pk=TAX_CLOCK)
    # The practice takes on Harbor's 2027 return, which opens by asking for the organizer.
    clocks.order(brand=harbor.brand, service="annual-return",
                 subject=Subject.objects.get(pk=TAX_SUBJECT), period="2027",
                 by="the practice", input=HARBOR_2027)
    assert Ask.objects.filter(test_clock=harbor, state=Ask.State.OPEN).exists()
    viewer = get_user_model().objects.create_user(VIEWER_USERNAME, "vera@keeping-time.example",
                                                  DEMO_PASSWORD, first_name="Vera")
    Member.objects.create(brand=harbor.brand, user=viewer, role=Member.Role.VIEWER)
    return harbor.brand
