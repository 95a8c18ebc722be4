"""A party's link (S8, T1): a party asked for something on a job, by a link that works until
its expiry. Place 3 of the tick.

    open_ask(job, step=…, spec=…, now=…)        the ask, its link emailed, its timers armed
    by_token(token)                             the ask a link names, or None
    answer(token, by=…)                         the party answers through the link
    answer_ask(ask, by=…)                       the same, for an ask found another way
    close(job, why)                             the job ended: its asks close
    lapse(job, cause=ask)                       a party's link expired twice: the job lapses

The expiry is data: the link's page and its answer compare it with the operation's clock, so
a link past its moment refuses even before the tick has fired its expiry. A reminder goes the
day before; at the first expiry the link opens once more for the same term; the second ends
the job `lapsed`. While an ask is open the job waits on the party, and its deadlines are held.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db import transaction

from timekeeping import clocks
from timekeeping.basics import compiled
from timekeeping.clocks import gate
from timekeeping.jobs import common, deadlines, grants
from timekeeping.models import Ask, Job
from timekeeping.specs.jobs import DeliverSpec, Span, parse_span
from timekeeping.timers import made

KIND = "ask"


class AskRefused(Exception):
    """The link cannot be answered now: `code` says why, `moment` when it stopped working."""

    def __init__(self, code: str, message: str, moment: datetime | None = None):
        super().__init__(message)
        self.code, self.message, self.moment = code, message, moment


@dataclass(frozen=True)
class Opened:
    ask: Ask
    token: str  # the link's secret: emailed, never stored (the ask keeps its digest)

    @property
    def link(self) -> str:
        return link_of(self.token)


def link_of(token: str) -> str:
    return f"{settings.SITE_URL}/ask/{token}/"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _party(job: Job, ask: str | dict | None) -> tuple[str, str]:
    """Who is asked, as people read it, and their email."""
    if isinstance(ask, dict):
        email = str(job.input.get(ask["input"], "") or "")
        return email or f"the party in input.{ask['input']}", email
    subject = job.subject
    return subject.owner_name or "the subject's contact", subject.contact_email


@transaction.atomic(savepoint=False)  # whole with the order or firing that opens it
def open_ask(job: Job, *, now: datetime, step: str = "", spec: DeliverSpec | None = None,
             purpose: str = Ask.Purpose.STEP, term: Span | None = None,
             title: str = "") -> Opened:
    """Ask the party; the job now waits on them, so its running deadlines are held."""
    term = term or (spec.expires if spec else None) or parse_span("30d")
    name, email = _party(job, spec.ask if spec else "owner")
    token = secrets.token_urlsafe(24)
    expires = term.after(now, common.zone_of(job))
    ask = Ask.fresh(
        brand=job.brand, test_clock=job.test_clock, job=job, subject=job.subject,
        purpose=purpose, step=step, title=title or (spec.title if spec else step),
        party=name, email=email, digest=_digest(token), term=expires - now,
        expires=expires, opened=now)
    made.insert([ask])  # with its firing batch's, when an order inside one opens it
    common.note_made(job, "ask", ask)
    _arm(ask)
    common.record(job, "ask.opened", {"ask": ask.pk, "step": step, "purpose": purpose,
                                      "party": name, "expires": expires})
    _tell_party(ask, token, f"{ask.title}: please answer by {common.said_at(job, expires)}",
                f"{job.brand.name} asks you for: {ask.title}. The link below works until "
                f"{common.said_at(job, expires)}:")
    deadlines.hold_all(job, ask, now)
    return Opened(ask, token)


def _term(ask: Ask) -> Span | None:
    """How long the link works each time it opens, as the job's manifest version writes it."""
    work = common.work_of(ask.job)
    if ask.purpose == Ask.Purpose.GRANT:
        return work.grant_ask
    spec = work.deliver.get(ask.step)
    return spec.expires if spec else None


def _arm(ask: Ask) -> None:
    """The reminder the day before (when the link works that long) and the expiry."""
    job = ask.job
    remind = parse_span("1d").before(ask.expires, common.zone_of(job))
    payload = {"ask": ask.pk, "title": ask.title}
    wanted = {f"{ask.pk}:remind": (remind, {**payload, "mark": "remind"})} \
        if remind > common.now_of(job) else {}
    wanted[f"{ask.pk}:expire"] = (ask.expires, {**payload, "mark": "expire"})
    common.rearm_keys(job, KIND, wanted, why="the link opened again")  # three statements


def by_token(token: str) -> Ask | None:
    if not isinstance(token, str) or not 16 <= len(token) <= 64:
        return None
    return Ask.objects.select_related("job__brand__owner", "job__subject", "job__test_clock",
                                      "brand").filter(digest=_digest(token)).first()


def judge(ask: Ask, now: datetime) -> AskRefused | None:
    """Whether the link works at `now` (T1): open, and before its moment."""
    if ask.state == Ask.State.ANSWERED:
        return AskRefused("ask_answered", f"this was answered at {common.at(ask.answered)}")
    if ask.state != Ask.State.OPEN:
        return AskRefused("ask_closed", f"this link is {ask.get_state_display()}")
    if now >= ask.expires:
        return AskRefused("link_expired", f"this link stopped working at "
                                          f"{common.at(ask.expires)}", ask.expires)
    return None


def answer(token: str, *, by: str = "") -> gate.Outcome | None:
    """The party answers through the link: their step goes through the gate (or, for the
    grant, it is given again). Refused with AskRefused when the link no longer works."""
    ask = by_token(token)
    if ask is None:
        raise AskRefused("link_unknown", "no such link")
    return answer_ask(ask, by=by)


