"""Ticking in a long-running process: `manage.py tick --loop` and the demo's server."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import timedelta

from django.db import close_old_connections

from timekeeping.basics import wallclock
from timekeeping.schedules import engine as schedules
from timekeeping.schedules import pulses
from timekeeping.tick import phases, results, test_clocks
from timekeeping.timers import leases
from timekeeping.timers.faults import Faults

log = logging.getLogger(__name__)
PERIOD = timedelta(minutes=1)
WALK_POLL_S = 1.0  # between ticks, how often to look for advances asked for


def seconds_to_next_period(period: timedelta = PERIOD) -> float:
    """Seconds until the next whole period of UTC (the next whole minute)."""
    now = wallclock.wall_now()
    step = period.total_seconds()
    return step - (now.timestamp() % step)


def _print(line: str) -> None:
    print(line, flush=True)


def period() -> timedelta:
    """Once a minute, or as often as the shortest schedule, but at most once a second (J8)."""
    shortest = schedules.shortest_interval()
    if shortest is None:
        return PERIOD
    return timedelta(seconds=max(1, min(int(PERIOD.total_seconds()), shortest)))


def tick_forever(*, write: Callable[[str], None] = _print,
                 stop: threading.Event | None = None) -> None:
    """Tick now, then at each whole period of UTC, until `stop` is set. Between ticks, look
    for test clocks' advances every WALK_POLL_S and walk them, so an advance asked for
    starts within seconds, not at the next minute."""
    stop = stop or threading.Event()
    every = PERIOD
    while not stop.is_set():
        try:
            result = phases.run_once()
            pulses.run_replica_pulses(result.instant)
            for line in result.report():
                write(line)
            every = period()
        except Exception:  # noqa: BLE001 - a loop outlives one bad tick; the next one retries
            log.exception("tick failed")
        finally:
            close_old_connections()
        next_tick = time.monotonic() + seconds_to_next_period(every)
        while not stop.wait(max(0.0, min(WALK_POLL_S, next_tick - time.monotonic()))):
            if time.monotonic() >= next_tick - WALK_POLL_S:
                break
            walk_between(deadline=next_tick - WALK_POLL_S, write=write)


def walk_between(*, deadline: float, write: Callable[[str], None]) -> None:
    """Walk the test clocks' advances asked for since the tick, until `deadline`."""
    try:
        if not test_clocks.any_waiting():
            return
        result = results.TickResult(instant=wallclock.wall_now())
        faults = Faults(result.instant)
        result.walks = phases.walk_test_clocks(faults, deadline=deadline,
                                               holder=leases.holder_name())
        result.faults = faults.raised
        parts = result.walk_parts() + [f"FAILED {fault.phase} {fault.where}"
                                       for fault in result.faults]
        if parts:
            write("walks between ticks · " + " · ".join(parts))
    except Exception:  # noqa: BLE001 - as a tick: the next look retries
        log.exception("walking test clocks failed")
    finally:
        close_old_connections()


def start_in_background() -> threading.Event:
    """Tick in a daemon thread of this process (the demo's server)."""
    stop = threading.Event()
    thread = threading.Thread(target=tick_forever, kwargs={"stop": stop}, daemon=True,
                              name="keeping-time-tick")
    thread.start()
    return stop

