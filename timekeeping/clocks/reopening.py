"""A late notice (SPEC S2, issue 29): relief comes after the fact, so an authority's
postponement reaches a date that already lapsed within its range. The lapse is withdrawn on
the record, the date reopens at the notice's `to`, its rungs still ahead arm again (those whose
day has passed are not sent again), and the customer and the brand's side are told.

    reopen(occurrence, postponement, by=…)  -> the line `postpone` answers, or None
    withdrawn_lapses(brand)                 the `clock.lapsed` records a notice withdrew
                                            (a subquery of their ids)

What the lapse raised is read from the date's status (dates at risk, what a miss costs, the
roster's "missed"), so it goes with the reopening; the lapse's attention item leaves the list
by `withdrawn_lapses`. Nothing the lapse did is erased: its record, and its email, stay history.
"""

from __future__ import annotations

from datetime import date, datetime

from django.db.models.fields.json import KT

from calendars.models import Postponement
from timekeeping.clocks import emails
from timekeeping.clocks.basis import calendar_for, now_for
from timekeeping.clocks.rungs import spec_of
from timekeeping.clocks.steps import move_to
from timekeeping.clocks.telling import record_line, tell_both
from timekeeping.models import Brand, Job, Occurrence, Record

WITHDRAWN = "clock.lapse_withdrawn"
REOPENED = " · reopened"  # how `postpone`'s lines mark a missed date a notice reopened


def reopen(occurrence: Occurrence, postponement: Postponement, *, to: date,
           by: str) -> str | None:
    """Reopen a lapsed date a late notice covers, moving it to `to` (the notice's, unrolled,
    as every postponement sets it). None when the lapse stands.

    Steps:
    1. leave the lapse standing when the date's job has ended (unless the clock lives on the
       subject), or when `to` is itself already late on the date's clock: the notice gives no
       time left to keep it;
    2. withdraw the lapse: a guarded UPDATE from lapsed to open (a step keeping it late
       meanwhile wins, and the lapse stands), and `clock.lapse_withdrawn` citing the notice,
       who added it and the lapse record;
    3. move it to `to` as any postponement does (`clock.moved` by "calendar", with the
       notice), arming only the rungs owed after now;
    4. tell the customer and the brand's side that it counts again, and by when.
    """
    row = occurrence.clock
    now = now_for(row.brand, row.test_clock)
    if not _may_reopen(occurrence, to, now):
        return None
    missed = occurrence.due
    # A step keeping the date late, or its owner marking it done, at this moment: the guarded
    # UPDATE finds it no longer lapsed, and it stays as they left it.
    if Occurrence.objects.filter(pk=occurrence.pk, status=Occurrence.Status.LAPSED).update(
            status=Occurrence.Status.OPEN, settled=None, settled_by="") != 1:
        return None
    occurrence.status, occurrence.settled, occurrence.settled_by = \
        Occurrence.Status.OPEN, None, ""
    record_line(occurrence, WITHDRAWN, {
        "by": "calendar", "who": by, "notice": postponement.notice,
        "postponement": postponement.pk, "lapse": _lapse_of(occurrence), "due": missed,
        "to": to}, at=now)
    line = move_to(occurrence, spec_of(row), to, by="calendar", roll=False,
                   notice=postponement.notice, ahead_of=now)
    tell_both(occurrence, lambda customer: emails.reopened(
        occurrence, missed, postponement.notice, customer=customer), key="reopened")
    return line + REOPENED


def _may_reopen(occurrence: Occurrence, to: date, now: datetime) -> bool:
    row = occurrence.clock
    if row.job.state != Job.State.OPEN and not row.lives_on_subject:
        return False
    return calendar_for(row.subject).late_from(to) > now


def _lapse_of(occurrence: Occurrence) -> str:
    """The id of the `clock.lapsed` record of this date (the latest, for its date kept)."""
    row = occurrence.clock
    found = Record.objects.filter(
        brand_id=row.brand_id, test_clock_id=row.test_clock_id, job=row.job_id,
        kind="clock.lapsed", data__clock=row.id, data__item=occurrence.item,
    ).order_by("-instant", "-id").values_list("id", flat=True).first()
    return found or ""


def withdrawn_lapses(brand: Brand):
    """The ids of the brand's `clock.lapsed` records a late notice withdrew: a subquery, so a
    list of lapses leaves them out in the same query."""
    return Record.objects.filter(brand=brand, kind=WITHDRAWN).annotate(
        lapse=KT("data__lapse")).values("lapse")
