"""Every page a person reaches, visited in the browser and read by axe-core (issue 27).

    shape(path)            the kind of page a path is: its ids kept only by their prefix, its
                           query by its keys (and the prefixes of ids in their values)
    Crawl(page, base)      follows links from start pages, one page of each shape, and reads
                           each with axe-core and accessibility.js; `.problems` per page

A person reaches hundreds of pages that differ only by an id (215 for the demo's owner); one
of each shape is read, so the check stays within a couple of minutes on a shared machine and
still reads every kind of page, in test mode and live.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urldefrag, urlsplit

from axe_playwright_python.sync_playwright import Axe

from tests.browser.conftest import ACCESSIBILITY

FAILING = ("serious", "critical")  # axe-core's impacts that fail the check
# Public ids but the brand's: each brand's pages are read, a venue's differ from a practice's.
ID = re.compile(r"\b(?!brd_)([a-z]{2,4})_[A-Za-z0-9]+")
LINKS = "Array.from(document.querySelectorAll('a[href]'), a => a.getAttribute('href'))"
# Links that leave the pages (feeds, downloads, the API, the admin) or end the session.
SKIP = ("/feed", ".ics", "logout", "/api/", "/admin/", "webcal:", "/leave/export")
WITHIN = ("/console/", "/portal/", "/delivery/", "/accounts/", "/ask/")
LIMIT = 120  # pages per person: a crawl that finds more is a crawl gone wrong


def _prefixes(text: str) -> str:
    return ID.sub(r"\1_", text)


def shape(path: str) -> str:
    parts = urlsplit(path)
    query = sorted(f"{key}={_prefixes(value) if ID.search(value) else ''}"
                   for key, value in parse_qsl(parts.query, keep_blank_values=True))
    return _prefixes(parts.path) + ("?" + "&".join(query) if query else "")


def _axe(page) -> list[str]:
    """axe-core's serious and critical violations: the rule, its help and where."""
    violations = Axe().run(page).response["violations"]
    return [f"{each['id']} ({each['impact']}): {each['help']} at "
            + ", ".join(" ".join(node["target"]) for node in each["nodes"][:4])
            for each in violations if each["impact"] in FAILING]


class Crawl:
    """One person's pages, breadth first from the start paths, one page of each shape."""

    def __init__(self, page, base: str):
        self.page, self.base = page, base
        self.problems: dict[str, list[str]] = {}
        self.read: list[str] = []
        self._shapes: set[tuple[str, str]] = set()
        self._mode = "live"

    def visit(self, *starts: str, mode: str = "live") -> None:
        """Read the pages reached from `starts`; `mode` tells apart the same pages read again
        in another mode (test mode, kept in the session, redirects them to its own)."""
        self._mode = mode
        queue = [start for start in starts if self._new(start)]
        while queue and len(self.read) < LIMIT:
            path = queue.pop(0)
            answer = self.page.goto(self.base + path)
            if answer is None or not answer.ok or "text/html" not in answer.headers.get(
                    "content-type", ""):
                continue
            self.check(path)
            queue += [link for link in self._links() if self._new(link)]

    def check(self, name: str) -> None:
        """Read the page on screen with axe-core and accessibility.js, as `name`."""
        self.page.wait_for_load_state("load")
        self.read.append(name)
        found = _axe(self.page) + list(self.page.evaluate(ACCESSIBILITY))
        if found:
            self.problems[f"{name} ({self.page.url})"] = found

    def _links(self) -> list[str]:
        return [urldefrag(href)[0] for href in self.page.evaluate(LINKS)]

    def _new(self, link: str) -> bool:
        parts = urlsplit(link)
        if parts.scheme or parts.netloc or not link.startswith(WITHIN) \
                or any(piece in link for piece in SKIP) \
                or (self._mode, shape(link)) in self._shapes:
            return False
        self._shapes.add((self._mode, shape(link)))
        return True

    def told(self) -> str:
        return "\n".join(f"{where}:\n" + "\n".join(f"  - {each}" for each in found)
                         for where, found in self.problems.items())
