"""A subject's calendar (SPEC S22): every date kept and ahead, for the API, the iCalendar feed
and the command line. Dates print in the subject's zone; each line says what it is, its kind,
who answers for it, and its status (open; kept on a date; extended from; rolled from; lapsed).
Occurrences of one clock with the same date and status share a line, their items joined."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from calendars import ical
from calendars.moments import day_in_zone
from timekeeping.models import Occurrence, Subject, TestClock


@dataclass(frozen=True)
class Line:
    date: date
    what: str
    kind: str
    answers_for: str
    status: str
    uid: str

    def as_dict(self) -> dict:
        return {"date": self.date.isoformat(), "what": self.what, "kind": self.kind,
                "answers_for": self.answers_for, "status": self.status, "uid": self.uid}


ANY_CLOCK = "any"


def lines(subject: Subject, *, test_clock: TestClock | None | str = ANY_CLOCK,
          start: date | None = None, end: date | None = None) -> list[Line]:
    """The subject's dates; `test_clock` limits them to one brand clock (None: the real one)."""
    found = Occurrence.objects.filter(clock__subject=subject).select_related("clock")
    if test_clock != ANY_CLOCK:
        found = found.filter(clock__test_clock=test_clock)
    if start:
        found = found.filter(due__gte=start)
    if end:
        found = found.filter(due__lte=end)
    groups: dict[tuple, list[Occurrence]] = {}
    for occurrence in found:
        key = (occurrence.due, occurrence.clock_id, _status(subject, occurrence))
        groups.setdefault(key, []).append(occurrence)
    result = []
    for (due, _, status), group in groups.items():
        row = group[0].clock
        items = [occurrence.item for occurrence in group if occurrence.item]
        what = row.title + (f", {_joined(items)}" if items else "")
        uid = "+".join(sorted(occurrence.label for occurrence in group)) + "@keeping-time"
        result.append(Line(due, what, "hard" if row.hard else "clock", _answers_for(subject,
                           row.owner), status, uid))
    return sorted(result, key=lambda line: (line.date, line.what))


def _joined(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _answers_for(subject: Subject, owner: str) -> str:
    return {"brand": "the brand", "buyer": subject.owner_name or "the buyer",
            "of_record": "of record"}.get(owner, owner)


def _status(subject: Subject, occurrence: Occurrence) -> str:
    notes = []
    if occurrence.moved_from and occurrence.moved_by == "calendar":
        notes.append(f"postponed from {occurrence.moved_from:%m-%d}")
    elif occurrence.moved_from:
        notes.append(f"extended from {occurrence.moved_from:%m-%d}")
    if occurrence.rolled_from:
        notes.append(f"rolled from {occurrence.rolled_from:%m-%d}")
    if occurrence.status == Occurrence.Status.SATISFIED:
        kept = day_in_zone(occurrence.settled, subject.zone or "UTC")
        head = f"kept {kept}"
    else:
        head = {"open": "open", "lapsed": "lapsed", "closed": "closed with its job"}[
            occurrence.status]
    return " · ".join([head, *notes])


def feed(subject: Subject, *, stamp: datetime) -> bytes:
    entries = [ical.Entry(line.date, line.what, line.uid,
                          f"{line.kind} · answers for it: {line.answers_for} · {line.status}")
               for line in lines(subject)]
    return ical.render(entries, name=f"{subject.name}: dates kept", stamp=stamp)


def feed_path(subject: Subject) -> str:
    return f"/subjects/{subject.pk}/calendar.ics"
