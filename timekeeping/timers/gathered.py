"""Writes gathered while one operation opens new work (issue 32), written together when it
ends (`timekeeping.timers.arming.gathering`).

Ordering a job opens its dates, its asks and its deadlines; each arms timers and writes
records. Their owners were made in the operation's own transaction, so no timer can be under
their keys yet and none need be looked for: the timers are gathered and inserted in one
statement at the end (inside a firing, with the batch's other orders'), and the records in one
more. This module only holds what is gathered;
`arming` (timers) and `records` (records) put into it, and `arming.gathering` writes it.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from timekeeping.models import Brand, TestClock, Timer
    from timekeeping.timers.records import Entry


@dataclass
class Gathered:
    fresh: set[str] = field(default_factory=set)  # owners made in this transaction
    timers: list[Timer] = field(default_factory=list)  # in the order they were armed
    live: dict[str, Timer] = field(default_factory=dict)  # by key: armed or held
    held: dict[str, str] = field(default_factory=dict)  # timer id: why it was armed held
    records: list[tuple[Brand, TestClock | None, datetime, Entry]] = field(
        default_factory=list)
    memo: dict = field(default_factory=dict)  # read once per operation (`in_progress.read_once`)
    # A new job's dates as its order opened them, by job and clock name: what its deadline
    # written before a clock reads (`timekeeping.jobs.deadlines.start`), not read again.
    dates: dict[str, dict[str, list]] = field(default_factory=dict)
    # What a job made in this operation holds, by (what, job): its asks, deadlines and tasks,
    # each made here too (`timekeeping.jobs.common.made_here`), so none is read back.
    made: dict[tuple[str, str], list] = field(default_factory=dict)
    # The new rows it made, in the order made, gathered for its firing batch (`made`); None
    # where they are written as they are made.
    rows: list | None = None

    def holds(self, owner_id: str) -> bool:
        """Whether timers of this owner are gathered here (it was made in this operation)."""
        return owner_id in self.fresh

    def add(self, timer: Timer, *, held_by: str = "") -> Timer:
        self.timers.append(timer)
        self.live[timer.key] = timer
        if held_by:
            self.held[timer.id] = held_by
        return timer

    def end(self, timer: Timer, *, state: str, by: str) -> None:
        """A gathered timer superseded, cancelled or held before it was written."""
        timer.state, timer.ended_by = state, by[:200]
        if state != "held":
            self.live.pop(timer.key, None)


_current: ContextVar[Gathered | None] = ContextVar("keeping_time_gathered", default=None)


def current() -> Gathered | None:
    return _current.get()


def enter(gathered: Gathered):
    return _current.set(gathered)


def leave(token) -> None:
    _current.reset(token)
