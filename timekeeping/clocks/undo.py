"""Undo (issue 27): a person's mark done, acknowledgement, choice or assignment on a date can
be undone for UNDO_WINDOW, measured on the date's own clock (a test clock's date on its world's
time), from the pages and the API alike. The original entry stays on the record; the undo is
its own entry (`clock.undone`) naming the entry it undoes and who undid it.

    offer(entry)                   what a page or the API says after an action: which entry to
                                   undo, and until when (None when it cannot be undone)
    undo(brand, record_id, by=…)   undo it, or raise UndoRefused with a code and plain words

`undo`'s steps, whole or not at all (one transaction):
1. find the entry on the brand (Record.DoesNotExist otherwise: the caller answers 404);
2. hold the date's job, as the gate does: a step of the job, another click, waits;
3. refuse (`UndoRefused`) an entry that is not an undoable action (`undo_not_undoable`), one
   done by someone else when only the doer may undo it (`undo_not_yours`), one undone already
   (`undo_already`), one older than the window (`undo_expired`), one whose date changed since
   (`undo_superseded`), and a choice whose step set more in motion than keeping dates
   (`undo_set_in_motion`);
4. restore exactly what the action changed (see the RESTORES);
5. write the `clock.undone` entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction

from timekeeping.basics import wallclock
from timekeeping.clocks import opening, rungs
from timekeeping.models import Brand, Job, Member, Occurrence, Record, Timer
from timekeeping.timers import arming, records

UNDO_WINDOW = timedelta(minutes=15)
UNDO_WINDOW_WORDS = "15 minutes"
KIND = "clock.undone"
UNDOABLE = ("clock.satisfied", "clock.acknowledged", "clock.chosen", "clock.assigned")


class UndoRefused(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code, self.message = code, message


@dataclass(frozen=True)
class Offer:
    """An action's undo, as pages and the API name it."""

    record: str
    until: datetime


def undoable(entry: Record) -> bool:
    """An action a person took on a date: a date kept by a step is not (its step is)."""
    data = entry.data if isinstance(entry.data, dict) else {}
    if entry.kind not in UNDOABLE or "occurrence" not in data:
        return False
    if entry.kind == "clock.chosen":
        return bool(data.get("committed"))  # a refused choice changed nothing
    return entry.kind != "clock.satisfied" or bool(data.get("who"))


def offer(entry: Record | None) -> Offer | None:
    """The undo a page offers after an action: none when the action cannot be undone, nor
    when what it set in motion could not be taken back (`undo` would refuse it)."""
    if entry is None or not undoable(entry) or _set_in_motion(entry):
        return None
    return Offer(entry.pk, entry.instant + UNDO_WINDOW)


def _set_in_motion(entry: Record) -> bool:
    """A choice whose step went further, or a date kept that other dates are measured from."""
    if entry.kind == "clock.chosen":
        return bool(entry.data.get("in_motion"))
    if entry.kind != "clock.satisfied":
        return False
    kept = Occurrence.objects.select_related("clock__job").filter(
        pk=entry.data["occurrence"]).first()
    return kept is not None and bool(opening.measured_from_it(kept))


def doer(entry: Record) -> str:
    """Who took the action, as records name people."""
    return entry.data.get("who") or entry.data.get("by") or ""


def undo(brand: Brand, record_id: str, *, by: str, now: datetime | None = None,
         only_by: str | None = None) -> Record:
    """Undo one entry (the module's steps). With `only_by`, only that person's own entry."""
    with transaction.atomic():
        entry = Record.objects.select_related("test_clock").get(brand=brand, pk=record_id)
        if not undoable(entry):
            raise UndoRefused("undo_not_undoable", "only marking a date done, acknowledging "
                              "it, choosing for it or assigning it can be undone")
        occurrence = _held(entry)
        now = now or wallclock.now(brand=brand, test_clock=entry.test_clock)
        _check(entry, occurrence, now=now, only_by=only_by)
        RESTORES[entry.kind](entry, occurrence)
        row = occurrence.clock
        return records.write(KIND, brand=brand, instant=now, test_clock=entry.test_clock,
                             subject=entry.subject, job=entry.job,
                             data={"clock": row.pk, "name": row.name, "item": occurrence.item,
                                   "occurrence": occurrence.pk, "undoes": entry.pk,
                                   "undid": entry.kind, "by": by})


def _held(entry: Record) -> Occurrence:
    """The entry's date, read after its job is held (what another request did is seen)."""
    occurrence = Occurrence.objects.filter(pk=entry.data["occurrence"]).first()
    if occurrence is None:
        raise UndoRefused("undo_superseded", "the date is no longer kept")
    list(Job.objects.select_for_update().filter(pk=occurrence.clock.job_id).values_list("pk"))
    return Occurrence.objects.select_related(
        "clock", "clock__job", "clock__subject", "clock__brand", "clock__test_clock").get(
        pk=occurrence.pk)


def _check(entry: Record, occurrence: Occurrence, *, now: datetime,
           only_by: str | None) -> None:
    if only_by is not None and doer(entry) != only_by:
        raise UndoRefused("undo_not_yours", "only the person who did it can undo it here")
    if Record.objects.filter(brand_id=entry.brand_id, kind=KIND,
                             data__undoes=entry.pk).exists():
        raise UndoRefused("undo_already", "it was undone already; an action is undone once")
    if now > entry.instant + UNDO_WINDOW:
        raise UndoRefused("undo_expired", f"an action can be undone for {UNDO_WINDOW_WORDS}, "
                          "and that time has passed")
    if not STILL[entry.kind](entry, occurrence):
        raise UndoRefused("undo_superseded", "the date changed since: undoing this would "
                          "undo that change too")


