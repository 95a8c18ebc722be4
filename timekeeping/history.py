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


def _by(data: dict) -> str:
    who = data.get("by") or data.get("who") or ""
    return f" by {person(who)}" if who else ""


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
    "job.lapsed": lambda d: "The job lapsed.",
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
