"""The signal kind (place 5, with the deadlines): a quiet job (S11); see
timekeeping.jobs.signals."""

from __future__ import annotations

from timekeeping.jobs import signals
from timekeeping.models import Timer
from timekeeping.timers.firing import Firing


def describe(timer: Timer) -> str:
    return (f"{timer.payload.get('signal')} · silent {timer.payload.get('silent')}, then "
            f"{timer.payload.get('goto')}")


def fire(timer: Timer, firing: Firing) -> str:
    return signals.fire(timer.owner_id, timer.payload["signal"], firing.instant)
