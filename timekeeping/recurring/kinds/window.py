"""The window kind (place 7, S21): an acceptance window closes and the job's charge is
released (timekeeping.recurring.charges); an outcome's due, a collection's window or its tail
ends (timekeeping.recurring.outcomes); a repair window closes (timekeeping.jobs.repairs)."""

from __future__ import annotations

from timekeeping.jobs import repairs
from timekeeping.models import Timer
from timekeeping.recurring import charges, outcomes
from timekeeping.timers.firing import Firing

SAID = {"due": "the outcome's wait ends", "tail": "the outcome's tail ends",
        "repair": "the repair window closes"}


def describe(timer: Timer) -> str:
    what = timer.payload.get("window")
    if what == "collected":
        return f"the window of invoice {timer.payload.get('invoice')} closes"
    return SAID.get(what, "the acceptance window closes")


def fire(timer: Timer, firing: Firing) -> str:
    if "outcome" in timer.payload:
        return outcomes.fire(timer, firing.instant)
    if timer.payload.get("window") == "repair":
        return repairs.fire(timer, firing.instant)
    return charges.fire(timer.payload["job"], firing.instant)
