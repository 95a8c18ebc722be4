"""Every event says what happened in words (issue 30, ../shared/WORDS.md): the `summary` of each
type in the catalogue, for a record of the shape its writer keeps, is a sentence a business
reads once, with no id, code or engine word in it."""

from datetime import UTC, datetime

import pytest

from tests.words import engine_words
from timekeeping.models import Record
from timekeeping.timers import records
from timekeeping.webhooks import catalogue

AT = datetime(2027, 3, 14, 6, 30, tzinfo=UTC)

# Each record kind that is an event, with data as the code that writes it keeps it.
SAMPLES = {
    "clock.notice": {"name": "file", "item": "US-CA", "due": "2027-04-15"},
    "clock.escalated": {"name": "file", "item": "US-CA", "due": "2027-04-15"},
    "deadline.at_risk": {"step": "prepare", "ends": "2027-04-10T17:00:00Z"},
    "clock.satisfied": {"name": "file", "by": "marked done by user 7 (ana)"},
    "deadline.met": {"step": "prepare", "on_time": True},
    "clock.lapsed": {"name": "file", "due": "2027-04-15"},
    "deadline.late": {"step": "prepare", "late_price": "10%"},
    "clock.moved": {"name": "file", "from": "2027-04-15", "to": "2027-10-15",
                    "by": "user 7 (ana)"},
    "deadline.moved": {"follows": "file", "to": "2027-10-15"},
    "clock.lapse_withdrawn": {"name": "file", "due": "2027-04-15", "notice": "IRS CA-2027-01",
                              "to": "2027-05-15"},
    "job.opened": {"service": "federal-return", "period": "2026", "by": "user 7 (ana)"},
    "job.ended": {},
    "job.accepted": {"at": "2027-03-14T06:30:00Z"},
    "job.cancelled": {},
    "job.lapsed": {"acts_committed": ["intake"]},
    "ask.opened": {"party": "Juniper Labs", "step": "organizer", "expires": "2027-03-28"},
    "ask.answered": {"by": "user 9 (juniper)"},
    "ask.expired": {"ask": "ask_0123456789abcdef", "expiry": 1, "opens_until": "2027-04-04"},
    "ask.lapsed": {"ask": "ask_0123456789abcdef", "expiry": 2},
    "deadline.held": {"deadline": "ddl_0123456789abcdef", "by": "ask_0123456789abcdef",
                      "work_left": "2d 4h"},
    "deadline.released": {"deadline": "ddl_0123456789abcdef", "work_left": "2d 4h",
                          "ends": "2027-03-20T15:00:00Z"},
    "cycle.renewed": {"cycle": 3, "amount": 24000, "currency": "USD"},
    "subscription.paid": {"amount": 24000, "currency": "USD", "by": "user 7 (ana)"},
    "renewal.unpaid": {"cycle": 3, "owed": "$240.00", "next_try": "2027-03-17"},
    "subscription.cancelling": {"ends": "2027-06-30", "by": "user 9 (juniper)"},
    "subscription.ended": {"after_cycle": 3},
    "subject.erased": {"by": "user 7 (ana)", "jobs": 2, "plans": 1, "dates": 9, "timers": 14,
                       "invitations": 1, "customers": 1, "accounts": 1, "emails": 0,
                       "records": 6},
    "schedule.failed": {"schedule": "nightly-sync", "run": 41,
                        "reason": "The books service did not answer."},
    "schedule.recovered": {"schedule": "nightly-sync", "run": 42, "reason": ""},
    "row.moved": {"table": "orders", "row": 1042, "from": "placed", "to": "cancelled",
                  "by": "timed move", "who": "timed move"},
    "row.set_aside": {"table": "orders", "row": 1042, "rule": 1,
                      "code": "STATE_MOVE_REFUSED: the move waits for settings.auto_release "
                              "to be True", "until": "2027-03-14T07:30:00Z"},
    "timer.late": {"timers": 3, "owed_from": "2027-03-14T04:46:00Z", "latest_by_s": 5520.0},
    "timer.parked": {"timer_kind": "delay", "key": "order:1042:remind", "owner": "",
                     "attempts": 10, "error": "RuntimeError: the handler broke"},
    "connection.parked": {"connection": "con_0123456789abcdef", "attempts": 10,
                          "error": "ConnectionDoesNotExist: The connection 'venue' doesn't "
                                   "exist."},
    "schedule.parked": {"schedule": "nightly-sync", "schedule_id": "sch_0123456789abcdef",
                        "run": "run_0123456789abcdef", "attempts": 10,
                        "error": "TimeoutError: The books service did not answer."},
    "tick.stopped": {"since": "2027-03-14T04:46:00Z", "until": "2027-03-14T06:18:00Z",
                     "stopped_s": 5520.0},
}


def test_the_samples_cover_every_kind_of_the_catalogue():
    assert sorted(SAMPLES) == sorted(catalogue.KINDS)


@pytest.mark.parametrize("kind", sorted(catalogue.KINDS))
def test_it_says_every_event_in_words(brand, kind):
    records.write(kind, brand=brand, instant=AT, data=SAMPLES[kind])
    record = Record.objects.get(brand=brand, kind=kind)  # its data as the database keeps it
    summary = catalogue.event(record)["summary"]
    assert summary and summary != f"{kind}." and summary.endswith(".")
    assert engine_words(summary) == [], summary


@pytest.mark.parametrize(("kind", "summary"), [
    ("row.moved", "Row 1042 of orders moved from placed to cancelled by a timed move."),
    ("row.set_aside", "Couldn't move row 1042 of orders: 'auto-release' is off. Turn it on or "
                      "move it by hand; it is tried again in an hour."),
    ("timer.late", "3 scheduled actions ran late, the latest by 92 minutes: no tick ran while "
                   "they were due."),
    ("tick.stopped", "Nothing ran for 92 minutes on Sun 14 Mar 2027: the tick had stopped. It "
                     "ran again and caught up."),
    ("schedule.failed", "The schedule 'nightly-sync' did not run: The books service did not "
                        "answer."),
    ("schedule.parked", "The schedule 'nightly-sync' failed 10 times in a row, so it was "
                        "parked: it does not run until someone retries it or gives it up."),
    ("subscription.ended", "The plan ended after cycle 3, as it was cancelled."),
    ("subject.erased", "The subject's personal data was erased by ana: its name, contact and "
                       "facts are gone; 2 open jobs were cancelled, 1 plan ended, 1 customer "
                       "lost access. Its dates and history stay, without personal data."),
    ("deadline.released", "The deadline on the job runs again, with 2d 4h of work time left: "
                          "the work is due Sat 20 Mar 2027."),
])
def test_it_says_what_happened_as_a_reader_reads_it(brand, kind, summary):
    records.write(kind, brand=brand, instant=AT, data=SAMPLES[kind])
    assert catalogue.event(Record.objects.get(brand=brand, kind=kind))["summary"] == summary
