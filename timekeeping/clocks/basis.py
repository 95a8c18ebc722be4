"""What the rest of the clocks stand on: the refusals an order or a person's action meets
(an erased subject's among them), the calendar and clock a subject's dates are read on, and
the brand's manifest versions a batch reads once.
"""

from __future__ import annotations

from functools import lru_cache

from calendars import rules
from timekeeping.basics import shown
from timekeeping.models import Manifest, Subject
from timekeeping.timers import firing, in_progress


class PeriodTaken(Exception):
    """A subject already holds a job of this Service for this period (SPEC S17)."""


class OrderRefused(Exception):
    """An order refused, naming the field and the rule. `code` names the rule for the record
    (`plan_lacks_key`; else `order_refused`), `said` says it in an owner's words when the
    message is the engine's (a mint refused on its schedule tells the owner, S23)."""

    def __init__(self, field: str, message: str, *, code: str = "order_refused",
                 said: str = ""):
        super().__init__(f"{field}: {message}")
        self.field, self.message, self.code, self.said = field, message, code, said


def bundles_of(brand_id: str) -> frozenset[str]:
    """The bundles of every version of the brand's manifest, read once a firing batch or an
    order (`in_progress.read_once`): every job and every date is of one of them."""
    return in_progress.read_once(brand_id, "manifest bundles", lambda: frozenset(
        Manifest.objects.filter(brand_id=brand_id).values_list("bundle", flat=True)))


def refuse_erased(subject: Subject) -> None:
    """Nothing new is done for an erased subject (`timekeeping.subjects.erasing`): no job,
    plan, event, invitation or calendar link. Refused naming `subject`."""
    if subject.erased is not None:
        raise OrderRefused(
            "subject", f"{subject.pk} was erased on {subject.erased:%Y-%m-%d}: its personal "
                       "data is gone and nothing new is done for it", code="subject_erased",
            said=f"its personal data was erased on {shown.day(subject.erased)}, so nothing new "
                 "is done for it")


def lock_unerased(subject: Subject) -> None:
    """Inside the caller's transaction, hold `subject` against an erasure until it commits,
    and refuse when one came first. The race: an erasure ends the subject's open work under
    the subject's lock (FOR UPDATE); an order or an invitation that read the subject before
    that committed would add work to it once erased. FOR NO KEY UPDATE waits for the erasure's
    lock (and it for this one), so either this comes first and the erasure ends what it made,
    or it reads the erasure and is refused. A firing batch that locked its mints' subjects
    at once (`lock_subjects`) answers from that lock, once per subject."""
    batch = in_progress.current()
    locked = batch.take_read(UNERASED, subject.pk) if batch is not None else None
    if locked is not None:
        (subject.erased,) = locked
    else:
        subject.erased = Subject.objects.select_for_update(no_key=True).filter(
            pk=subject.pk).values_list("erased", flat=True).first()
    refuse_erased(subject)


UNERASED = "subject locked"  # what a batch read of a subject under its lock (`lock_unerased`)


def lock_subjects(subject_ids: set[str], batch: firing.Firing) -> None:
    """Lock a firing batch's subjects against an erasure at once, in the order of their ids,
    as `lock_unerased` locks one; each one's lock is kept on the batch for the first order of
    it (`lock_unerased`)."""
    for pk, erased in Subject.objects.select_for_update(no_key=True).filter(
            pk__in=sorted(subject_ids)).order_by("pk").values_list("pk", "erased"):
        batch.keep_read(UNERASED, pk, (erased,), job=pk)


def calendar_for(subject: Subject) -> rules.Calendar:
    """The brand's calendar, read in the subject's zone: a due closes in the subject's zone."""
    base = _brand_calendar(subject)
    if not subject.zone or subject.zone == base.zone:
        return base
    return _in_zone(base, subject.zone)


def _brand_calendar(subject: Subject) -> rules.Calendar:
    """The brand's calendar: read once per firing batch of the subject's brand (issue 32: a
    fired timer asked for it several times, two statements each), else read now. A batch is
    one transaction, so the calendar it reads first is the one its timers fire on, as the
    batch's webhook endpoints are (`timekeeping.webhooks.publish._enabled`)."""
    return in_progress.read_once(subject.brand_id, "brand_calendar",
                                 lambda: subject.brand.calendar_rules())


@lru_cache(maxsize=256)
def _in_zone(base: rules.Calendar, zone: str) -> rules.Calendar:
    # One value per calendar (`calendar_rules` answers one per distinct calendar) and zone, so
    # each year's closed days are built once, not once a call.
    return rules.Calendar(zone=zone, weekends=base.weekends, holidays=base.holidays,
                          closed=base.closed, closes=base.closes, rings_at=base.rings_at,
                          roll=base.roll_rule)


now_for = firing.now_for
