"""Refusals in the reader's words (issue 27, ../shared/WORDS.md): what was refused, why in plain
words, and what would make it go through. The codes stay in the API, the records and the
page's "Details"; the console's pages and messages say these sentences.

    gate(code)                    why the gate refused a step, and what would let it through
    moved(code_text)              why a timed move was refused (a set-aside row's code)
    set_aside(row, move)          the whole sentence for a set-aside row
    manifest_where(code)          where in a manifest a problem is ("the calendar section")

Every code the console can show has an entry (tests/timekeeping/console/test_refusals.py reads
the engine's sources for them); an unknown one still reads as a sentence, never as its code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Refusal:
    why: str  # "its job is closed"
    remedy: str  # "Open a job for the period to go on."

    def said(self, refused: str) -> str:
        """"Couldn't mark it done: its job is closed. Open a job for the period to go on." """
        return f"{refused}: {self.why}. {self.remedy}"


# The gate's codes (timekeeping/gate.py and the checks kinds register with it).
GATE = {
    "job_closed": Refusal("its job is closed", "Open a job for the period to go on."),
    "step_unknown": Refusal("the service has no such step",
                            "Pick one of the service's steps, or add the step in the manifest."),
    "item_unknown": Refusal("the job has no such item",
                            "Pick one of the job's items, or order a job that covers it."),
    "date_passed": Refusal("a fixed date that rules it out has passed",
                           "Nothing moves a fixed date once it has passed; settle it by hand."),
    "needs_grant": Refusal("it needs a grant that has ended",
                           "Renew the grant, then try again."),
    "period_taken": Refusal("a job for that period is already open",
                            "Use the open job, or end it first."),
}
UNKNOWN_GATE = Refusal("a rule of the service holds it back",
                       "Open Why on the date to see which, and settle it by hand.")

# The timed-move job's codes (timekeeping/moves/rows.py, moves/job.py; docs/timed-moves.md).
MOVES = {
    "STATE_MOVE_REFUSED": Refusal("a rule of the table holds it back",
                                  "Change the row or the rule, or move it by hand."),
    "STATE_TOO_LATE": Refusal("its moment passed too long ago to move it now",
                              "Move it by hand if it should still move."),
    "PUBLIC_TOO_EARLY": Refusal("its moment has not come yet",
                                "Nothing to do: it is tried again after the hour."),
    "PUBLIC_TOO_LATE": Refusal("its moment passed too long ago",
                               "Move it by hand if it should still move."),
    "WRITE_CONFLICT": Refusal("someone changed the row at the same moment",
                              "Nothing to do: it is tried again after the hour."),
    "MOMENT_OUT_OF_RANGE": Refusal("the moment it waits for is outside the dates kept",
                                   "Correct the row's date, or move it by hand."),
}
UNKNOWN_MOVE = Refusal("the venue's database answered with an error",
                       "It is tried again after the hour; if it keeps failing, the Details "
                       "say what the database said.")
_SETTING = re.compile(r"waits for (?P<table>[\w-]+)\.(?P<column>[\w-]+) to be (?P<eq>.+)$")


def gate(code: str) -> Refusal:
    return GATE.get(code, UNKNOWN_GATE)


def moved(code_text: str) -> Refusal:
    """A set-aside row's code ("STATE_MOVE_REFUSED: the move waits for settings.auto_release
    to be True") in words; a setting it waits for is named as people name it."""
    code, _, message = code_text.partition(":")
    setting = _SETTING.search(message.strip())
    if code.strip() == "STATE_MOVE_REFUSED" and setting:
        name = setting["column"].replace("_", "-")
        if setting["eq"].strip() in ("True", "true", "1"):
            return Refusal(f"'{name}' is off", "Turn it on or move it by hand.")
        return Refusal(f"'{name}' is not {setting['eq'].strip()}",
                       "Change the setting or move it by hand.")
    return MOVES.get(code.strip(), UNKNOWN_MOVE)


def set_aside(table: str, row: int, move: str, code_text: str) -> str:
    """"Couldn't move row 1042 of orders from placed to cancelled: 'auto-release' is off. Turn
    it on or move it by hand." (`move` is the timed move's "placed → cancelled", or "".)"""
    source, _, target = move.partition(" → ")
    what = (f"Couldn't move row {row} of {table} from {source} to {target}" if target
            else f"Couldn't move row {row} of {table}")
    return moved(code_text).said(what)


# Where in a manifest a problem is, by its code's first word (timekeeping/manifests).
SECTIONS = {
    "manifest": "the manifest as a whole", "services": "the services section",
    "service": "a service", "step": "a step of a service", "clock": "a clock of a service",
    "subject": "a service's subject", "calendar": "the calendar section",
    "removes": "the list of what it removes", "deliver": "how a service is delivered",
    "deadline": "a deadline", "effect": "what a step does", "email": "an email",
    "event": "an event", "hold": "a hold", "outcome": "an outcome of a step",
    "price": "a price", "reminder": "a reminder", "scope": "what a grant covers",
    "signal": "a signal", "signals": "the signals section",
    "table": "the tables section", "column": "a column of a table",
    "states": "the states of a table", "timed": "a timed move", "moment": "a moment of a table",
    "late": "when a table's row turns late", "hours": "opening hours",
    "on": "what a table's rule follows", "setting": "a setting of a table",
    "schedule": "the schedules section", "notice": "a postponement notice",
    "automation": "a rule of the automations section",
}


def manifest_where(code: str) -> str:
    return SECTIONS.get(code.partition(".")[0], "the manifest")
