"""A subject's record as people read it (S25): what happened, in sentences, newest first.

    history(subject, limit=50, before=None)  -> list[Said]

Each record kind has a sentence; kinds that say nothing to a person (a timer's own bookkeeping)
are left out. The record stays the source: a page shows what it says, never anything else.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from timekeeping.basics import refusals, shown
from timekeeping.clocks import emails, exposure, lapses
from timekeeping.models import Member, Record, Subject, Subscription


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
_MEMBER = re.compile(r"member \S+ \((?P<name>.+)\)")
_SCHEDULE = re.compile(r"schedule (?P<name>\S+) of (?P<subscription>\S+)")
_RUNG = re.compile(r"rung \S+")
_EVENT = re.compile(r"event (?P<name>[^\s.]+)\S* \((?P<ref>.+)\)")


def person(who: str) -> str:
    """Who acted, as a reader names them: a person by name, an API key as a program by its name.

    Records keep the exact actor ("user 7 (ana)", "key key_… (billing)") for audit; the page
    says "ana" or "a program (billing)".
    """
    if found := _PERSON.fullmatch(who) or _MEMBER.fullmatch(who):
        return found["name"]
    if found := _KEY.fullmatch(who):
        return f"a program ({found['name']})"
    if _RUNG.fullmatch(who):
        return "an automatic reminder"
    if _SCHEDULE.fullmatch(who):
        return "the plan's schedule"
    if found := _EVENT.fullmatch(who):
        return f"an incoming {found['name']} ({found['ref']})"
    return who


def _money(data: dict, field: str) -> str:
    """An amount on the record, in its currency, as people read it."""
    amount, currency = data.get(field), data.get("currency")
    if not isinstance(amount, int) or not isinstance(currency, str):
        return str(amount)
    return shown.money(amount, currency)


_LEDGER_TEXT = re.compile(r"(?P<amount>-?[\d,]+(?:\.\d+)?) (?P<currency>[A-Z]{3})")


def _charge_text(text: object) -> str:
    """A charge an older record kept as ledger text ("2,400.00 USD owed"), in the one money
    format ("$2,400.00 owed")."""
    def money(found: re.Match) -> str:
        minor = exposure.minor_units(found["amount"].lstrip("-"), found["currency"])
        if minor is None:
            return found[0]
        return shown.money(-minor if found["amount"].startswith("-") else minor,
                           found["currency"])
    return _LEDGER_TEXT.sub(money, str(text))


def _member(data: dict) -> str:
    """A member on the record by name (`history` names them as `member_name`), else as kept."""
    return data.get("member_name") or str(data.get("member"))


def _told(data: dict) -> str:
    """Who heard of a lapse (S23): " Told: ana (the owner, by email).", or nothing."""
    told = lapses.told_text(data.get("told"))
    return f" {told}." if told else ""


def _plan(data: dict) -> str:
    """A subscription as the sentences name it: its plan ("tax-plan plan"), as `history`
    names it on the record's data (`plan`), or "plan"."""
    return f"{data['plan']} plan" if data.get("plan") else "plan"


def _items(data: dict) -> str:
    named = [item for item in data.get("items") or [] if item]
    return f": {', '.join(named)}" if named else ""


def _tail(data: dict) -> str:
    until = data.get("tail_until")
    return f"; a matching payment until {shown.day_of(until)} still wins it." if until else "."


UNDONE = {"clock.satisfied": "Marking it done", "clock.acknowledged": "The acknowledgement",
          "clock.chosen": "The choice", "clock.assigned": "The assignment"}


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
    return f" ('{who}' recorded)" if who else ""


def _keeper(data: dict) -> str:
    """Who keeps a date between jobs now (S16), from its `clock.kept` record."""
    title = data.get("title") or _what(data)
    if data.get("keeper") != "steward":
        return f"The date '{title}' stays with its owner now that its job is over: no one " \
               "keeps it for the client between jobs."
    who = _member(data) if data.get("member") else "the brand's owner"
    return f"The date '{title}' passed to {shown.service(str(data.get('service', '')))}: " \
           f"{who} keeps it now."


def _seconds(data: dict, field: str) -> str:
    """A length of time the record keeps in seconds, as people say it ("40 minutes")."""
    value = data.get(field)
    return shown.span(timedelta(seconds=value)) if isinstance(value, int | float) else "a while"


