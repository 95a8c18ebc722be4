"""A person's digest of a brand, chosen and turned off (issue 27).

    zone_of(digest)            the zone it goes and is written in: its own, else the brand's
    digest_of(brand, user)     the person's choice (unsaved and off when they never chose)
    digest_set(...)            the choice saved, with when it next goes
    digest_off(digest_id)      turned off (the unsubscribe link); True when it was on

Each save sets `next_due` from the choice: the tick's phase asks that column's index.
"""

from __future__ import annotations

from datetime import datetime

from calendars.moments import zone_of as iana_zone
from timekeeping.digests import periods
from timekeeping.models import Brand, Digest


def brand_zone(brand: Brand) -> str:
    return brand.calendar_rules().zone_name


def zone_of(digest: Digest) -> str:
    return digest.zone or brand_zone(digest.brand)


def digest_of(brand: Brand, user) -> Digest:
    found = Digest.objects.filter(brand=brand, user=user).first()
    return found or Digest(brand=brand, user=user)


def _next_due(digest: Digest, now: datetime) -> datetime | None:
    if digest.period == Digest.Period.OFF:
        return None
    return periods.next_after(now, period=digest.period, zone=zone_of(digest),
                              hour=digest.hour, weekday=digest.weekday)


def digest_set(*, brand: Brand, user, period: str, zone: str, hour: int, weekday: int,
               now: datetime) -> Digest:
    """Save the person's choice for the brand; it next goes at the first send after `now`.

    Changing the hour to a later one on a day already sent sends nothing twice: the period's
    key is the outbox's idempotency key (`digests.send`). Bad values raise ValueError naming
    the field, and nothing is saved."""
    if period not in Digest.Period.values:
        raise ValueError(f"period: {period!r} is not one of {', '.join(Digest.Period.values)}")
    if zone:
        iana_zone(zone)
    if not 0 <= hour <= 23:
        raise ValueError("hour: an hour of the day, 0 to 23")
    if not 0 <= weekday <= 6:
        raise ValueError("weekday: 0 (Monday) to 6 (Sunday)")
    digest = Digest(brand=brand, user=user, period=period, zone=zone, hour=hour,
                    weekday=weekday)
    # One row per person and brand (a unique constraint): two saves at once make one.
    digest, _ = Digest.objects.update_or_create(brand=brand, user=user, defaults={
        "period": period, "zone": zone, "hour": hour, "weekday": weekday,
        "next_due": _next_due(digest, now)})
    return digest


def digest_off(digest_id: str) -> bool:
    """Turn a digest off, in one guarded UPDATE (a second click changes nothing)."""
    return bool(Digest.objects.filter(pk=digest_id).exclude(period=Digest.Period.OFF).update(
        period=Digest.Period.OFF, next_due=None))
