"""Ticking in a long-running process: `manage.py tick --loop` and the demo's server."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta

from django.db import close_old_connections

from timekeeping import clock, pulses, tick
from timekeeping.schedules import engine as schedules

log = logging.getLogger(__name__)
PERIOD = timedelta(minutes=1)


def seconds_to_next_period(period: timedelta = PERIOD) -> float:
    """Seconds until the next whole period of UTC (the next whole minute)."""
    now = clock.wall_now()
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
    """Tick now, then at each whole period of UTC, until `stop` is set."""
    stop = stop or threading.Event()
    every = PERIOD
    while not stop.is_set():
        try:
            result = tick.run_once()
            pulses.run_replica_pulses(result.instant)
            for line in result.report():
                write(line)
            every = period()
        except Exception:  # noqa: BLE001 - a loop outlives one bad tick; the next one retries
            log.exception("tick failed")
        finally:
            close_old_connections()
        stop.wait(seconds_to_next_period(every))


def start_in_background() -> threading.Event:
    """Tick in a daemon thread of this process (the demo's server)."""
    stop = threading.Event()
    thread = threading.Thread(target=tick_forever, kwargs={"stop": stop}, daemon=True,
                              name="keeping-time-tick")
    thread.start()
    return stop

