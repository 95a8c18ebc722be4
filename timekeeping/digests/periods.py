"""When a digest goes (pure: no models, no clock): each period's send instant is a wall time in
the digest's zone, read by `calendars.moments.wall_time`, so a daily digest at 07:00 London
goes once per London day, on the days clocks change too.

    due_at(now, period=, zone=, hour=, weekday=)    the latest send instant at or before now,
                                                    and its period's key
    next_after(now, period=, zone=, hour=, weekday=) the first send instant after now

A period is named by its key: "daily:2028-03-26" (the local day it goes on),
"weekly:2028-03-27" (the local day of the week's send). After downtime, `due_at` names only
the latest period: one email for what was missed, never one per missed day.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from calendars.moments import wall_time, zone_of

STEP = {"daily": timedelta(days=1), "weekly": timedelta(days=7)}


def _send_instant(day: date, zone: str, hour: int) -> datetime:
    # A skipped hour (a spring-forward night) goes at the next minute that exists.
    return wall_time(day, time(hour, 0), zone, gap="next")


def _last_day(now: datetime, period: str, zone: str, hour: int, weekday: int) -> date:
    """The local day of the latest send at or before `now`."""
    today = now.astimezone(zone_of(zone)).date()
    day = today if period == "daily" else today - timedelta(days=(today.weekday() - weekday) % 7)
    # Calendar days, not elapsed time: the previous period's day is one day (or week) before
    # on the local calendar, whatever the day's length.
    if _send_instant(day, zone, hour) > now:
        day -= STEP[period]
    return day


def due_at(now: datetime, *, period: str, zone: str, hour: int,
           weekday: int = 0) -> tuple[datetime, str]:
    """The latest send instant at or before `now` (aware UTC) and its period's key."""
    day = _last_day(now, period, zone, hour, weekday)
    return _send_instant(day, zone, hour), f"{period}:{day.isoformat()}"


def next_after(now: datetime, *, period: str, zone: str, hour: int,
               weekday: int = 0) -> datetime:
    """The first send instant after `now` (aware UTC)."""
    day = _last_day(now, period, zone, hour, weekday) + STEP[period]
    return _send_instant(day, zone, hour)