def _row_moved(data: dict) -> str:
    """A row of a brand's table that changed state (A7): by a timed move, or by whom."""
    how = data.get("by")
    by = (" by a timed move" if how == "timed move"
          else f" by {person(data['who'])}" if data.get("who") else "")
    return (f"Row {data.get('row')} of {data.get('table')} moved from {data.get('from')} to "
            f"{data.get('to')}{by}.")


def _row_refused(data: dict) -> str:
    """A timed move that was refused: the row waits an hour and is tried again."""
    said = refusals.set_aside(str(data.get("table")), data.get("row"), "",
                              str(data.get("code") or ""))
    return f"{said.rstrip('.')}; it is tried again in an hour."


def _late(data: dict) -> str:
    count = data.get("timers") or 1
    what = "A scheduled action" if count == 1 else f"{count} scheduled actions"
    return (f"{what} ran late, the latest by {_seconds(data, 'latest_by_s')}: no tick ran "
            f"while {'it was' if count == 1 else 'they were'} due.")


def _counted(data: dict, field: str, one: str, many: str) -> str:
    count = data.get(field) or 0
    return f"{count} {one if count == 1 else many}" if count else ""


def _erased(data: dict) -> str:
    """An erasure (`timekeeping.subjects.erasing`): what went, and what stayed."""
    ended = [said for said in (
        _counted(data, "jobs", "open job was cancelled", "open jobs were cancelled"),
        _counted(data, "plans", "plan ended", "plans ended"),
        _counted(data, "emails", "unsent email was dropped", "unsent emails were dropped"),
        _counted(data, "customers", "customer lost access", "customers lost access"))
        if said]
    return ("The subject's personal data was erased" + _by(data) + ": its name, contact and "
            "facts are gone" + (f"; {', '.join(ended)}" if ended else "") + ". Its dates and "
            "history stay, without personal data.")


def _between(data: dict) -> str:
    """ " on Sun 14 Mar 2027", or " from Sat 13 Mar 2027 to Sun 14 Mar 2027"."""
    since, until = shown.day_of(data.get("since")), shown.day_of(data.get("until"))
    return f" on {since}" if since == until else f" from {since} to {until}"


def _reason(data: dict) -> str:
    reason = str(data.get("reason") or "").strip().rstrip(".")
    return f": {reason}." if reason else "."


# The events no page told before webhooks carried them (issue 30): each says, in the reader's
# words, what happened; an event's `summary` is its record's sentence.
EVENT_SENTENCES: dict[str, Callable[[dict], str]] = {
    "job.accepted": lambda d: "The work was accepted: it was not sent back before the time "
                              "for that closed, so its charge is earned.",
    "ask.lapsed": lambda d: "A party's link expired a second time without an answer, so the "
                            "work stopped.",
    "deadline.held": lambda d: f"The deadline on {_work(d)} is on hold while an answer is "
                               f"awaited, with {d.get('work_left')} of work time left.",
    "deadline.released": lambda d: f"The deadline on {_work(d)} runs again, with "
                                   f"{d.get('work_left')} of work time left: the work is due "
                                   f"{shown.day_of(d.get('ends'))}.",
    "subscription.ended": lambda d: (f"The {_plan(d)} ended at once: {d['why']}."
                                     if d.get("why") else
                                     f"The {_plan(d)} ended after cycle {d.get('after_cycle')}, "
                                     "as it was cancelled."),
    "subject.erased": _erased,
    "schedule.failed": lambda d: f"The schedule '{d.get('schedule')}' did not run"
                                 + _reason(d),
    "schedule.recovered": lambda d: f"The schedule '{d.get('schedule')}' ran again and worked, "
                                    "after failing before.",
    "row.moved": _row_moved,
    "row.set_aside": _row_refused,
    "timer.late": _late,
    "timer.parked": lambda d: f"A scheduled {shown.kind(str(d.get('timer_kind', '')))} failed "
                              f"{d.get('attempts')} times in a row, so it was parked: it is "
                              "not tried again until someone retries it or gives it up.",
    "connection.parked": lambda d: f"The timed moves of the tables failed {d.get('attempts')} "
                                   "times in a row, so they were parked: no row moves on its "
                                   "own until someone retries them or gives them up.",
    "schedule.parked": lambda d: f"The schedule '{d.get('schedule')}' failed "
                                 f"{d.get('attempts')} time{'' if d.get('attempts') == 1 else 's'}"
                                 " in a row, so it was parked: it does not run until someone "
                                 "retries it or gives it up.",
    "tick.stopped": lambda d: f"Nothing ran for {_seconds(d, 'stopped_s')}{_between(d)}: the "
                              "tick had stopped. It ran again and caught up.",
}


