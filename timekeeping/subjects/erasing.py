"""Erasing a subject (issue 31): its personal data goes, its anonymous record stays.

    erase(subject, by=…)   what was done (Erased); SubjectErased when it was erased already

The one operation behind every door (the console's subject page, `POST
/api/subjects/{id}/erase`, `manage.py subjects erase`). Whole or not at all, in one
transaction:

1. Lock what an erasure races with, in the order the tick and the doors take them: its live
   plans (a renewal or a mint holds its plan, then the subject), its open jobs (a step holds
   its job, then the subject, to keep facts on it), then the subject. Refuse one erased already.
2. Gather its personal data before anything changes (`scrubbing.Needles`): its name, key and
   owner's name, its contact address, the addresses it was invited and asked at, its
   customers' names and addresses; and the ids of what it owns (`Owned`).
3. End its live work as ending does elsewhere, so no timer fires for it and no email goes to
   it: its plans end at once (`plans.end_now`); its dates still open or missed close with
   their reminders (before its jobs end, so none passes to a keeper); its open jobs are
   cancelled (`clocks.end_job`: their asks, tasks, deadlines, grants and charges' holds end
   with them); every live timer left of its jobs, dates and plans, and a scheduled order for
   it (`jobs.order`), is cancelled.
4. Its people: its invitations are deleted, its customers' links to it removed; a customer
   account left with no subject is deleted, and the person's sign-in with it when it serves
   nothing else (no other customer account, no membership, no brand, no staff).
5. Its rows: the subject keeps its id, kind, zone and world; it is named "Erased subject", its
   key becomes its id, its facts, contact and owner's name are emptied, its feed gets a new
   secret (the feed answers 404) and `erased` is set. Its jobs' facts and a scheduled order's
   are emptied; its asks' party and address and its dates' "by" text lose the personal data.
6. The outbox: an email about it never delivered (its key names what it owns, or it goes to
   one of its addresses; waiting or failed) is dropped; every other email of the brand that
   names it (a sent one, a digest) keeps no personal data.
7. Its records lose their personal data (`scrubbing.records`: the one exception to
   append-only), with the copies they left: webhook attempts' answers, the demo receiver's
   bodies, its walks' trace lines, its timers' payloads and errors.
8. `subject.erased` goes on the record (an event): who, and how many of each, never the data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Exists, OuterRef, Q

from timekeeping import clocks
from timekeeping.basics import shown, wallclock
from timekeeping.models import (
    Ask,
    Customer,
    CustomerSubject,
    Invitation,
    Job,
    Occurrence,
    Subject,
    Subscription,
    Timer,
)
from timekeeping.models.service import new_feed_token
from timekeeping.recurring import plans
from timekeeping.subjects import leftovers, scrubbing
from timekeeping.subjects.owned import Owned
from timekeeping.timers import arming, in_progress, records

NAME = "Erased subject"  # what the pages call it afterwards
WHY = "its subject's personal data was erased"
LIVE = [Timer.State.ARMED, Timer.State.HELD]


class SubjectErased(Exception):
    """The subject was erased already: there is nothing left to erase."""

    def __init__(self, subject: Subject):
        super().__init__(f"{subject.pk} was erased on {subject.erased:%Y-%m-%d}: there is "
                         "nothing left to erase")
        self.subject = subject
        self.said = (f"it was erased on {shown.day(subject.erased)} already, so there is "
                     "nothing left to erase.")


@dataclass(frozen=True)
class Erased:
    """What an erasure did, counted (the `subject.erased` record keeps the same)."""

    subject: Subject
    at: datetime
    jobs: int = 0  # open jobs cancelled
    plans: int = 0  # live plans ended
    dates: int = 0  # open or missed dates closed
    timers: int = 0  # live timers ended
    invitations: int = 0  # invitations deleted
    customers: int = 0  # customers' links to it removed
    accounts: int = 0  # customer accounts deleted, with no subject left
    emails: int = 0  # unsent emails dropped
    records: int = 0  # records rewritten without personal data

    def counts(self) -> dict[str, int]:
        return {key: value for key, value in asdict(self).items()
                if key not in ("subject", "at")}


def erase(subject: Subject, *, by: str) -> Erased:
    """Erase `subject`'s personal data and end its work, keeping its anonymous record (the
    module's steps). `by`: who asked, as records name them."""
    with transaction.atomic():
        subject = _locked(subject)
        in_progress.forget(subject.brand)  # inside a firing: nothing read of it stands
        needles, owned = scrubbing.Needles.of(subject), Owned.of(subject)
        at = wallclock.wall_now()
        done = {**_end_work(subject, owned, by=by), **_people(subject)}
        _rows(subject, needles, at)
        done["emails"] = leftovers.outbox(subject, owned, needles)
        done["records"] = leftovers.history(subject, owned, needles)
        erased = Erased(subject, at, **done)
        records.write("subject.erased", brand=subject.brand,
                      instant=clocks.now_for(subject.brand, subject.test_clock),
                      test_clock=subject.test_clock, subject=subject.pk,
                      data={"by": by, **erased.counts()})
    subject.refresh_from_db()
    return erased


