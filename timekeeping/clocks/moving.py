"""Moving a date kept, the one way every move does it (a step's `moves`, a notice, a date that
follows its clock): the new day (rolled on the subject's calendar or not), who moved it, a
fresh acknowledgement, its `clock.moved` record, and its rungs and date armed again (the
date's UPDATE riding in the statement that arms them, `basics.riding`).

    relocate(occurrence, spec, day, by=…, roll=…, said=…, why=…) -> (the day before, record)
    moved_line(occurrence, before)                               "US 2028-04-18 → 2028-10-16"
"""

from __future__ import annotations

from datetime import date, datetime

from timekeeping.clocks.basis import calendar_for
from timekeeping.clocks.opening import keep_on
from timekeeping.clocks.rungs import arm
from timekeeping.clocks.telling import record_line
from timekeeping.models import Occurrence
from timekeeping.models.base import saved_riding
from timekeeping.specs.services import ClockSpec

# What a move changes of a date (`keep_on` sets the first four): only these are written.
MOVED = ["due", "rolled_from", "roll_reasons", "late_from", "moved_from", "moved_by",
         "acknowledged"]


def relocate(occurrence: Occurrence, spec: ClockSpec, day: date, *, by: str, roll: bool,
             said: dict, why: str, ahead_of: datetime | None = None):
    """Move the date to `day`, `moved_by` saying `by`; write `clock.moved` with `said` and its
    from, to and roll; arm its rungs again (with `ahead_of`, only those owed after it), the
    timers' reason "moved to <the new date>" followed by `why`."""
    before = occurrence.due
    if roll:
        keep_on(occurrence, day, by=by)
    else:
        occurrence.due, occurrence.rolled_from, occurrence.roll_reasons = day, None, []
        occurrence.late_from = calendar_for(occurrence.clock.subject).late_from(day)
    occurrence.moved_from, occurrence.moved_by = before, by
    occurrence.acknowledged = None  # a new date is acknowledged anew
    # Its UPDATE rides with the statement that arms its rungs again (`basics.riding`: one
    # round trip, not two, each `run` rung of the April wave, issue 32).
    with saved_riding(occurrence, MOVED):
        written = record_line(occurrence, "clock.moved", {
            **said, "from": before, "to": occurrence.due, "rolled_from": occurrence.rolled_from})
        arm(occurrence, spec, why=f"moved to {occurrence.due}{why}", ahead_of=ahead_of)
    return before, written


def moved_line(occurrence: Occurrence, before: date) -> str:
    rolled = f", rolled from {occurrence.rolled_from}" if occurrence.rolled_from else ""
    return f"{occurrence.item or occurrence.clock.name} {before} → {occurrence.due}{rolled}"
