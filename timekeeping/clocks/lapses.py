"""Nothing lapses silently (S23): a lapse that is no date's own (a mint its schedule could not
open, periods a catch-up skipped, a seat of record left with no one in it) is written on the
subject's record with who hears, and each who hears is emailed with the link to where they
act. A date's own lapse is `clocks.steps`' (`clock.lapsed`, told by `telling`).

    hearers(subject, member=None, customer=False)   who hears: the brand's owner always; the
                                                    member concerned; the customer when the
                                                    lapse is theirs
    note(kind, subject=…, at=…, data=…, said=…, key=…, member=None, customer=False)
                                                    the record line (with `told`) and the emails

In a test clock's world only the brand's owner is emailed (`outbox.tell`: a rehearsal reaches
no real person); the record still names everyone who would hear.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings

from timekeeping.basics import shown
from timekeeping.models import Member, Subject
from timekeeping.timers import outbox, records


@dataclass(frozen=True)
class Hearer:
    who: str  # "owner", "member" or "customer"
    name: str  # as pages name them
    email: str  # "" when there is no address: the record says so, no email is queued
    link: str  # the page where they act


def hearers(subject: Subject, *, member: Member | None = None,
            customer: bool = False) -> list[Hearer]:
    brand, site = subject.brand, settings.SITE_URL
    owner = brand.owner
    found = [Hearer("owner", shown.person(owner) if owner else brand.name,
                    owner.email if owner else "",
                    f"{site}/console/{brand.pk}/subjects/{subject.pk}/")]
    if member is not None:
        found.append(Hearer("member", shown.person(member.user), member.user.email,
                            f"{site}/delivery/"))
    if customer:
        found.append(Hearer("customer", subject.owner_name or subject.name,
                            subject.contact_email, f"{site}/portal/subjects/{subject.pk}/"))
    return found


def note(kind: str, *, subject: Subject, at: datetime, data: dict, said: tuple[str, str],
         key: str, job: str = "", member: Member | None = None,
         customer: bool = False) -> list[Hearer]:
    """Write the lapse's record line, naming the subject and who hears (`told`: who, name,
    emailed), and queue each one's email: `said` is its subject line and body, the link to
    where they act is added. `key` makes the emails' idempotency keys (a lapse told once)."""
    heard = hearers(subject, member=member, customer=customer)
    rehearsal = subject.test_clock_id is not None
    emailed = [each for each in heard if each.email and (each.who == "owner" or not rehearsal)]
    records.write(kind, brand=subject.brand, instant=at, test_clock=subject.test_clock,
                  subject=subject.pk, job=job,
                  data={**data, "subject_name": subject.name,
                        "told": [{"who": each.who, "name": each.name,
                                  "emailed": each in emailed} for each in heard]})
    for each in emailed:
        outbox.tell(brand=subject.brand, test_clock_id=subject.test_clock_id, to=[each.email],
                    subject=said[0], body=f"{said[1]}\n\n{each.link}\n",
                    key=f"{kind}:{subject.pk}:{key}:{each.who}")
    return heard


def told_text(told: object) -> str:
    """Who heard, in the owner's words: "Told: ana (the owner, by email), Sam Reyes"."""
    if not isinstance(told, list):
        return ""
    names = [f"{each.get('name')} ({_role(each)})" for each in told if isinstance(each, dict)]
    return f"Told: {', '.join(names)}" if names else ""


def _role(each: dict) -> str:
    role = {"owner": "the owner", "member": "who had it", "customer": "the customer"}.get(
        each.get("who"), each.get("who"))
    return f"{role}, by email" if each.get("emailed") else f"{role}, not emailed"
