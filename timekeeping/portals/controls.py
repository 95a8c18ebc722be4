"""What a customer does to a date of their own (S25): acknowledge it, mark it done, or make
one of its choices. Each calls the same function as the API (`clocks.acknowledge`,
`clocks.mark_done`, `clocks.choose`, which proposes its step to the gate) and says what
happened in a sentence; a refusal is said in words, never raised as an error page.

Each runs in one transaction holding the date's job, as the gate holds it while it judges a
step: a step of the same job (a rung's `run`, another click) waits for this one, and the date
is read afresh once the job is held, so two clicks at once mark it done once.

Each that changed the date offers its Undo (`Said.undo`, issue 27); `undone` undoes one for a
customer's or member's page, in the console's words.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.urls import reverse

from timekeeping import clocks
from timekeeping.clocks import undo
from timekeeping.console import controls as console
from timekeeping.models import Brand, Job, Occurrence, Record

REFUSALS = {  # the gate's codes, in words (docs/clocks.md, the gate)
    "job_closed": "its job is closed",
    "step_unknown": "it is not a step of this service",
    "item_unknown": "it is not one of the job's items",
    "date_passed": "a hard date that bars it has passed",
}


@dataclass(frozen=True)
class Said:
    ok: bool
    text: str
    undo: undo.Offer | None = None  # the Undo a page offers after it (issue 27)


def acknowledge(occurrence: Occurrence, *, by: str) -> Said:
    with transaction.atomic():
        _hold(occurrence)
        entry = clocks.acknowledge(occurrence, by=by)
    if entry is None:
        return Said(True, f"Already acknowledged: {_what(occurrence)}.")
    return Said(True, f"Acknowledged: {_what(occurrence)}.", undo.offer(entry))


def mark_done(occurrence: Occurrence, *, by: str) -> Said:
    with transaction.atomic():
        _hold(occurrence)
        try:
            entry = clocks.mark_done(occurrence, by=by)
        except clocks.OrderRefused as refused:
            return Said(False, f"Not marked done: {refused.message}.")
    return Said(True, f"Marked done: {_what(occurrence)}.", undo.offer(entry))


def choose(occurrence: Occurrence, choice: str, *, by: str) -> Said:
    with transaction.atomic():
        _hold(occurrence)
        try:
            outcome = clocks.choose(occurrence, choice, by=by)
        except clocks.OrderRefused as refused:
            return Said(False, f"Nothing chosen: {refused.message}.")
    if not outcome.committed:
        words = REFUSALS.get(outcome.code, outcome.code)
        return Said(False, f"'{choice}' was refused: {words} ({outcome.reason}).")
    return Said(True, f"'{choice}' was taken for {_what(occurrence)}.",
                undo.offer(Record.objects.filter(pk=outcome.record).first()))


def undone(request, brand: Brand, entry: Record, *, by: str) -> Said:
    """Undo the person's own `entry` (`only_by`: another's is refused in words), a second post
    of the same Undo told it was done already: the console's words (`console.undone`)."""
    said = console.undone(request, brand, entry, only_by=by)
    return Said(said.ok, said.text)


def offer(request, said: Said, undo_view: str) -> None:
    """Without JavaScript an action's Undo rides to the next page (`console.offer_undo`),
    posting to the area's `undo_view`."""
    if said.undo is not None:
        console.offer_undo(request, said.undo, reverse(undo_view, args=[said.undo.record]))


def undo_context(request, said: Said | None, undo_view: str, back: str) -> dict:
    """What a row re-rendered in place needs to show its Undo (`_undo_row.html`)."""
    offered = said.undo if said is not None else None
    return {"window": undo.UNDO_WINDOW_WORDS, "next": back,
            "undo_action": reverse(undo_view, args=[offered.record]) if offered else ""}


def _hold(occurrence: Occurrence) -> None:
    """Lock the date's job (the gate's lock, taken first as the gate takes it), then read the
    date again: what another request settled meanwhile is seen."""
    list(Job.objects.select_for_update().filter(pk=occurrence.clock.job_id).values_list("pk"))
    occurrence.refresh_from_db(fields=["status", "settled", "settled_by", "acknowledged", "due",
                                       "late_from"])


def _what(occurrence: Occurrence) -> str:
    return occurrence.clock.title + (f", {occurrence.item}" if occurrence.item else "")