# -- whether the date is still as the action left it ----------------------------------------

def _still_kept(entry: Record, occurrence: Occurrence) -> bool:
    return (occurrence.status == Occurrence.Status.SATISFIED
            and occurrence.settled_by == entry.data.get("by"))


def _still_acknowledged(entry: Record, occurrence: Occurrence) -> bool:
    return occurrence.acknowledged == entry.instant


def _still_assigned(entry: Record, occurrence: Occurrence) -> bool:
    return occurrence.assignee_id == entry.data.get("member")


def _still_chosen(entry: Record, occurrence: Occurrence) -> bool:
    step = entry.data.get("choice")
    kept = [each["occurrence"] for each in entry.data.get("kept") or []]
    return Occurrence.objects.filter(pk__in=kept, status=Occurrence.Status.SATISFIED,
                                     settled_by=step).count() == len(kept)


STILL = {"clock.satisfied": _still_kept, "clock.acknowledged": _still_acknowledged,
         "clock.assigned": _still_assigned, "clock.chosen": _still_chosen}


# -- putting back what the action changed ---------------------------------------------------

def _unsatisfy(entry: Record, occurrence: Occurrence) -> None:
    reopen(occurrence, entry.data["was"])


def _unacknowledge(entry: Record, occurrence: Occurrence) -> None:
    occurrence.acknowledged = _instant(entry.data.get("was"))
    occurrence.save(update_fields=["acknowledged"])


def _unassign(entry: Record, occurrence: Occurrence) -> None:
    was = entry.data.get("was")
    if was and not Member.objects.filter(pk=was, brand_id=entry.brand_id).exists():
        raise UndoRefused("undo_superseded", "the person it was assigned to before is no "
                          "longer one of the brand's people")
    occurrence.assignee_id = was or None
    occurrence.save(update_fields=["assignee"])


def _unchoose(entry: Record, occurrence: Occurrence) -> None:
    """A choice: the dates its step kept open again, and the step no longer done (when it
    was not before). A step that went further (moved dates, opened or settled the job's work,
    went on to another step) is refused: that cannot be taken back exactly."""
    step = entry.data.get("choice", "")
    in_motion = entry.data.get("in_motion") or []
    if in_motion:
        raise UndoRefused("undo_set_in_motion", f"choosing '{step}' {' and '.join(in_motion)}"
                          "; that cannot be taken back exactly")
    for each in entry.data.get("kept") or []:
        reopen(Occurrence.objects.select_related("clock", "clock__job", "clock__subject",
                                                 "clock__brand", "clock__test_clock").get(
            pk=each["occurrence"]), each["was"])
    if entry.data.get("committed") and not entry.data.get("step_was_done"):
        job = Job.objects.get(pk=occurrence.clock.job_id)
        Job.objects.filter(pk=job.pk).update(
            steps_done=[done for done in job.steps_done if done != step])


RESTORES = {"clock.satisfied": _unsatisfy, "clock.acknowledged": _unacknowledge,
            "clock.assigned": _unassign, "clock.chosen": _unchoose}


def reopen(occurrence: Occurrence, was: dict) -> None:
    """A kept date as it was before: its status and settling back, its next coming (opened
    when it was kept) withdrawn, its reminders and its date armed again under their keys (one
    already sent stays sent; one whose time came meanwhile goes out at the next tick)."""
    spec = rungs.spec_of(occurrence.clock)
    if opening.measured_from_it(occurrence):
        raise UndoRefused("undo_set_in_motion", "other dates were measured from when it was "
                          "done; that cannot be taken back exactly")
    if spec.every:
        _withdraw_next(occurrence)
    occurrence.status = was["status"]
    occurrence.settled, occurrence.settled_by = _instant(was["settled"]), was["settled_by"]
    occurrence.save(update_fields=["status", "settled", "settled_by"])
    rungs.arm(occurrence, spec, why="undone")


def _withdraw_next(occurrence: Occurrence) -> None:
    """The next coming of a recurring date, opened when this one was kept: withdrawn, unless
    something happened on it (then the undo is refused)."""
    following = Occurrence.objects.filter(clock_id=occurrence.clock_id, item=occurrence.item,
                                          seq=occurrence.seq + 1).first()
    if following is None:
        return
    row = occurrence.clock
    ours = arming.clock_timers(row.brand, row.test_clock).filter(owner_id=following.label)
    if (following.status != Occurrence.Status.OPEN or following.acknowledged is not None
            or following.assignee_id is not None
            or ours.filter(state=Timer.State.FIRED).exists()):
        raise UndoRefused("undo_superseded", "its next date has begun (a reminder for it "
                          "went out, or someone acted on it)")
    rungs.end_timers(following, "undone: the date before it is open again")
    following.delete()


def _instant(value) -> datetime | None:
    """An instant as a record keeps it (ISO text), or None."""
    if value in (None, ""):
        return None
    return value if isinstance(value, datetime) else datetime.fromisoformat(value)
