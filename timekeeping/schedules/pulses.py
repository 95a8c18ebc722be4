"""Pulses (SPEC T3, T7): work that finds what is due by its state, on a cadence.

    from timekeeping.schedules.pulses import pulse, sweep

    @pulse("shop.expire_orders", every="5m")        # one process at a time: a schedule
    def expire_orders():
        due = Order.objects.filter(status="pending", deadline__lt=clock.wall_now())
        return sweep(due, expire, limit=100)        # expire() re-reads the order and decides

    @pulse("cache.refresh", every="1m", scope="replica")   # in every process that ticks

A sweep selects by state (never by "what expired in the last five minutes"), takes a bounded
step (100 rows unless told), and calls the transition for each row in its own transaction:
the transition decides. If one raises, the sweep stops there and what went before stays done;
the next pulse selects what is still due. A pulse is not called again while it runs: a
schedule's lease does that across processes, a lock within one for `scope="replica"`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import QuerySet

from timekeeping.schedules.declare import action, parse_every, schedule

log = logging.getLogger(__name__)
DEFAULT_LIMIT = 100


def sweep(queryset: QuerySet, transition: Callable[[object], object], *,
          limit: int = DEFAULT_LIMIT) -> int:
    """Call `transition` on at most `limit` rows of `queryset`, each in its own transaction.
    Returns how many were called."""
    done = 0
    for row in list(queryset[:limit]):
        with transaction.atomic():
            transition(row)
        done += 1
    return done


@dataclass
class ReplicaPulse:
    name: str
    every: timedelta
    function: Callable[[], object]
    next_due: datetime | None = None
    running: threading.Lock = field(default_factory=threading.Lock)


_replica: dict[str, ReplicaPulse] = {}


def pulse(name: str, *, every: str, scope: str = "one"):
    """Run the decorated function on a cadence: once across all processes (`scope="one"`,
    a schedule with its lease and records), or in every process (`scope="replica"`)."""
    seconds = parse_every(every)
    if seconds is None:
        raise ValueError(f"every: {every!r} is not a whole number above zero of s, m, h or d, "
                         "at most 366 days")
    if scope not in ("one", "replica"):
        raise ValueError(f"scope: {scope!r} is 'one' or 'replica'")

    def decorator(function: Callable[[], object]):
        if scope == "one":
            return schedule(every=every)(action(name)(function))
        _replica[name] = ReplicaPulse(name, timedelta(seconds=seconds), function)
        return function

    return decorator


def run_replica_pulses(now: datetime) -> list[str]:
    """This process's replica pulses that are due: each skipped while it still runs."""
    ran = []
    for item in _replica.values():
        if item.next_due is None:
            item.next_due = now + item.every
            continue
        if now < item.next_due or not item.running.acquire(blocking=False):
            continue
        try:
            item.next_due = now + item.every
            item.function()
            ran.append(item.name)
        except Exception:  # noqa: BLE001 - a replica pulse is retried at its next beat
            log.exception("pulse %s failed", item.name)
        finally:
            item.running.release()
    return ran
