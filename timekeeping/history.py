"""A subject's record as people read it (S25): what happened, in sentences, newest first.

    history(subject, limit=50, before=None)  -> list[Said]

Each record kind has a sentence; kinds that say nothing to a person (a timer's own bookkeeping)
are left out. The record stays the source: a page shows what it says, never anything else.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from timekeeping.exposure import amount_text, money_text
from timekeeping.models import Record, Subject


@dataclass(frozen=True)
class Said:
    at: datetime
    kind: str
    text: str
    test_clock: str | None


def _what(data: dict) -> str:
    """A date as the sentences name it: "file date for US-CA", "pay date"."""
    item = data.get("item") or ""
    name = data.get("name")
    return (f"{name} date" if name else "date") + (f" for {item}" if item else "")


_PERSON = re.compile(r"user \d+ \((?P<name>.+)\)")
_KEY = re.compile(r"key \S+ \((?P<name>.+)\)")


def person(who: str) -> str:
    """Who acted, as a reader names them: a person by name, an API key as a program by its name.

    Records keep the exact actor ("user 7 (ana)", "key key_… (billing)") for audit; the page
    says "ana" or "a program (billing)".
    """
    if found := _PERSON.fullmatch(who):
        return found["name"]
    if found := _KEY.fullmatch(who):
        return f"a program ({found['name']})"
    return who


def _money(data: dict, field: str, say: Callable[[int, str], str] = money_text) -> str:
    """An amount on the record, in its currency, as `say` writes it."""
    amount, currency = data.get(field), data.get("currency")
    if not isinstance(amount, int) or not isinstance(currency, str):
        return str(amount)
    return say(amount, currency)


def _day(value: object) -> str:
    """The date of an instant on the record (kept as ISO text)."""
    return str(value)[:10]


def _items(data: dict) -> str:
    named = [item for item in data.get("items") or [] if item]
    return f": {', '.join(named)}" if named else ""


def _tail(data: dict) -> str:
    until = data.get("tail_until")
    return f"; a matching payment until {_day(until)} still wins it." if until else "."


def _by(data: dict) -> str:
    who = data.get("by") or data.get("who") or ""
    return f" by {person(who)}" if who else ""


def _work(data: dict) -> str:
    return f"step {data['step']}" if data.get("step") else "the job"


def _kept(data: dict) -> str:
    """How a date was kept: marked done by someone, or by the step or rule that kept it."""
    who = data.get("by") or ""
    if who.startswith("marked done by "):
        return f" (marked done by {person(who.removeprefix('marked done by '))})"
    return f" by {person(who)}" if who else ""


SENTENCES: dict[str, Callable[[dict], str]] = {
    "job.opened": lambda d: f"The {d.get('service')} job for {d.get('period') or 'no period'} "
                            f"was opened{_by(d)}.",
    "job.ended": lambda d: "The job ended.",
    "job.cancelled": lambda d: "The job was cancelled.",
    "clock.rolled": lambda d: f"The {_what(d)} rolled from {d.get('from')} to {d.get('to')}"
                              f" ({'; '.join(d.get('why') or []) or 'a closed day'}).",
    "clock.moved": lambda d: f"The {_what(d)} moved from {d.get('from')} to {d.get('to')}"
                             + (f" by notice {d['notice']}" if d.get("notice")
                                else _by(d)) + ".",
    "clock.notice": lambda d: f"Notice: the {_what(d)} is {d.get('due')} "
                              f"({d.get('rung')}).",
    "clock.escalated": lambda d: f"Escalated: the {_what(d)} is {d.get('due')} "
                                 f"({d.get('rung')}).",
    "clock.acknowledged": lambda d: f"The {_what(d)} was acknowledged{_by(d)}.",
    "clock.assigned": lambda d: f"The {_what(d)} was assigned to {d.get('to')}{_by(d)}.",
    "clock.chosen": lambda d: f"'{d.get('choice')}' was chosen for the {_what(d)}{_by(d)}.",
    "clock.satisfied": lambda d: f"The {_what(d)} was kept"
                                 + (" late" if d.get("late") else "") + _kept(d) + ".",
    "clock.lapsed": lambda d: f"The {_what(d)} {d.get('due')} passed unkept"
                              + (f"; the choices: {', '.join(d['choices'])}"
                                 if d.get("choices") else "") + ".",
    "clock.no_date": lambda d: f"The {_what(d)} could not be set: {d.get('why')}.",
    "step.committed": lambda d: f"Step '{d.get('step')}' was taken"
                                + (f" for {', '.join(d['items'])}" if d.get("items") else "")
                                + _by(d) + ".",
    "step.refused": lambda d: f"Step '{d.get('step')}' was refused ({d.get('code')}): "
                              f"{d.get('reason')}.",
    "job.lapsed": lambda d: "The job lapsed: a party's link expired twice without an answer"
                            + (f"; the acts already done ({', '.join(d['acts_committed'])}) "
                               "are charged and the hold returns"
                               if d.get("acts_committed") else "; the hold returns") + ".",
    "deadline.at_risk": lambda d: f"The deadline on {_work(d)} is at risk: late from "
                                  f"{d.get('ends')}.",
    "deadline.late": lambda d: f"The deadline on {_work(d)} passed with the work not done"
                               + (f"; {d['late_price']} comes off the charge"
                                  if d.get("late_price") else "") + ".",
    "deadline.met": lambda d: f"The deadline on {_work(d)} was met"
                              + ("" if d.get("on_time") else ", late") + ".",
    "deadline.moved": lambda d: f"The job's deadline followed {d.get('follows')}: now "
                                f"{d.get('to')}.",
    "ask.opened": lambda d: f"{d.get('party')} was asked by a link"
                            + (f" for {d['step']}" if d.get("step") else " to give the grant "
                               "again") + f", working until {d.get('expires')}.",
    "ask.expired": lambda d: f"A party's link expired once and works again until "
                             f"{d.get('opens_until')}.",
    "ask.answered": lambda d: "A party's link was answered" + _by(d) + ".",
    "grant.ended": lambda d: f"The grant ended at {d.get('ended')}: steps that need it wait "
                             "until the party gives it again.",
    "grant.given": lambda d: "The grant was given" + _by(d) + f", until {d.get('until')}.",
    "task.taken": lambda d: f"Task {d.get('task')} was taken until {d.get('until')}.",
    "task.opened_again": lambda d: f"Task {d.get('task')} is open again ({d.get('why')}).",
    "task.done": lambda d: f"Task {d.get('task')} was done.",
    "task.handed_over": lambda d: f"Task {d.get('task')} was handed over to {d.get('to')}"
                                  + _by(d) + ".",
    "signal.raised": lambda d: f"Nothing happened for {d.get('silent')}: signal "
                               f"'{d.get('signal')}' was raised, proposing {d.get('goto')}.",
    "member.withdrew": lambda d: f"Member {d.get('member')} withdrew; their dates and tasks "
                                 f"passed to {d.get('successor')}.",
    "cycle.renewed": lambda d: f"{d.get('subscription')} renewed: cycle {d.get('cycle')}, "
                               f"{d.get('charge')}.",
    "schedule.minted": lambda d: f"Schedule {d.get('schedule')} minted {d.get('service')} for "
                                 f"{d.get('period')}.",
    "schedule.skipped": lambda d: f"Schedule {d.get('schedule')} minted nothing for "
                                  f"{d.get('period')}: {d.get('why')}.",
    "renewal.unpaid": lambda d: f"The renewal of {d.get('subscription')} (cycle "
                                f"{d.get('cycle')}) is unpaid, {d.get('owed')} owed; looked at "
                                f"again {d.get('next_try')}.",
    "subscription.frozen": lambda d: f"{d.get('subscription')} is frozen: cycle "
                                     f"{d.get('cycle')} is unpaid after dunning, "
                                     f"{d.get('owed')} owed; mints are held.",
    "subscription.paid": lambda d: f"A payment of {_money(d, 'amount', amount_text)} was "
                                   f"recorded on {d.get('subscription')}" + _by(d) + ".",
    "subscription.unfrozen": lambda d: f"{d.get('subscription')} is paid up: its allowances "
                                       "are back and its held mints released.",
    "charge.released": lambda d: f"The charge was released: {_money(d, 'amount')}"
                                 + (f", {_money(d, 'off')} off for lateness" if d.get("off")
                                    else "") + ".",
    "charge.returned": lambda d: f"The charge's hold went back: {d.get('why')}.",
    "acts.charged": lambda d: f"The acts already taken were charged: "
                              f"{', '.join(d.get('acts') or {})}, {_money(d, 'amount')}.",
    "step.rejected": lambda d: f"The filing of {d.get('step')} was rejected ({d.get('code')}"
                               + _items(d) + f"); resubmitted by {_day(d.get('closes'))} "
                               f"it keeps its first filing time, "
                               f"{_day(d.get('first_filed'))}" + _by(d) + ".",
    "step.repaired": lambda d: f"The filing of {d.get('step')} was repaired in its window and "
                               "keeps its first filing time.",
    "repair.lapsed": lambda d: f"The repair window of {d.get('step')} closed unrepaired: the "
                               "first filing time is lost.",
    "outcome.opened": lambda d: f"The outcome {d.get('outcome')} waits for a matching payment "
                                f"until {_day(d.get('due'))}.",
    "outcome.collected": lambda d: f"Invoice {d.get('invoice')} was collected: "
                                   f"{_money(d, 'amount', amount_text)} by {d.get('method')}; "
                                   f"{_money(d, 'charge', amount_text)} share and "
                                   f"{_money(d, 'pay', amount_text)} pay held until "
                                   f"{_day(d.get('closes'))}"
                                   + (", and it won the outcome" if d.get("won") else "")
                                   + _by(d) + ".",
    "outcome.final": lambda d: f"Invoice {d.get('invoice')} is final: its share is earned"
                               + (f" and its pay is {d.get('member')}'s" if d.get("member")
                                  else "") + ".",
    "outcome.reversed": lambda d: f"Invoice {d.get('invoice')} was reversed ({d.get('why')}): "
                                  "its share and pay went back" + _by(d) + ".",
    "outcome.lapsed": lambda d: f"The outcome {d.get('outcome')} lapsed: no payment matched it "
                                f"by {_day(d.get('due'))}; nothing is charged" + _tail(d),
    "outcome.lost": lambda d: f"The outcome {d.get('outcome')} was recorded lost "
                              f"({d.get('why')})" + _by(d) + _tail(d),
    "outcome.tail_ended": lambda d: f"The tail of {d.get('outcome')} ended: it stays "
                                    f"{d.get('state')}.",
    "calendar.postponed": lambda d: f"Notice {d.get('notice')} postponed dates from "
                                    f"{d.get('from')} through {d.get('through')} to "
                                    f"{d.get('to')}.",
}


def say(record: Record) -> str | None:
    """The record as a sentence, or None for kinds a person need not read."""
    sentence = SENTENCES.get(record.kind)
    if sentence is None:
        return None
    try:
        return sentence(record.data if isinstance(record.data, dict) else {})
    except (KeyError, TypeError):  # an older record of another shape: still on the page
        return f"{record.kind}."


def history(subject: Subject, *, limit: int = 50, before: datetime | None = None) -> list[Said]:
    """The subject's record, newest first, at most `limit` sentences (one query)."""
    records = Record.objects.filter(brand_id=subject.brand_id, subject=subject.pk,
                                    kind__in=list(SENTENCES)).order_by("-instant", "-id")
    if before is not None:
        records = records.filter(instant__lt=before)
    said = []
    for record in records[:limit]:
        text = say(record)
        if text is not None:
            said.append(Said(record.instant, record.kind, text, record.test_clock_id))
    return said
