"""What a date's emails say (issue 27, ../shared/WORDS.md): the date by its name and its
subject's, the day it is due and the moment it is late from in the subject's zone, what the
reader may do, and the link to the page where they do it. No rung names, ids or codes.

    reminder(rung)              "30-day reminder", "Please acknowledge", "Escalated"
    notice(occurrence, rung)    a reminder's subject line and body (the link is added after)
    missed(occurrence, choices) the subject line and body when a date passed not done
    reopened(occurrence, …)     when a late notice moved a missed date: it counts again
"""

from __future__ import annotations

from datetime import date

from timekeeping.basics import shown
from timekeeping.models import Occurrence
from timekeeping.specs.services import parse_rung

ACK_ASKED = "ack asked"


def reminder(rung: str) -> str:
    """A rung as the reader names the email it sends: "notice 30d" is a "30-day reminder"."""
    if rung == ACK_ASKED:
        return "Please acknowledge"
    parsed = parse_rung(rung)
    if parsed is None:
        return "Reminder"
    if parsed.action == "escalate":
        return f"Escalated {parsed.days} day{'s' if parsed.days != 1 else ''} before"
    return f"{parsed.days}-day reminder"


def name(occurrence: Occurrence) -> str:
    """The date by its name and its subject's: "file the 2027 return (US) for Juniper Labs"."""
    row = occurrence.clock
    item = f" ({occurrence.item})" if occurrence.item else ""
    return f"{row.title}{item} for {row.subject.name}"


def _late_from(occurrence: Occurrence) -> str:
    return shown.moment(occurrence.late_from, occurrence.clock.subject.zone or "UTC")


def notice(occurrence: Occurrence, rung: str) -> tuple[str, str]:
    due = shown.day(occurrence.due)
    said = (f"{name(occurrence)} is due {due}; it counts as late from "
            f"{_late_from(occurrence)}.")
    if rung == ACK_ASKED:
        return (f"Please acknowledge: {name(occurrence)} is due {due}",
                f"{said}\n\nPlease acknowledge it on its page; we ask once a day until you do:")
    return f"{reminder(rung)}: {name(occurrence)} is due {due}", f"{said}\n\nSee it on its page:"


def missed(occurrence: Occurrence, choices: tuple[str, ...]) -> tuple[str, str]:
    due = shown.day(occurrence.due)
    said = f"{name(occurrence)} was due {due} and was not done in time."
    subject = f"Missed: {name(occurrence)} was due {due}"
    if not choices:
        return subject, f"{said}\n\nSee it on its page:"
    listed = "".join(f"\n- {choice.replace('_', ' ')}" for choice in choices)
    return subject, f"{said} Choose what to do next:{listed}\n\nChoose on its page:"


def reopened(occurrence: Occurrence, missed: date, notice: str, *,
             customer: bool) -> tuple[str, str]:
    """A date missed on `missed`, moved by an authority's late notice (SPEC S2): its new
    date, and that the earlier miss no longer counts. The customer reads that the authority
    extended it; the brand's side, which notice moved it and what of its reminders."""
    due, was = shown.day(occurrence.due), shown.day(missed)
    late = _late_from(occurrence)
    subject = f"Extended to {due}: {name(occurrence)}"
    if customer:
        return subject, (
            f"{cited(notice)} extended {name(occurrence)} to {due}; it counts as late from {late}. "
            f"The earlier date, {was}, no longer counts: it is not missed.\n\nSee it on its "
            "page:")
    return subject, (
        f"{cited(notice)} moved {name(occurrence)} from {was}, which had been missed, "
        f"to {due}; it counts as late from {late}. The miss on {was} is withdrawn, and the "
        "date is open again. Reminders whose day has passed are not sent again; those still "
        "ahead are scheduled.\n\nSee it on its page:")


def cited(notice: str) -> str:
    """A notice as a sentence begins with it: "Relief notice IRS CA-2028-01", unless its own
    words already say it is one ("IRS notice 2028-7")."""
    return notice if "notice" in notice.lower() else f"Relief notice {notice}"
