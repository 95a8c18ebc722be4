"""Sample data (SPEC A14): rows written relative to now, moved like any row, removable.

A value `{"@in": "PT20M"}` (an ISO 8601 duration: days, hours, minutes) is now plus that
much; `{"@in": "-P1D"}` is before now. Sample rows are remembered in `SampleRow`, so
`remove` takes every one of them (and their audit) in one call. They are never judged late.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from django.db import transaction

from timekeeping.models import RowAudit, SampleRow
from timekeeping.moves import effects
from timekeeping.moves.rows import Venue, audit

DURATION = re.compile(r"^(?P<sign>-)?P(?:(?P<d>\d+)D)?(?:T(?:(?P<h>\d+)H)?(?:(?P<m>\d+)M)?)?$")


def resolve(value, now: datetime, venue: Venue | None = None):
    if isinstance(value, dict) and "@slot" in value and venue is not None:
        return next_open(venue, value["@slot"], resolve({"@in": value.get("@in", "PT0M")}, now))
    if isinstance(value, dict) and "@in" in value:
        match = DURATION.match(str(value["@in"]))
        if match is None or match.group(0) in ("P", "-P", "PT", "-PT"):
            raise ValueError(f"@in: {value['@in']!r} is not a duration such as PT20M or P1DT2H")
        span = timedelta(days=int(match["d"] or 0), hours=int(match["h"] or 0),
                         minutes=int(match["m"] or 0))
        return now - span if match["sign"] else now + span
    return value


@transaction.atomic
def add(venue: Venue, table: str, rows: list[dict], *, now: datetime) -> list[int]:
    spec = venue.tables[table]
    model = venue.model(table)
    made = []
    for values in rows:
        values = {key: resolve(value, now, venue) for key, value in values.items()}
        if spec.states:
            values.setdefault(spec.states.column, spec.states.initial)
        row = model(**values)
        effects.apply(venue, table, row, None, now)
        row.full_clean()
        row.save(using=venue.link.database)
        SampleRow.objects.create(brand_id=venue.link.brand_id, connection=venue.link,
                                 table=table, row=row.pk)
        audit(venue, table, row, kind="sample", who="sample data", at=now, before=None)
        made.append(row.pk)
    return made


@transaction.atomic
def remove(venue: Venue) -> int:
    removed = 0
    brand = venue.link.brand_id
    for sample in SampleRow.objects.filter(brand_id=brand, connection=venue.link):
        if sample.table in venue.tables:
            removed += venue.model(sample.table).objects.using(venue.link.database).filter(
                pk=sample.row).delete()[0]
        RowAudit.objects.filter(brand_id=brand, connection=venue.link, table=sample.table,
                                row=sample.row, test_clock__isnull=True).delete()
    SampleRow.objects.filter(brand_id=brand, connection=venue.link).delete()
    return removed


def next_open(venue: Venue, hours_table: str, at: datetime) -> datetime:
    """The first instant at or after `at` inside the venue's opening hours (A14 `@slot`)."""
    from calendars.hours import WeeklyHours
    from calendars.moments import day_in_zone

    week = WeeklyHours(venue.reader().hours_rows({"table": hours_table}))
    day = day_in_zone(at, venue.zone) - timedelta(days=1)  # a night's hours began yesterday
    for offset in range(9):
        opens = week.opens_at(day + timedelta(days=offset), venue.zone)
        closes = week.closes_at(day + timedelta(days=offset), venue.zone)
        if opens is None or closes is None or closes <= opens:
            continue
        if at < closes:
            return max(at, opens)
    return at
