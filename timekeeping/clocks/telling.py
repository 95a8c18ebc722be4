"""Telling people: a date's records, and its emails to whoever acts on it (the customer,
the member it is assigned to, or the brand's owner), with the link to where they act.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings

from timekeeping.clocks import emails
from timekeeping.clocks.basis import now_for
from timekeeping.models import Occurrence
from timekeeping.timers import outbox, records

ACK_ASKED = emails.ACK_ASKED  # the rung an `ack daily` rung notices with (kinds/clock.py)


def record_line(occurrence: Occurrence, kind: str, data: dict, *, at: datetime | None = None):
    row = occurrence.clock
    return records.write(kind, brand=row.brand, instant=at or now_for(row.brand, row.test_clock),
                  test_clock=row.test_clock, subject=row.subject_id, job=row.job_id,
                  data={"clock": row.id, "name": row.name, "item": occurrence.item, **data})


def owner_email(occurrence: Occurrence, *, escalate: bool = False) -> str:
    return _recipient(occurrence, escalate=escalate)[0]


def _recipient(occurrence: Occurrence, *, escalate: bool) -> tuple[str, bool]:
    """Whom a date's email goes to, and whether that is the customer: for a date a steward
    keeps between jobs (S16), the member it is assigned to, else its keeper, else the brand's
    owner; the subject's contact for a buyer's date; for a brand's date assigned to a member
    (`mbr_…`), that member; else (and for an escalation) the brand's owner. A date in a test
    clock's world is the brand's own rehearsal: its emails never reach anyone but the brand's
    owner."""
    row = occurrence.clock
    brand_owner = row.brand.owner.email if row.brand.owner else ""
    if escalate or row.test_clock_id:
        return brand_owner, False
    if row.steward_id is not None:  # S16: a steward keeps it between jobs, for its customer
        keeper = occurrence.assignee or row.keeper
        return (keeper.user.email if keeper and keeper.user.email else brand_owner), False
    if row.owner != "buyer" or not row.subject.contact_email:
        assignee = occurrence.assignee
        if assignee is not None and assignee.user.email:
            return assignee.user.email, False
        return brand_owner, False
    return row.subject.contact_email, True


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
    to, customer = _recipient(occurrence, escalate=escalate)
    if not to:
        return
    row = occurrence.clock
    subject = outbox.practice(subject, row.test_clock_id)
    body += f"\n\n{act_link(occurrence, customer=customer)}\n"
    instant = now_for(row.brand, row.test_clock)
    outbox.enqueue_email(brand=row.brand, to=[to], subject=subject, body=body,
                         key=f"{occurrence.label}:{key}:{occurrence.due}:{instant.isoformat()}")


def notice(occurrence: Occurrence, rung: str, *, escalate: bool = False) -> None:
    """A rung's notice on the record, and its email. An `ack daily` rung ("ack asked") asks
    for the acknowledgement, and its email says where to give it."""
    kind = "clock.escalated" if escalate else "clock.notice"
    record_line(occurrence, kind, {"rung": rung, "due": occurrence.due})
    tell_owner(occurrence, *emails.notice(occurrence, rung), key=rung, escalate=escalate)
