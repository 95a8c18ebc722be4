"""What the calendar moves: an authority's notice (a postponement) moves the open dates it
covers, hard dates included (SPEC S2); a calendar edited re-rolls the open dates on it (SPEC S1).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from datetime import date, datetime

from django.db import transaction

from calendars import rules
from calendars.models import Calendar, Postponement
from timekeeping.basics import instants
from timekeeping.clocks import reopening
from timekeeping.clocks.basis import OrderRefused, calendar_for, now_for
from timekeeping.clocks.following import followed
from timekeeping.clocks.opening import matches
from timekeeping.clocks.rungs import arm, spec_of
from timekeeping.clocks.steps import move_to
from timekeeping.clocks.telling import record_line
from timekeeping.models import Brand, Job, Occurrence, TestClock
from timekeeping.timers import in_progress, records


def postpone(brand: Brand, postponement: Postponement, *, by: str = "") -> list[str]:
    """Move every open occurrence due in the notice's range, on matching subjects, to its
    `to`: hard dates included (SPEC S2). The one thing that moves a hard date. A date that
    lapsed within the range reopens at `to` (`reopening.reopen`: a late notice), its line
    marked `reopened`; a date kept stays kept. `by`: who added the notice."""
    moved = []
    to = _day(postponement.to)
    covered = Occurrence.objects.filter(
        clock__brand=brand, status__in=COVERED,
        clock__test_clock_id=postponement.test_clock or None,
        due__gte=postponement.from_date, due__lte=postponement.through,
    ).select_related("clock", "clock__subject", "clock__job", "clock__brand__owner",
                     "clock__test_clock", "assignee__user").order_by("due", "pk")
    # A date measured from another clock comes after the dates it may follow: one that
    # followed its clock's move meanwhile keeps its distance, and the notice leaves it there.
    for occurrence in sorted(covered, key=lambda each: followed(each) is not None):
        if not matches(occurrence.clock.subject, postponement.where):
            continue
        if occurrence.status == Occurrence.Status.LAPSED:
            line = reopening.reopen(occurrence, postponement, to=to, by=by)
            moved += [line] if line else []
            continue
        if followed(occurrence) is not None and Occurrence.objects.filter(
                pk=occurrence.pk).values_list("due", flat=True).get() != occurrence.due:
            continue
        moved.append(move_to(occurrence, spec_of(occurrence.clock), to,
                              by="calendar", roll=False, notice=postponement.notice))
    return moved


# The dates a notice reaches: open ones move; lapsed ones reopen (a late notice, issue 29).
COVERED = [Occurrence.Status.OPEN, Occurrence.Status.LAPSED]


def _day(value: date | str) -> date:
    """A notice's `to`: a manifest's notice is stored from its text, and read back as it."""
    return date.fromisoformat(value) if isinstance(value, str) else value


# -- the calendar changes: a notice added, the calendar edited --------------------------------

def add_postponement(*, calendar: Calendar, from_date: date, through: date, to: date,
                     where: dict, notice: str, test_clock_id: str = "",
                     by: str = "") -> tuple[Postponement, list[str]]:
    """Add an authority's notice to `calendar` and move the open dates it covers (SPEC S2).
    The API and the admin both add a postponement through it.

    Steps, whole or not at all (one transaction):
    1. refuse with OrderRefused, naming the field and changing nothing: a date outside the
       span kept, `through` before `from`, a `where` that is not an object, no notice, or a
       test clock that is not one of a brand on this calendar;
    2. store the postponement;
    3. for each brand on the calendar (brands may share one), move its open dates in the
       range, on matching subjects, to `to`, and reopen there the dates that lapsed in it
       (`postpone`): on the real clock, or only on the test clock named;
    4. record `calendar.postponed` on each of those brands: the notice, who, what moved.
    """
    test_clock = _check_postponement(calendar, from_date, through, to, where, notice,
                                     test_clock_id)
    brands = [test_clock.brand] if test_clock else list(Brand.objects.filter(calendar=calendar))
    moved: list[str] = []
    with transaction.atomic():
        _lock_jobs(Occurrence.objects.filter(
            clock__brand__in=brands, clock__test_clock_id=test_clock_id or None,
            status__in=COVERED, due__gte=from_date, due__lte=through))
        postponement = Postponement.objects.create(
            calendar=calendar, from_date=from_date, through=through, to=to, where=where,
            notice=notice.strip(), test_clock=test_clock_id)
        for brand in brands:
            in_progress.forget(brand)  # inside a firing: its dates read the calendar again
            lines = postpone(brand, postponement, by=by)
            records.write("calendar.postponed", brand=brand, test_clock=test_clock,
                          instant=now_for(brand, test_clock),
                          data={"postponement": postponement.pk, "from": from_date,
                                "through": through, "to": to, "where": where,
                                "notice": postponement.notice, "by": by, "moved": lines})
            moved += lines
    return postponement, moved


def _check_postponement(calendar: Calendar, from_date: date, through: date, to: date,
                        where: dict, notice: str, test_clock_id: str) -> TestClock | None:
    for name, day in (("from", from_date), ("through", through), ("to", to)):
        if not isinstance(day, date) or isinstance(day, datetime):
            raise OrderRefused(name, f"{day!r} is not a date")
        try:
            instants.check_span(day, field=name)
        except instants.OutOfSpan as error:
            raise OrderRefused(name, str(error).removeprefix(f"{name}: ")) from None
    if through < from_date:
        raise OrderRefused("through", "'through' is on or after 'from'")
    if not isinstance(where, dict):
        raise OrderRefused("where", "'where' is an object of field: value pairs")
    if not isinstance(notice, str) or not notice.strip():
        raise OrderRefused("notice", "cite the notice that moves the dates")
    if len(notice.strip()) > 500:
        raise OrderRefused("notice", "a notice is at most 500 characters")
    if not test_clock_id:
        return None
    found = TestClock.objects.select_related("brand").filter(
        pk=test_clock_id, brand__calendar=calendar).first()
    if found is None:
        raise OrderRefused("test_clock", f"{test_clock_id} is not a test clock of a brand on "
                                         f"the calendar {calendar}")
    return found


def _lock_jobs(open_dates) -> None:
    """Lock the jobs of these dates, in id order, as the gate locks a job while it judges a
    step: a step that keeps or moves one of them waits for this change, or this change for the
    step, instead of one saving over the other."""
    list(Job.objects.select_for_update().filter(pk__in=open_dates.values("clock__job_id"))
         .order_by("pk").values_list("pk", flat=True))


@dataclasses.dataclass
class Rerolled:
    """What a calendar change did to the open dates on it: one line per date moved, one per
    date kept back with why; dates the change leaves where they were are not listed."""

    moved: list[str] = dataclasses.field(default_factory=list)
    kept: list[str] = dataclasses.field(default_factory=list)
    why: Counter = dataclasses.field(default_factory=Counter)

    def keep(self, what: str, why: str) -> None:
        self.kept.append(f"{what}: kept: {why}")
        self.why[why] += 1

    def said(self) -> str:
        dates = "date" if len(self.moved) == 1 else "dates"
        text = f"Re-rolled {len(self.moved)} open {dates}; {len(self.kept)} kept as they are"
        if self.why:
            text += " (" + "; ".join(f"{why}: {n}" for why, n in self.why.items()) + ")"
        return text + "."


def calendar_changed(calendar: Calendar, *, by: str) -> Rerolled:
    """Re-roll the open dates on `calendar` after it changed, or say why one stays (SPEC S1).

    Steps, whole or not at all (one transaction), for every open occurrence of every brand on
    the calendar, on the real clock and on test clocks alike:
    1. lock the jobs of those dates, as the gate does;
    2. keep back a date an authority's notice set (`moved_by` "calendar"), and one whose
       `late_from` has passed on its clock: its lapse is owed, not a new date;
    3. roll its unrolled date (`rolled_from or due`) on the calendar as it is now, read in the
       subject's zone (`calendar_for`);
    4. if the date kept or `late_from` changes: save it (guarded: still open), record
       `clock.moved` (by "calendar change", who) and re-arm its rungs and date, superseding
       the old timers under the same keys.
    """
    done = Rerolled()
    open_dates = Occurrence.objects.filter(clock__brand__calendar=calendar,
                                           status=Occurrence.Status.OPEN)
    nows: dict[tuple[str, str | None], datetime] = {}
    with transaction.atomic():
        _lock_jobs(open_dates)
        for occurrence in open_dates.select_related(
                "clock__brand", "clock__test_clock", "clock__job",
                "clock__subject__brand__calendar").order_by("pk"):
            _reroll(occurrence, by=by, nows=nows, done=done)
    return done


def _reroll(occurrence: Occurrence, *, by: str, nows: dict, done: Rerolled) -> None:
    row = occurrence.clock
    what = " ".join(part for part in (row.subject_id, row.name, occurrence.item,
                                      str(occurrence.due)) if part)
    why = _kept_back(occurrence, nows)
    if why is None:
        cal = calendar_for(row.subject)
        rolled = cal.roll(occurrence.rolled_from or occurrence.due)
        late_from = cal.late_from(rolled.date)
        if (rolled.date, late_from) == (occurrence.due, occurrence.late_from):
            return  # the change leaves it where it was
        before = (occurrence.due, occurrence.late_from)
        if _save_roll(occurrence, rolled, late_from):
            done.moved.append(_rerolled(occurrence, before, what, by))
            return
        why = "it was settled meanwhile"
    done.keep(what, why)


def _kept_back(occurrence: Occurrence, nows: dict) -> str | None:
    """Why a calendar change leaves this open date as it is, or None."""
    row = occurrence.clock
    if occurrence.moved_by == "calendar":
        return "an authority's notice set its date"
    on = (row.brand_id, row.test_clock_id)
    if on not in nows:
        nows[on] = now_for(row.brand, row.test_clock)  # read once per brand clock
    if nows[on] >= occurrence.late_from:
        return "its date has passed"
    return None


def _rerolled(occurrence: Occurrence, before: tuple[date, datetime], what: str, by: str) -> str:
    """Record the re-rolled date and re-arm its rungs and date under their keys."""
    record_line(occurrence, "clock.moved", {
        "by": "calendar change", "who": by, "from": before[0], "to": occurrence.due,
        "rolled_from": occurrence.rolled_from, "why": occurrence.roll_reasons,
        "late_from": occurrence.late_from})
    arm(occurrence, spec_of(occurrence.clock),
        why=f"re-rolled to {occurrence.due} by a calendar change")
    if occurrence.due != before[0]:
        rolled = f", rolled from {occurrence.rolled_from}" if occurrence.rolled_from else ""
        return f"{what} → {occurrence.due}{rolled}"
    return (f"{what}: late from {before[1]:%Y-%m-%d %H:%MZ} → "
            f"{occurrence.late_from:%Y-%m-%d %H:%MZ}")


def _save_roll(occurrence: Occurrence, rolled: rules.Rolled, late_from: datetime) -> bool:
    changes = {"due": rolled.date, "rolled_from": rolled.rolled_from,
               "roll_reasons": rolled.reasons, "late_from": late_from}
    if rolled.date != occurrence.due:
        changes["acknowledged"] = None  # a new date is acknowledged anew
    # A tick lapsing this date at the same moment (it takes no job lock): the guarded UPDATE
    # finds it no longer open, and leaves it as the lapse left it.
    if Occurrence.objects.filter(pk=occurrence.pk, status=Occurrence.Status.OPEN).update(
            **changes) != 1:
        return False
    for name, value in changes.items():
        setattr(occurrence, name, value)
    return True
