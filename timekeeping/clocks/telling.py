"""Telling people: a date's records, and its emails to whoever acts on it (the customer,
the member who answers for it, or the brand's owner), with the link to where they act.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

from timekeeping.clocks import emails
from timekeeping.clocks.basis import now_for
from timekeeping.models import Clock, Member, Occurrence
from timekeeping.timers import outbox, records

ACK_ASKED = emails.ACK_ASKED  # the rung an `ack daily` rung notices with (kinds/clock.py)


def record_line(occurrence: Occurrence, kind: str, data: dict, *, at: datetime | None = None):
    row = occurrence.clock
    return records.write(kind, brand=row.brand, instant=at or now_for(row.brand, row.test_clock),
                  test_clock=row.test_clock, subject=row.subject_id, job=row.job_id,
                  data={"clock": row.id, "name": row.name, "item": occurrence.item, **data})


def owner_email(occurrence: Occurrence, *, escalate: bool = False) -> str:
    told = _recipient(occurrence, escalate=escalate)
    return told.to[0] if told.to else ""


@dataclass(frozen=True)
class Told:
    """Whom a date's email goes to, whether that is the customer, and, when the member who
    answers for the date cannot be reached, the sentence that says why the brand's owner is
    told instead."""

    to: tuple[str, ...]
    customer: bool = False
    instead: str = ""


def _recipient(occurrence: Occurrence, *, escalate: bool) -> Told:
    """Whom a date's email goes to: the subject's contact for a buyer's date; for the brand's
    own dates, the member who answers for it (the one it is assigned to, else the member the
    clock names as its owner, `mbr_…`), else the brand's owner, saying so when that member has
    gone. An escalation goes above them: to the brand's owner, that member told beside (never
    the customer). A date in a test clock's world is the brand's own rehearsal: its emails
    never reach anyone but the brand's owner."""
    row = occurrence.clock
    # A date a steward keeps between jobs (S16) is the brand's to keep for its customer.
    if row.owner == "buyer" and row.subject.contact_email and row.steward_id is None and not (
            escalate or row.test_clock_id):
        return Told((row.subject.contact_email,), customer=True)
    return _brand_side(occurrence, escalate=escalate)


def _brand_side(occurrence: Occurrence, *, escalate: bool = False) -> Told:
    """The brand's side of a date: the member who answers for it, else the brand's owner
    (saying why when that member has gone); an escalation goes to the owner, the member
    beside. In a test clock's world, the brand's owner alone."""
    row = occurrence.clock
    brand_owner = row.brand.owner.email if row.brand.owner else ""
    if row.test_clock_id:
        return Told(_present(brand_owner))
    member, instead = answering(occurrence)
    member_email = member.user.email if member is not None else ""
    if escalate:
        return Told(_present(brand_owner, member_email))
    if member_email:
        return Told((member_email,))
    return Told(_present(brand_owner), instead=instead)


def _present(*addresses: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(address for address in addresses if address))


def answering(occurrence: Occurrence) -> tuple[Member | None, str]:
    """The member who answers for the date and can be written to, and, when there is none
    though the date names one, why not (in the owner's words): the member it is assigned to,
    else the keeper of a date a steward keeps between jobs (S16), else the member the clock
    names as its owner while they are one of the brand's."""
    row = occurrence.clock
    assignee = occurrence.assignee
    if assignee is not None and assignee.user.is_active and assignee.user.email:
        return assignee, ""
    if assignee is None and row.steward_id is not None:  # S16: its keeper, else the owner
        keeper = row.keeper
        usable = keeper is not None and keeper.user.is_active and keeper.user.email
        return (keeper, "") if usable else (None, "")
    if assignee is None and not row.owner.startswith(MEMBER):
        return None, ""
    member = assignee if assignee is not None else member_owner(row)
    if member is None or not member.user.is_active:
        return None, (f"The member who answered for this date is no longer with "
                      f"{row.brand.name}, so it comes to you. Assign it to someone on its "
                      "page.")
    if not member.user.email:
        return None, (f"{member.name} answers for this date but has no email address with "
                      "us, so it comes to you.")
    return member, ""


MEMBER = "mbr_"  # a clock owned by one member: `owner: "mbr_…"`


def member_owner(row: Clock) -> Member | None:
    """The member a clock names as its owner (`mbr_…`) while they are one of its brand's and
    can still sign in; None for any other owner, or once they have gone."""
    if not row.owner.startswith(MEMBER):
        return None
    return Member.objects.select_related("user").filter(
        pk=row.owner, brand_id=row.brand_id, user__is_active=True).first()


def act_link(occurrence: Occurrence, *, customer: bool) -> str:
    """The page where the recipient acts on the date: the portal's subject page for the
    customer, the console's subject page for the brand's own people."""
    row = occurrence.clock
    if customer:
        return f"{settings.SITE_URL}/portal/subjects/{row.subject_id}/"
    return f"{settings.SITE_URL}/console/{row.brand_id}/subjects/{row.subject_id}/"


def tell_owner(occurrence: Occurrence, subject: str, body: str, *, key: str,
                escalate: bool = False) -> None:
    """Queue the email to the date's owner, with the link to where they act; in a test
    clock's world its subject line says so."""
    _queue(occurrence, _recipient(occurrence, escalate=escalate), subject, body, key=key)


def tell_both(occurrence: Occurrence, said: Callable[[bool], tuple[str, str]], *,
              key: str) -> None:
    """Queue one email to the customer (the subject's contact) and one to the brand's side
    (the member who answers for the date, else the brand's owner), whoever owns the date:
    `said(customer)` gives each its subject line and body. In a test clock's world only the
    brand's owner hears; one address is written to once."""
    row = occurrence.clock
    customer = Told(() if row.test_clock_id else _present(row.subject.contact_email),
                    customer=True)
    sent: set[str] = set()
    for told in (customer, _brand_side(occurrence)):
        if told.to and told.to[0] not in sent:
            sent.add(told.to[0])
            _queue(occurrence, told, *said(told.customer),
                   key=f"{key}:{'customer' if told.customer else 'brand'}")


def _queue(occurrence: Occurrence, told: Told, subject: str, body: str, *, key: str) -> None:
    if not told.to:
        return
    row = occurrence.clock
    subject = outbox.practice(subject, row.test_clock_id)
    if told.instead:
        body = f"{told.instead}\n\n{body}"
    body += f"\n\n{act_link(occurrence, customer=told.customer)}\n"
    instant = now_for(row.brand, row.test_clock)
    outbox.enqueue_email(brand=row.brand, to=list(told.to), subject=subject, body=body,
                         key=f"{occurrence.label}:{key}:{occurrence.due}:{instant.isoformat()}")


def notice(occurrence: Occurrence, rung: str, *, escalate: bool = False) -> None:
    """A rung's notice on the record, and its email. An `ack daily` rung ("ack asked") asks
    for the acknowledgement, and its email says where to give it."""
    kind = "clock.escalated" if escalate else "clock.notice"
    record_line(occurrence, kind, {"rung": rung, "due": occurrence.due})
    tell_owner(occurrence, *emails.notice(occurrence, rung), key=rung, escalate=escalate)
