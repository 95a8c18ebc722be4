"""Reminders before a moment (SPEC A12), sent by the same once-a-minute job.

    "reminders": [{
      "at": {"column": "pickup_at"},                      # the moment (any moment form)
      "lead": {"column": "reminder_hours",                # hours before it: a number, a
               "fallback": {"table": "settings",          # column of the row (or `via` a
                            "column": "reminder_hours"},  # link), a setting, with a fallback
               "max": 48, "at": "09:00"},                 # and a cap; `at`: a wall time on
      "to": {"column": "email"},                          # the venue's day the lead reaches
      "subject": "Your pickup is at {pickup_at}", "body": "…"
    }]

A reminder is sent only while its moment is ahead, once per row and moment (a re-dated row is
reminded of its new moment): its outbox key names the row and the moment. Sample rows send none.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from calendars.moments import day_in_zone, parse_time_of_day, wall_time
from timekeeping.moves import effects

WINDOW = timedelta(days=3)


def lead_hours(venue, row, lead: dict) -> int | None:
    value = None
    if "hours" in lead:
        value = lead["hours"]
    elif "column" in lead:
        source = venue.reader().linked(row, lead["via"]) if "via" in lead else row
        value = getattr(source, lead["column"], None) if source is not None else None
    if value is None and isinstance(lead.get("fallback"), dict):
        value = venue.reader().setting(lead["fallback"]["table"], lead["fallback"]["column"])
    if isinstance(value, dict):
        value = venue.reader().setting(value["table"], value["column"])
    try:
        hours = int(value)
    except (TypeError, ValueError):
        return None
    if hours < 0:
        return None
    return min(hours, lead["max"]) if isinstance(lead.get("max"), int) else hours


def send_at(venue, row, spec: dict, moment: datetime) -> datetime | None:
    hours = lead_hours(venue, row, spec.get("lead", {}))
    if hours is None:
        return None
    reached = moment - timedelta(hours=hours)  # hours are elapsed time
    at = parse_time_of_day(spec.get("lead", {}).get("at"))
    if at is None:
        return reached
    return wall_time(day_in_zone(reached, venue.zone), at, venue.zone)


def run(venue, now: datetime) -> int:
    """Queue every reminder whose time has come while its moment is still ahead."""
    from timekeeping.moves import samples

    queued = 0
    for name in venue.tables:
        specs = venue.raw_table(name).get("reminders", [])
        for number, spec in enumerate(specs, start=1):
            column = spec["at"]["column"]
            rows = venue.model(name).objects.using(venue.link.database).filter(**{
                f"{column}__gt": now - timedelta(days=1), f"{column}__lte": now + WINDOW})
            for row in rows:
                moment = venue.moment(row, spec["at"])
                when = send_at(venue, row, spec, moment) if moment else None
                if when is None or not when <= now < moment:
                    continue
                if samples.is_sample(venue, name, row.pk):
                    continue
                queued += effects.send(venue, row, spec, key=f"{venue.link.pk}:{name}:{row.pk}"
                                                             f":reminder{number}:"
                                                             f"{moment.isoformat()}")
    return queued
