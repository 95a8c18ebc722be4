"""The grant kind (place 3, with the asks): a grant's term ends (S9); see
timekeeping.jobs.grants."""

from __future__ import annotations

from timekeeping.firing import Firing
from timekeeping.jobs import grants
from timekeeping.kinds import Place, register
from timekeeping.models import Timer


def describe(timer: Timer) -> str:
    return "the grant's term ends"


@register("grant", place=Place.ASK, describe=describe)
def fire(timer: Timer, firing: Firing) -> str:
    return grants.fire(timer.payload["grant"], firing.instant)
