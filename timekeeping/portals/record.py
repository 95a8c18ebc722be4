"""A page of a subject's history for the portal (S25): `history.history`'s sentences, newest
first, each at its time in the subject's zone, a page at a time.

    page(subject, before=…, zone=…)   the sentences older than `before` (None: the newest)
    parse_before(text)                the `before` of a page's address, or ValueError

A page ends where an instant ends: a tick writes several records at one instant, and since
`before` is exclusive, a page cut between two of them would lose the rest. Only a single
instant holding more than a page of records is cut (its rest is then not shown).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from timekeeping.basics import shown
from timekeeping.clocks import history
from timekeeping.models import Subject

SIZE = 50


@dataclass(frozen=True)
class Told:
    at: datetime
    when: str  # in the subject's zone
    text: str
    test_clock: str | None


@dataclass(frozen=True)
class Page:
    told: list[Told]
    older: str  # the `before` of the next page; empty on the last


def page(subject: Subject, *, before: datetime | None, zone: str, size: int = SIZE) -> Page:
    found = history.history(subject, limit=size + 1, before=before, customer=True)
    kept, older = found, ""
    if len(found) > size:
        kept = found[:size]
        whole = [said for said in kept if said.at != found[size].at]
        kept = whole or kept
        older = kept[-1].at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return Page([Told(said.at, shown.moment(said.at, zone), said.text, said.test_clock)
                 for said in kept], older)


def parse_before(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        found = None
    if found is None or found.tzinfo is None:
        raise ValueError("before: give an instant with its offset, such as "
                         "2028-04-19T04:00:00Z, as the page's 'Older' link does")
    return found