SENTENCES: dict[str, Callable[[dict], str]] = {
    "job.opened": lambda d: f"The {shown.service(str(d.get('service', '')))} job"
                            + (f" for {d['period']}" if d.get("period") else "")
                            + f" was opened{_by(d)}.",
    "job.ended": lambda d: "The job ended.",
    "job.cancelled": lambda d: "The job was cancelled.",
    "clock.rolled": lambda d: f"The {_what(d)} moved from {shown.day_of(d.get('from'))} to "
                              f"{shown.day_of(d.get('to'))}"
                              f" ({'; '.join(d.get('why') or []) or 'a closed day'}).",
    "clock.moved": lambda d: f"The {_what(d)} moved from {shown.day_of(d.get('from'))} to "
                             f"{shown.day_of(d.get('to'))}"
                             + (f" by notice {d['notice']}" if d.get("notice")
                                else _by(d)) + ".",
    "clock.notice": lambda d: f"Reminder sent: the {_what(d)} is due {shown.day_of(d.get('due'))}.",
    "clock.escalated": lambda d: f"Reminder passed up the line: the {_what(d)} is due "
                                 f"{shown.day_of(d.get('due'))}.",
    "clock.acknowledged": lambda d: f"The {_what(d)} was acknowledged{_by(d)}.",
    "clock.assigned": lambda d: f"The {_what(d)} was assigned to {d.get('to')}{_by(d)}.",
    "clock.undone": lambda d: f"{UNDONE.get(d.get('undid'), 'An action')} on the {_what(d)} "
                              f"was undone{_by(d)}.",
    "clock.chosen": lambda d: f"'{d.get('choice')}' was chosen for the {_what(d)}{_by(d)}.",
    "clock.satisfied": lambda d: f"The {_what(d)} was done"
                                 + (" late" if d.get("late") else "") + _kept(d) + ".",
    "clock.lapsed": lambda d: f"The {_what(d)} of {shown.day_of(d.get('due'))} was missed"
                              + (f"; the choices: {', '.join(d['choices'])}"
                                 if d.get("choices") else "") + ".",
    "clock.lapse_withdrawn": lambda d: f"The miss of the {_what(d)} on "
                                       f"{shown.day_of(d.get('due'))} was withdrawn: "
                                       f"{emails.cited(str(d.get('notice')))} moved it to "
                                       f"{shown.day_of(d.get('to'))}, and it is open again.",
    "clock.kept": _keeper,
    "clock.no_date": lambda d: f"The {_what(d)} could not be set: {d.get('why')}.",
    "step.committed": lambda d: f"'{d.get('step')}' was recorded"
                                + (f" for {', '.join(d['items'])}" if d.get("items") else "")
                                + _by(d) + ".",
    "step.refused": lambda d: f"'{d.get('step')}' could not be recorded: {d.get('reason')}.",
    "job.lapsed": lambda d: "The work was missed: a link expired twice without an answer"
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
    "deadline.moved": lambda d: f"The deadline moved with the {d.get('follows')} date: now "
                                f"{shown.day_of(d.get('to'))}.",
    "ask.opened": lambda d: f"{d.get('party')} was asked by a link"
                            + (f" for {d['step']}" if d.get("step") else " to give the grant "
                               "again") + f", working until {shown.day_of(d.get('expires'))}.",
    "ask.expired": lambda d: f"A party's link expired once and works again until "
                             f"{shown.day_of(d.get('opens_until'))}.",
    "ask.answered": lambda d: "A party's link was answered" + _by(d) + ".",
    "grant.ended": lambda d: f"The grant ended on {shown.day_of(d.get('ended'))}: steps that "
                             "need it wait until the party gives it again.",
    "grant.given": lambda d: "The grant was given" + _by(d)
                             + f", until {shown.day_of(d.get('until'))}.",
    "task.taken": lambda d: f"Task {d.get('task')} was taken until {shown.day_of(d.get('until'))}.",
    "task.opened_again": lambda d: f"Task {d.get('task')} is open again ({d.get('why')}).",
    "task.done": lambda d: f"Task {d.get('task')} was done.",
    "task.handed_over": lambda d: f"Task {d.get('task')} was handed over to {d.get('to')}"
                                  + _by(d) + ".",
    "signal.raised": lambda d: f"Nothing happened for {d.get('silent')}, so "
                               f"'{d.get('signal')}' was raised.",
    "member.withdrew": lambda d: f"{_member(d)} withdrew; their dates and tasks "
                                 + (f"passed to {d.get('successor_name') or d['successor']}."
                                    if d.get("successor") else "went back to the practice."),
    "subject.of_record_lapsed": lambda d: f"{_member(d)} left with no one named to take over: "
                                          "what they answered for is back with the practice."
                                          + _told(d),
    "cycle.renewed": lambda d: f"The {_plan(d)} renewed for cycle {d.get('cycle')}: "
                               + (f"{_money(d, 'amount')} owed." if d.get("amount")
                                  else f"{_charge_text(d.get('charge'))}."),
    "schedule.minted": lambda d: f"The {d.get('period')} {d.get('service')} opened on its "
                                 "schedule.",
    "schedule.mint_refused": lambda d: f"The {d.get('period')} "
                                       f"{shown.service(str(d.get('service')))} was not opened "
                                       f"on its schedule: {d.get('said')}." + _told(d),
    "schedule.catch_up_skipped": lambda d: f"Nothing opened for "
                                           f"{', '.join(d.get('periods') or [])} "
                                           f"({shown.service(str(d.get('service')))}): no tick "
                                           "ran while they were due, and the schedule skips "
                                           "them." + _told(d),
    "schedule.skipped": lambda d: f"Nothing opened for {d.get('period')} on the schedule: "
                                  f"{d.get('why')}.",
    "renewal.unpaid": lambda d: f"The renewal of the {_plan(d)} (cycle {d.get('cycle')}) is "
                                f"unpaid, {d.get('owed')} owed; we look again "
                                f"{shown.day_of(d.get('next_try'))}.",
    "subscription.frozen": lambda d: f"The {_plan(d)} is on hold: cycle {d.get('cycle')} is "
                                     f"still unpaid after the reminders, {d.get('owed')} owed; "
                                     "new work waits until it is paid.",
    "subscription.paid": lambda d: f"A payment of {_money(d, 'amount')} was recorded on the "
                                   f"{_plan(d)}" + _by(d) + ".",
    "subscription.cancelling": lambda d: f"The {_plan(d)} was cancelled at its cycle's "
                                         f"end{_by(d)}: it stops on "
                                         f"{shown.day_of(d.get('ends'))}.",
    "subscription.resumed": lambda d: f"The {_plan(d)} was resumed{_by(d)}: it renews on "
                                      f"{shown.day_of(d.get('renews'))}.",
    "subscription.unfrozen": lambda d: f"The {_plan(d)} is paid up: its allowances are back "
                                       "and the work it held has started.",
    "charge.released": lambda d: f"The charge was released: {_money(d, 'amount')}"
                                 + (f", {_money(d, 'off')} off for lateness" if d.get("off")
                                    else "") + ".",
    "charge.returned": lambda d: f"The charge's hold went back: {d.get('why')}.",
    "acts.charged": lambda d: f"The acts already taken were charged: "
                              f"{', '.join(d.get('acts') or {})}, {_money(d, 'amount')}.",
    "step.rejected": lambda d: f"The filing of {d.get('step')} was rejected ({d.get('code')}"
                               + _items(d) + f"); resubmitted by {shown.day_of(d.get('closes'))} "
                               f"it keeps its first filing time, "
                               f"{shown.day_of(d.get('first_filed'))}" + _by(d) + ".",
    "step.repaired": lambda d: f"The filing of {d.get('step')} was repaired in its window and "
                               "keeps its first filing time.",
    "repair.lapsed": lambda d: f"The repair window of {d.get('step')} closed unrepaired: the "
                               "first filing time is lost.",
    "outcome.opened": lambda d: f"The outcome waits for a matching payment "
                                f"until {shown.day_of(d.get('due'))}.",
    "outcome.collected": lambda d: f"Invoice {d.get('invoice')} was collected: "
                                   f"{_money(d, 'amount')} by {d.get('method')}; "
                                   f"{_money(d, 'charge')} share and "
                                   f"{_money(d, 'pay')} pay held until "
                                   f"{shown.day_of(d.get('closes'))}"
                                   + (", and it won the outcome" if d.get("won") else "")
                                   + _by(d) + ".",
    "outcome.final": lambda d: f"Invoice {d.get('invoice')} is final: its share is earned"
                               + (f" and its pay is {_member(d)}'s" if d.get("member")
                                  else "") + ".",
    "outcome.reversed": lambda d: f"Invoice {d.get('invoice')} was reversed ({d.get('why')}): "
                                  "its share and pay went back" + _by(d) + ".",
    "outcome.lapsed": lambda d: f"The outcome lapsed: no payment matched it "
                                f"by {shown.day_of(d.get('due'))}; nothing is charged" + _tail(d),
    "outcome.lost": lambda d: f"The outcome was recorded lost "
                              f"({d.get('why')})" + _by(d) + _tail(d),
    "outcome.tail_ended": lambda d: f"The outcome's tail ended: it stays "
                                    f"{d.get('state')}.",
    "guarantee.credited": lambda d: f"Penalty notice {d.get('notice')} ({_money(d, 'penalty')})"
                                    f" on the {_what(d)}. "
                                    + (d.get("why") or f"{_money(d, 'credited')} was credited."),
    "calendar.postponed": lambda d: f"Notice {d.get('notice')} postponed dates from "
                                    f"{d.get('from')} through {d.get('through')} to "
                                    f"{d.get('to')}.",
    # A manifest's automations (timekeeping.automations): the brand's own rules at work.
    "automation.ran": lambda d: f"Heard by rule {d['rule']}: "
                                f"{str(d.get('did', '')).rstrip('.')}.",
    "automation.stopped": lambda d: f"Rule {d['rule']} heard it and did not run: "
                                    f"{d.get('depth', 0) - 1} rules in a row had already set "
                                    "each other off.",
    **EVENT_SENTENCES,
}


