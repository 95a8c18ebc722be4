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

Each minute looks only as far ahead as a reminder can reach: the largest lead any row can have
(the `max` when given; else a fixed number, or the largest value in the lead column, over the
linked table with `via`, and its fallback setting), two days more when `at` moves the send to a
wall time on the day the lead reaches. A row whose moment or send time falls outside the
calendar is skipped, and logged.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.db.models import Max, QuerySet

from calendars.moments import day_in_zone, parse_time_of_day, wall_time
from timekeeping.moves import effects, moments
from timekeeping.moves.moments import MomentOutOfRange

log = logging.getLogger("timekeeping.moves")
# With `at`, the send falls on the day the lead reaches, at most one (long) day before it.
AT_A_WALL_TIME = timedelta(days=2)


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
    hours = _whole_hours(value)
    if hours is None:
        return None
    return min(hours, lead["max"]) if isinstance(lead.get("max"), int) else hours


def _whole_hours(value) -> int | None:
    try:
        hours = int(value)
    except (TypeError, ValueError):
        return None
    return hours if hours >= 0 else None


def largest_lead(venue, table: str, lead: dict) -> int | None:
    """The largest lead, in hours, any row of `table` can have; None when no row's lead can be
    read (nothing to send)."""
    cap = lead["max"] if isinstance(lead.get("max"), int) else None
    if cap is not None and not isinstance(lead.get("hours"), int):
        return cap  # no lead passes it: no need to read the rows'
    found = [_whole_hours(value) for value in _lead_sources(venue, table, lead)]
    largest = max((hours for hours in found if hours is not None), default=None)
    return largest if cap is None or largest is None else min(largest, cap)


def _lead_sources(venue, table: str, lead: dict) -> list:
    reader = venue.reader()
    values = []
    if "hours" in lead:
        hours = lead["hours"]
        values.append(reader.setting(hours["table"], hours["column"])
                      if isinstance(hours, dict) else hours)
    elif "column" in lead:
        values.append(_column_max(venue, table, lead))
    if isinstance(lead.get("fallback"), dict):
        values.append(reader.setting(lead["fallback"]["table"], lead["fallback"]["column"]))
    return values


def _column_max(venue, table: str, lead: dict):
    """The largest lead kept in the lead column: of this table, or of every row of the table
    `via` links to."""
    link = venue.tables[table].columns.get(lead["via"]) if "via" in lead else None
    source = link.references if link is not None else table
    if source not in venue.tables or lead["column"] not in venue.tables[source].columns:
        return None
    rows = venue.model(source).objects.using(venue.link.database)
    if venue.tables[source].columns[lead["column"]].type == "integer":
        return rows.aggregate(largest=Max(lead["column"]))["largest"]
    # A lead kept as text ("24") orders as text in SQL: read each distinct value.
    found = map(_whole_hours, rows.values_list(lead["column"], flat=True).distinct())
    return max((hours for hours in found if hours is not None), default=None)


def send_at(venue, row, spec: dict, moment: datetime) -> datetime | None:
    hours = lead_hours(venue, row, spec.get("lead", {}))
    if hours is None:
        return None
    with moments.in_range("a reminder's send time"):
        reached = moment - timedelta(hours=hours)  # hours are elapsed time
        at = parse_time_of_day(spec.get("lead", {}).get("at"))
        if at is None:
            return reached
        return wall_time(day_in_zone(reached, venue.zone), at, venue.zone)


def run(venue, now: datetime) -> int:
    """Queue every reminder whose time has come while its moment is still ahead."""
    queued = 0
    for name in venue.tables:
        for number, spec in enumerate(venue.raw_table(name).get("reminders", []), start=1):
            queued += _remind(venue, name, number, spec, now)
    return queued


def _remind(venue, name: str, number: int, spec: dict, now: datetime) -> int:
    from timekeeping.moves.rows import is_sample

    queued = 0
    for row in _ahead(venue, name, spec, now):
        try:
            moment = venue.moment(row, spec["at"])
            when = send_at(venue, row, spec, moment) if moment else None
        except MomentOutOfRange as error:
            log.warning("reminder skipped: its moment is out of range: connection=%s table=%s "
                        "key=%s reminder=%s code=MOMENT_OUT_OF_RANGE (%s)", venue.link.pk,
                        name, row.pk, number, error)
            continue
        if when is None or not when <= now < moment:
            continue
        if is_sample(venue, name, row.pk):
            continue
        queued += effects.send(venue, row, spec, key=f"{venue.link.pk}:{name}:{row.pk}"
                                                     f":reminder{number}:{moment.isoformat()}")
    return queued


def _ahead(venue, name: str, spec: dict, now: datetime) -> QuerySet:
    """The rows whose reminder may be due now: the moment still ahead, and no further ahead
    than the largest lead reaches (on the column's index where the moment allows)."""
    lead = spec.get("lead", {})
    largest = largest_lead(venue, name, lead)
    rows = venue.model(name).objects.using(venue.link.database)
    if largest is None:
        return rows.none()
    try:
        until = now + timedelta(hours=largest) + (
            AT_A_WALL_TIME if parse_time_of_day(lead.get("at")) is not None else timedelta(0))
    except OverflowError:
        until = None  # a lead past the calendar's end: no bound ahead
    at = spec["at"]
    column = None if "via" in at else venue.tables[name].columns.get(at["column"])
    if column is None:
        return rows  # a moment read through a link: every row is judged
    return rows.filter(**moments.column_window(column.type, at, venue.zone, after=now,
                                               until=until))