def answer_ask(ask: Ask, *, by: str = "") -> gate.Outcome | None:
    """Answer `ask` as its link would (the portal's signed-in customer answers their own)."""
    job = ask.job
    with transaction.atomic():
        ask = Ask.objects.select_for_update(of=("self",)).get(pk=ask.pk)
        now = common.now_of(job)
        refused = judge(ask, now)
        if refused is not None:
            raise refused
        who = by or f"party {ask.party}"
        if ask.purpose == Ask.Purpose.GRANT:
            settle(ask, now, by=who)
            grants.renew(job, now, by=who)
            return None
        outcome = gate.propose(job=job, step=ask.step, by=who)
        if not outcome.committed:
            raise AskRefused(outcome.code, outcome.reason)
        return outcome


@transaction.atomic
def settle(ask: Ask, now: datetime, *, by: str) -> None:
    """The ask is answered (its step committed, or the grant given): the job may run again."""
    ask.state, ask.answered = Ask.State.ANSWERED, now
    ask.save(update_fields=["state", "answered"])
    common.cancel(ask.job, f"{ask.pk}:remind", f"{ask.pk}:expire", why=f"answered by {by}")
    common.record(ask.job, "ask.answered", {"ask": ask.pk, "step": ask.step, "by": by})
    deadlines.release_all(ask.job, now)


# A job's open asks: what its end closes, compiled once and prepared (by the job's index).
OPEN_OF_JOB = compiled.Read(lambda job: Ask.objects.filter(job_id=job, state=Ask.State.OPEN),
                            model=Ask, prepared=True)


def close(job: Job, why: str) -> None:
    for ask in OPEN_OF_JOB(job=job.pk):
        ask.state = Ask.State.CLOSED
        ask.save(update_fields=["state"])
        common.cancel(job, f"{ask.pk}:remind", f"{ask.pk}:expire", why=why)


def _tell_party(ask: Ask, token: str | None, subject: str, body: str) -> None:
    common.tell(ask.job, ask.email, subject, body, key=f"{ask.pk}:{ask.expiries}:{subject}",
                link=link_of(token) if token else common.portal_link(ask.job))


# -- firing -----------------------------------------------------------------------------------

FIRED = common.fired_row(Ask)


def fire(ask_id: str, mark: str, instant: datetime, *, read: Ask | None = None) -> str:
    """An ask's mark fires: `read`, the ask as its batch read it (`common.keep_fired`), else
    read now."""
    # Inside the firing's transaction (a savepoint per timer when a batch is redone one by
    # one), as a deadline's mark: no savepoint of its own (two statements an ask, issue 32).
    with transaction.atomic(savepoint=False):
        ask = read or FIRED.get(pk=ask_id)
        job = ask.job
        if ask.state != Ask.State.OPEN:
            return f"{ask.title} · {ask.state}: nothing to do"
        if mark == "remind":
            common.record(job, "ask.reminded", {"ask": ask.pk, "expires": ask.expires})
            _tell_party(ask, None, f"Reminder: {ask.title} by "
                                   f"{common.said_at(job, ask.expires)}",
                        f"{job.brand.name} still waits for: {ask.title}. Your link works until "
                        f"{common.said_at(job, ask.expires)}; use the link in the first "
                        "email, or see what is waiting on your page:")
            return f"{ask.title} · reminded: the link works until {common.at(ask.expires)}"
        if instant < ask.expires:
            return f"{ask.title} · not expired yet (until {common.at(ask.expires)})"
        ask.expiries += 1
        if ask.expiries == 1:
            term = _term(ask)
            ask.expires = term.after(instant, common.zone_of(job)) if term else \
                instant + ask.term
            ask.save(update_fields=["expiries", "expires"])
            _arm(ask)
            common.record(job, "ask.expired", {"ask": ask.pk, "expiry": 1,
                                               "opens_until": ask.expires})
            _tell_party(ask, None, f"{ask.title}: your link works again until "
                                   f"{common.said_at(job, ask.expires)}",
                        f"The link to {ask.title} stopped working, and it works once more "
                        f"until {common.said_at(job, ask.expires)}. If it stops a second time, "
                        "the work stops. Use the link in the first email, or see your page:")
            return f"{ask.title} · expired once: the link opens again until " \
                   f"{common.at(ask.expires)}"
        ask.state = Ask.State.LAPSED
        ask.save(update_fields=["expiries", "state"])
        common.record(job, "ask.lapsed", {"ask": ask.pk, "expiry": 2})
        lapse(job, cause=ask)
        return f"{ask.title} · expired twice: job {job.pk} lapsed"


def lapse(job: Job, *, cause: Ask) -> None:
    """A party's link expired twice (S8, S23): the job ends `lapsed`. The hold on the money
    returns and the paid acts already committed are charged: recorded here as facts for the
    ledger to post. The buyer and the brand's owner hear it."""
    data = {"cause": cause.pk, "hold": "returns", "acts_committed": list(job.steps_done)}
    # Inside the firing's transaction (`fire`): no savepoint of its own.
    clocks.end_job(job, state=Job.State.LAPSED, by=f"ask {cause.pk} expired twice",
                   data=data, savepoint=False)
    body = (f"Work on {common.named(job)} has stopped: the link to {cause.title} stopped "
            "working twice without an answer. See it here:")
    title = f"Stopped: {common.named(job)}"
    common.tell(job, job.subject.contact_email, title, body, key="lapsed:buyer",
                link=common.portal_link(job))
    common.tell(job, common.owner_email(job), title, body, key="lapsed:owner",
                link=common.console_link(job))