def _named(subject: Subject, page: list[Record]) -> list[Record]:
    """The page's records with the plans and members they name by id named as people read
    them (`plan`, `member_name` on the data, in memory only): a query for each, when any."""
    held = [record for record in page if isinstance(record.data, dict)]
    subscriptions = {record.data.get("subscription") for record in held} - {None}
    members = {record.data.get("member") for record in held} - {None}
    plans = dict(Subscription.objects.filter(brand_id=subject.brand_id, pk__in=subscriptions)
                 .values_list("pk", "service")) if subscriptions else {}
    people = {member.pk: member.name for member in Member.objects.filter(
        brand_id=subject.brand_id, pk__in=members).select_related("user")} if members else {}
    for record in held:
        if record.data.get("subscription") in plans:
            record.data = {**record.data, "plan": plans[record.data["subscription"]]}
        if record.data.get("member") in people:
            record.data = {**record.data, "member_name": people[record.data["member"]]}
    return page


def say(record: Record) -> str | None:
    """The record as a sentence, or None for kinds a person need not read."""
    sentence = SENTENCES.get(record.kind)
    if sentence is None:
        return None
    try:
        return sentence(record.data if isinstance(record.data, dict) else {})
    except (KeyError, TypeError):  # an older record of another shape: still on the page
        return f"{record.kind}."


# The brand's own lapses (S23): what its plan or its people did not open, for the brand to
# settle or tell; and what its own rules did. The customer's portal does not show them.
BRANDS_OWN = ("schedule.mint_refused", "schedule.catch_up_skipped", "automation.ran",
              "automation.stopped")


def history(subject: Subject, *, limit: int = 50, before: datetime | None = None,
            customer: bool = False) -> list[Said]:
    """The subject's record, newest first, at most `limit` sentences (one query, and one each
    for the plans and members it names); for the `customer`, without the brand's own lapses."""
    kinds = [kind for kind in SENTENCES if not (customer and kind in BRANDS_OWN)]
    records = Record.objects.filter(brand_id=subject.brand_id, subject=subject.pk,
                                    kind__in=kinds).order_by("-instant", "-id")
    if before is not None:
        records = records.filter(instant__lt=before)
    said = []
    page = list(records[:limit])
    for record in _named(subject, page):
        text = say(record)
        if text is not None:
            said.append(Said(record.instant, record.kind, text, record.test_clock_id))
    return said
