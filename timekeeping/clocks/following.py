"""Dates measured from another clock follow it (S12): a clock whose due rule is
`{"clock": "file", "days": -3}` keeps its distance when `file` moves, by a step's `moves`,
by an authority's notice, or by following a clock of its own.

    follow(moved, cause)      the open dates of the job measured from `moved`'s clock, moved
                              with it; answers what moved, as the step's outcome says it
    followed(occurrence)      the clock a date's rule measures it from, or None
    FOLLOWS                   how such a move is said: `moved_by` "follows file"

A date already kept (or lapsed, or closed with its job) stays as it is. A followed date is
rolled on the subject's calendar like any date its rule gives; its rungs still ahead are armed
again for the new date (one whose instant has passed is not sent again), and its date too.
"""

from __future__ import annotations

from timekeeping.clocks import dues
from timekeeping.clocks.basis import now_for
from timekeeping.clocks.moving import moved_line, relocate
from timekeeping.clocks.opening import due_by_rule
from timekeeping.clocks.rungs import spec_of
from timekeeping.models import Occurrence
from timekeeping.specs.current import services_of

FOLLOWS = "follows "  # `moved_by` of a date that followed its clock: "follows file"
DEPTH = 8  # a chain of dates each measured from the one before, at most this long


def followed(occurrence: Occurrence) -> str | None:
    """The clock of the job this date's rule is measured from (`{"clock": …}`), or None."""
    row = occurrence.clock
    rule = dues.rule_for_item(spec_of(row).due, occurrence.item, row.job.period)
    name = rule.get("clock")
    return name if isinstance(name, str) else None


def follows(moved_by: str) -> str | None:
    """The clock a date followed, when following moved it last."""
    return moved_by.removeprefix(FOLLOWS) if moved_by.startswith(FOLLOWS) else None


def follow(moved: Occurrence, cause: dict, *, depth: int = 0) -> list[str]:
    """Move the open dates of `moved`'s job measured from its clock to where their rules now
    give, each with a `clock.moved` record (by "follows") citing the move: `cause` is that
    move's own record data (by, from, to, and its notice or record when it has one)."""
    row = moved.clock
    service = services_of(row.bundle)[row.job.service]
    names = [spec.name for spec in service.clocks.values() if spec.name != row.name
             and _names(spec.due, row.name)]
    if not names or depth >= DEPTH:
        return []
    lines = []
    for other in Occurrence.objects.filter(
            brand_id=row.brand_id, clock__job_id=row.job_id, clock__name__in=names,
            status=Occurrence.Status.OPEN).select_related("clock").order_by("due", "pk"):
        if followed(other) != row.name:
            continue
        spec = spec_of(other.clock)
        day = due_by_rule(other.clock, spec, spec.due, other.item, other.seq)
        if day is None or day in (other.due, other.rolled_from):
            continue
        lines.append(_shift(other, spec, day, moved, cause, depth))
    return lines


def _names(rule: dict, name: str) -> bool:
    """Whether a due rule (or one of its items' or quarters' rules) is measured from `name`."""
    return any(each.get("clock") == name for each in (
        rule, *(rule.get("items") or {}).values(), *(rule.get("quarters") or {}).values()))


def _shift(occurrence: Occurrence, spec, day, moved: Occurrence, cause: dict,
           depth: int) -> str:
    row = moved.clock
    said = {"by": "follows", "follows": row.id, "follows_name": row.name,
            "follows_item": moved.item, "cause": cause}
    here = now_for(occurrence.clock.brand, occurrence.clock.test_clock)
    before, written = relocate(occurrence, spec, day, by=FOLLOWS + row.name, roll=True,
                               said=said, why=f": follows {row.name}",
                               ahead_of=here)
    line = f"{moved_line(occurrence, before)} (follows {row.name})"
    onward = cause_of(occurrence, "follows", before, written)
    return "; ".join([line, *follow(occurrence, onward, depth=depth + 1)])


def cause_of(occurrence: Occurrence, by: str, before, written, notice: str = "") -> dict:
    """A move as the dates that follow it cite it: which date, by what, from and to, its
    notice, and its record when it is written already (inside a tick it joins the batch)."""
    cause = {"clock": occurrence.clock_id, "name": occurrence.clock.name,
             "item": occurrence.item, "by": by, "from": before, "to": occurrence.due}
    if notice:
        cause["notice"] = notice
    if written is not None:
        cause["record"] = written.pk
    return cause
