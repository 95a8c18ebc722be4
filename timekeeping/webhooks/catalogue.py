"""The event catalogue (issue 30, `docs/events.md`): which records are events, of which type,
and an event's one shape, for a webhook's body and the events API alike.

An event is a record (DESIGN decision 5): its id is the record's, it is written in the same
transaction as the change it tells of, and it is never changed. A type names what a business
would act on; several record kinds may be one type (a clock's date and a deadline are both a
"date"). The shape is version 1: fields may be added, none is renamed or removed within it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.urls import reverse

from timekeeping.clocks import history
from timekeeping.models import Record

VERSION = 1


@dataclass(frozen=True)
class EventType:
    name: str
    kinds: tuple[str, ...]  # the record kinds that are this event
    says: str  # what it means, for the docs and the console's list of types


TYPES: tuple[EventType, ...] = (
    EventType("date.notice_sent", ("clock.notice",),
              "A reminder of a date was sent to the people who keep it."),
    EventType("date.at_risk", ("clock.escalated", "deadline.at_risk"),
              "A date is close and not yet kept: its escalation went out, or a deadline's "
              "work is running late."),
    EventType("date.kept", ("clock.satisfied", "deadline.met"), "A date was kept in time."),
    EventType("date.missed", ("clock.lapsed", "deadline.late"), "A date passed unkept."),
    EventType("date.moved", ("clock.moved", "deadline.moved"),
              "A date moved: by a step, a postponement, a calendar's roll or the date it "
              "follows."),
    EventType("date.reopened", ("clock.lapse_withdrawn",),
              "A missed date was reopened by a notice that came after it."),
    EventType("job.opened", ("job.opened",), "A job opened for a subject."),
    EventType("job.ended", ("job.ended", "job.accepted", "job.cancelled"),
              "A job ended: done, accepted or cancelled."),
    EventType("job.lapsed", ("job.lapsed",), "A job ended because its time ran out."),
    EventType("ask.opened", ("ask.opened",), "A question was put to the customer."),
    EventType("ask.answered", ("ask.answered",), "The customer answered a question."),
    EventType("ask.expired", ("ask.expired", "ask.lapsed"),
              "A question went unanswered past its time."),
    EventType("task.held", ("deadline.held",),
              "A task's deadline is held while it waits on the customer."),
    EventType("task.released", ("deadline.released",), "A held task's deadline runs again."),
    EventType("subscription.renewed", ("cycle.renewed",), "A subscription renewed for a cycle."),
    EventType("subscription.charged", ("subscription.paid",),
              "A subscription's payment was taken."),
    EventType("subscription.payment_failed", ("renewal.unpaid",),
              "A subscription's renewal went unpaid."),
    EventType("subscription.cancelled", ("subscription.cancelling", "subscription.ended"),
              "A subscription was cancelled, or ended at its cycle's end."),
    EventType("subject.erased", ("subject.erased",),
              "A subject's personal data was erased: its open jobs were cancelled and its "
              "plans ended; its dates and history stay without personal data."),
    EventType("schedule.failed", ("schedule.failed",), "A schedule's run failed."),
    EventType("schedule.recovered", ("schedule.recovered",),
              "A schedule that had failed ran again and succeeded."),
    EventType("row.moved", ("row.moved",), "A row of a table moved by a timed move."),
    EventType("row.set_aside", ("row.set_aside",),
              "A timed move was refused, and the row was set aside for an hour."),
    EventType("timer.late", ("timer.late",),
              "Timers fired later than they were owed (after the tick was stopped or behind)."),
    EventType("timer.parked", ("timer.parked",),
              "Scheduled work failed too many times in a row and was parked: it is not tried "
              "again until someone retries it or gives it up."),
    EventType("connection.parked", ("connection.parked",),
              "The timed moves of a brand's tables failed too many times in a row and were "
              "parked: no row moves on its own until someone retries them or gives them up."),
    EventType("schedule.parked", ("schedule.parked",),
              "A schedule's runs failed too many times in a row and it was parked: it does not "
              "run until someone retries it or gives it up."),
    EventType("tick.stopped", ("tick.stopped",),
              "The tick had stopped; it runs again and catches up."),
)
TEST_TYPE = "webhook.test"  # what "send test event" sends; never a record

BY_NAME = {event.name: event for event in TYPES}
TYPE_OF_KIND = {kind: event.name for event in TYPES for kind in event.kinds}
NAMES = tuple(BY_NAME)
KINDS = tuple(TYPE_OF_KIND)

_PUBLIC_ID = re.compile(r"[a-z]{2,4}_[0-9A-Za-z]{16}")


def type_of(kind: str) -> str | None:
    """The event type of a record kind, or None when that kind is no event."""
    return TYPE_OF_KIND.get(kind)


def kinds_of(names: list[str] | tuple[str, ...]) -> list[str]:
    """The record kinds of event types (every event kind when none are named)."""
    if not names:
        return list(KINDS)
    return [kind for name in names for kind in BY_NAME[name].kinds]


def objects_of(job: str, timer: str, data: dict) -> dict[str, str]:
    """The objects an event is about, by id: its job and timer, and each public id its record
    names (a clock, a deadline, an ask, a subscription, a member)."""
    found: dict[str, str] = {}
    if job:
        found["job"] = job
    if timer:
        found["timer"] = timer
    for key, value in data.items():
        if isinstance(value, str) and _PUBLIC_ID.fullmatch(value) and key not in found:
            found[key] = value
    return found


def link(brand_id: str, subject: str) -> str:
    """The console page that shows the event: its subject's page, else the brand's Why page."""
    if subject:
        path = reverse("console:subject", args=[brand_id, subject])
    else:
        path = reverse("console:why", args=[brand_id])
    return f"{settings.SITE_URL}{path}"


def event(record: Record) -> dict:
    """A record as an event: the body of its webhook and its item in the events API."""
    data = record.data if isinstance(record.data, dict) else {}
    return envelope(
        id=record.pk, type=type_of(record.kind) or record.kind, created=record.written,
        occurs_at=record.instant, brand_id=record.brand_id, test_clock=record.test_clock_id,
        subject=record.subject, objects=objects_of(record.job, record.timer, data),
        summary=history.say(record) or "", data={"kind": record.kind, **data},
    )


def envelope(*, id: str, type: str, created: datetime, occurs_at: datetime, brand_id: str,
             test_clock: str | None, subject: str, objects: dict, summary: str,
             data: dict) -> dict:
    return {
        "id": id, "type": type, "version": VERSION,
        "created": _iso(created), "occurs_at": _iso(occurs_at),
        "brand": brand_id, "test_clock": test_clock or None, "subject": subject or None,
        "objects": objects, "summary": summary, "link": link(brand_id, subject),
        "data": data,
    }


def _iso(instant: datetime) -> str:
    return instant.isoformat().replace("+00:00", "Z")
