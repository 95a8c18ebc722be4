"""The timer kinds: each declares its place in the tick and how it fires (SPEC S4).

A kind's handler receives the timer (locked, still armed) and a `Firing`, through which it
arms further timers, writes records and queues deliveries: all in the firing's transaction.
It returns a short sentence saying what it did, for the trace. It never changes its owner
directly; from the clocks issue on, it proposes steps to the gate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from timekeeping.models import Timer
    from timekeeping.timers.firing import Firing


class Place(IntEnum):
    """Where a kind fires among timers owed at one instant: a cycle renews before its
    schedule mints, and money moves last."""

    CYCLE = 1
    SCHEDULE = 2
    ASK = 3
    TASK = 4
    DEADLINE = 5
    CLOCK = 6
    WINDOW = 7
    MONEY = 8


Handler = Callable[["Timer", "Firing"], str]


# Reads at once what a batch's timers of the kind will need (`Firing.prepare`), keeping it on
# the batch (`Firing.keep_read`) for the handler to take; a handler that finds nothing kept
# reads for itself.
Prepare = Callable[[list["Timer"], "Firing"], None]

# Whether a timer's handler only tells (a record, an email) and arms later timers with the
# batch (`arming.arm_later`), reading and ending no timer: the timers armed with the batch so
# far need not be written before it runs (`Firing.fire`).
Quiet = Callable[["Timer"], bool]


@dataclass(frozen=True)
class Kind:
    name: str
    place: Place
    fire: Handler
    describe: Callable[[Timer], str]
    prepare: Prepare | None = None
    quiet: Quiet | None = None
    # Its handler reads and ends no timers but its own timer's owner's (and those of owners
    # it makes): the timers other owners armed with the batch need not be written first.
    keeps_to_owner: bool = False


_kinds: dict[str, Kind] = {}


def register(name: str, *, place: Place, describe: Callable[[Timer], str],
             prepare: Prepare | None = None, quiet: Quiet | None = None,
             keeps_to_owner: bool = False):
    """Register a kind's fire handler: `register("delay", place=Place.TASK, describe=…)(fire)`.
    Each package's `register()` registers its own kinds (called by `apps.ready`); this module
    knows no kind."""

    def decorator(fire: Handler) -> Handler:
        _kinds[name] = Kind(name=name, place=place, fire=fire, describe=describe,
                            prepare=prepare, quiet=quiet, keeps_to_owner=keeps_to_owner)
        return fire

    return decorator


def get(name: str) -> Kind:
    try:
        return _kinds[name]
    except KeyError:
        raise LookupError(f"no timer kind named {name!r} is registered") from None

