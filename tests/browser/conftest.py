"""Browser tests: Playwright driving Debian's Chromium against pytest-django's live server.

Playwright's own browser download does not work here: the tests launch the `chromium` on the
PATH (`.ci/run` installs it when missing), and fail loudly without it. Screenshots of each page
go to `screenshots/` beside manage.py (ignored by git), for people to look at.
"""

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "screenshots"
# Playwright's sync API runs an event loop in the test's thread; the test's own database work
# (fixtures, assertions) happens between its calls, never inside the loop.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


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
