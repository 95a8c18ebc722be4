"""Who reaches which portal page: a customer sees the subjects linked to their account, and a
subject of anyone else answers 404, exactly as one that does not exist. A customer acts only
on the dates they answer for (a clock whose owner is the buyer); every other date of theirs is
shown, and a control on it answers 403."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from timekeeping.clocks import undo
from timekeeping.models import Clock, Customer, Occurrence, Record, Subject
from timekeeping.timers import records


def customer_only(request) -> None:
    """404 for a signed-in person who is no brand's customer."""
    if not Customer.objects.filter(user=request.user).exists():
        raise Http404("you are no customer here")


def subjects_of(request):
    """The subjects the signed-in customer may see, across the brands they are a customer of.
    Their accounts are read first (one per brand), and the subjects asked of those brands by
    name: a database sharded by brand asks only their shards."""
    accounts = dict(Customer.objects.filter(user=request.user).order_by().values_list(
        "pk", "brand_id"))
    return Subject.objects.filter(brand__in=set(accounts.values()),
                                  customers__in=list(accounts)).select_related("brand__calendar")


def subject_of(request, subject_id: str) -> Subject:
    subject = subjects_of(request).filter(pk=subject_id).first()
    if subject is None:
        raise Http404("no such subject")
    return subject


def date_of(request, clock_id: str, item: str) -> Occurrence:
    """The date a control acts on: the latest coming of `item` on a clock of the customer's
    subjects (as the API finds it), if the customer answers for that clock."""
    clock = Clock.objects.filter(pk=clock_id, subject__customers__user=request.user).first()
    if clock is None:
        raise Http404("no such clock")
    if clock.owner != "buyer":
        raise PermissionDenied("the brand answers for this date; it is shown, not yours to act on")
    found = Occurrence.objects.filter(brand_id=clock.brand_id, clock=clock,
                                      item=item).order_by("-seq").select_related(
        "clock__job", "clock__subject__brand__calendar", "clock__brand__owner",
        "clock__test_clock").first()
    if found is None:
        raise Http404("no such date")
    return found


def action_of(request, record_id: str) -> tuple[Record, Subject, Occurrence]:
    """An action (an undoable record) on a date of the customer's subjects, its subject and
    its date: 404 for any other record, as for one that does not exist. Whether it was the
    customer's own is `undo`'s to say (`only_by`), in words."""
    theirs = subjects_of(request)
    entry = Record.objects.filter(pk=record_id, subject__in=theirs.values("pk")).first()
    found = theirs.filter(pk=entry.subject).first() if entry else None
    if found is None or found.brand_id != entry.brand_id or not undo.undoable(entry):
        raise Http404("no such action")
    occurrence = Occurrence.objects.filter(
        brand_id=entry.brand_id, clock__subject=found, pk=entry.data["occurrence"]).select_related(
        "clock__job", "clock__subject__brand__calendar", "clock__brand__owner",
        "clock__test_clock").first()
    if occurrence is None:
        raise Http404("no such date")
    return entry, found, occurrence


def who(request) -> str:
    """The customer as records name them (as the API names a person)."""
    return records.person(request.user)