def _locked(subject: Subject) -> Subject:
    """The subject, locked after its live plans and open jobs (step 1), fresh from the
    database; SubjectErased when it was erased already."""
    mine = {"brand_id": subject.brand_id, "subject_id": subject.pk}
    list(Subscription.objects.select_for_update().filter(
        **mine, state=Subscription.State.ACTIVE).values_list("pk", flat=True))
    list(Job.objects.select_for_update().filter(**mine, state=Job.State.OPEN).values_list(
        "pk", flat=True))
    found = Subject.objects.select_for_update(of=("self",)).select_related(
        "brand__owner", "test_clock").get(pk=subject.pk)
    if found.erased is not None:
        raise SubjectErased(found)
    return found


def _end_work(subject: Subject, owned: Owned, *, by: str) -> dict[str, int]:
    """Step 3: nothing of the subject's fires or is sent afterwards."""
    timers = len(owned.timer_ids(subject.brand_id, LIVE))
    ended = sum(plans.end_now(each, by=by, why=WHY) for each in Subscription.objects.filter(
        brand_id=subject.brand_id, subject=subject, state=Subscription.State.ACTIVE))
    # Its dates close before its jobs end: a date that lives on the subject would otherwise
    # pass to its owner or steward as its job ends (`clocks.stewards`), only to close.
    dates, jobs = _close_dates(subject), 0
    for job in Job.objects.filter(brand_id=subject.brand_id, subject=subject,
                                  state=Job.State.OPEN).select_related("brand__owner",
                                                                       "subject", "test_clock"):
        clocks.end_job(job, state=Job.State.CANCELLED, by=by, data={"why": WHY})
        jobs += 1
    for timer_id in owned.timer_ids(subject.brand_id, LIVE):  # what ending left: an outcome's
        arming.end(timer_id, state=Timer.State.CANCELLED, by=WHY)  # due, a scheduled order
    return {"plans": ended, "jobs": jobs, "dates": dates, "timers": timers}


def _close_dates(subject: Subject) -> int:
    """Its dates still open or missed (a date that lives on the subject outlives its job)
    close, with their reminders."""
    found = list(Occurrence.objects.filter(
        brand_id=subject.brand_id, clock__subject=subject,
        status__in=[Occurrence.Status.OPEN, Occurrence.Status.LAPSED]).select_related(
        "clock__brand", "clock__test_clock"))
    for occurrence in found:
        clocks.end_timers(occurrence, WHY)
    return Occurrence.objects.filter(pk__in=[each.pk for each in found]).update(
        status=Occurrence.Status.CLOSED)


def _people(subject: Subject) -> dict[str, int]:
    """Step 4. The invitations go first: an acceptance at the same moment holds its
    invitation's row, so the delete waits for it, and the link it made is then seen and
    removed with the others."""
    mine = {"brand_id": subject.brand_id, "subject": subject}
    invitations, _ = Invitation.objects.filter(**mine).delete()
    links = CustomerSubject.objects.filter(**mine)
    customers = list(links.values_list("customer_id", flat=True))
    links.delete()
    alone = Customer.objects.filter(pk__in=customers).exclude(
        Exists(CustomerSubject.objects.filter(customer=OuterRef("pk"))))
    people = list(alone.values_list("user_id", flat=True))
    alone.delete()
    _forget(people)
    return {"invitations": invitations, "customers": len(customers), "accounts": len(people)}


def _forget(user_ids: list[int]) -> None:
    """The sign-ins of customer accounts just deleted, when they serve nothing else."""
    users = get_user_model().objects.filter(pk__in=user_ids, is_staff=False,
                                            is_superuser=False)
    users.exclude(Q(customer_accounts__isnull=False) | Q(memberships__isnull=False)
                  | Q(owned_brands__isnull=False)).delete()


def _orders_forget(subject: Subject) -> None:
    """A scheduled order for the subject (a `jobs.order` delay, ended in step 3) keeps no
    facts: the job's input it would have given."""
    for pk, payload in Timer.objects.filter(
            brand_id=subject.brand_id, kind="delay", payload__operation="jobs.order",
            payload__input__subject=subject.pk).values_list("pk", "payload"):
        Timer.objects.filter(pk=pk).update(payload={**payload, "input": {
            **payload["input"], "input": {}}})


def _rows(subject: Subject, needles: scrubbing.Needles, at: datetime) -> None:
    """Step 5: the subject, its jobs' facts and its scheduled orders', its asks' parties and
    its dates' "by"."""
    Subject.objects.filter(pk=subject.pk).update(
        name=NAME, key=subject.pk, input={}, contact_email="", owner_name="", erased=at,
        feed_token=new_feed_token())
    mine = {"brand_id": subject.brand_id, "subject": subject}
    Job.objects.filter(**mine).update(input={})
    Ask.objects.filter(**mine).update(party=scrubbing.GENERIC_PARTY, email="")
    _orders_forget(subject)
    said = Occurrence.objects.filter(brand_id=subject.brand_id, clock__subject=subject).exclude(
        moved_by="", settled_by="")
    for pk, moved_by, settled_by in said.values_list("pk", "moved_by", "settled_by"):
        clean = (needles.text(moved_by), needles.text(settled_by))
        if clean != (moved_by, settled_by):
            Occurrence.objects.filter(pk=pk).update(moved_by=clean[0], settled_by=clean[1])
