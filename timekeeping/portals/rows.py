"""A customer's dates as the portal shows them (S25): each open date of `dates.coming_up`, with
its times in the subject's zone (the zone named) and whether the customer may act on it.

    coming_up(subjects)   the rows of these subjects, late and lapsed first, then soonest
    row_of(occurrence)    one date's row as it stands now, or None once it left the list

The zones come from the subjects the caller already holds, so a page of rows costs the
queries of `dates.coming_up` and no more, however many subjects there are.
"""

from __future__ import annotations

from dataclasses import dataclass

from timekeeping.basics import shown
from timekeeping.clocks import dates, subject_calendar
from timekeeping.models import Occurrence, Subject


@dataclass
class Row:
    line: dates.DateLine
    zone: str  # the subject's zone: its dates are judged and shown in it

    @property
    def occurrence(self) -> Occurrence:
        return self.line.occurrence

    @property
    def yours(self) -> bool:
        """The customer answers for it (the clock's owner is the buyer): they may act on it."""
        return self.line.clock.owner == "buyer"

    @property
    def late_from(self) -> str:
        return shown.moment(self.occurrence.late_from, self.zone)

    @property
    def acknowledged(self) -> str:
        at = self.occurrence.acknowledged
        return shown.moment(at, self.zone) if at else ""


def coming_up(subjects: list[Subject], *, reading: str | None = None) -> list[Row]:
    """The subjects' rows, each shown in its subject's zone, or all in `reading` (the zone
    the person chose to read times in)."""
    zones = {subject.pk: subject_calendar.zone_of_subject(subject) for subject in subjects}
    return [Row(line, reading or zones[line.clock.subject_id])
            for line in dates.coming_up(subjects)]


def row_of(occurrence: Occurrence) -> Row | None:
    for row in coming_up([occurrence.clock.subject]):
        if row.occurrence.pk == occurrence.pk:
            return row
    return None
