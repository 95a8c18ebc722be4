"""How the console shows time (S25): an instant in the brand's zone with the zone named, and as
a phrase relative to now ("in 3 days", "2 hours ago"). Views wrap instants; the partial
`console/_at.html` prints one.

The reader may switch every console page's times to another zone (issue 27): UTC, the
subject's, or any zone they name (their own). The choice is the person's, kept in their
session (`ZONE_KEY`) by the `zone` control, and `face_of` applies it; "" is the brand's."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from calendars.moments import zone_of
from timekeeping.basics import shown
from timekeeping.basics.shown import ZONE_KEY, zone_named
from timekeeping.models import Brand


@dataclass(frozen=True)
class Shown:
    instant: datetime
    zone: ZoneInfo
    now: datetime

    @property
    def local(self) -> str:
        return shown.moment(self.instant, self.zone)

    @property
    def iso(self) -> str:
        return self.instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    @property
    def relative(self) -> str:
        return shown.relative(self.instant, self.now)

    def __str__(self) -> str:
        return f"{self.local} ({self.relative})"


@dataclass(frozen=True)
class Face:
    """A zone and a now: what every time on a console page is shown against. `home` is the
    brand's zone; `zone` the one the reader chose, or the brand's."""

    zone: ZoneInfo
    now: datetime
    home: ZoneInfo | None = None

    @property
    def home_said(self) -> str:
        return shown.zone_name(self.home or self.zone)

    @property
    def chosen(self) -> bool:
        """The reader chose a zone other than the brand's."""
        return self.home is not None and self.zone.key != self.home.key

    @property
    def zone_name(self) -> str:
        return self.zone.key

    @property
    def zone_said(self) -> str:
        """The zone as people name it, once a page: "New York time"."""
        return shown.zone_name(self.zone)

    def at(self, instant: datetime | None, *, now: datetime | None = None) -> Shown | None:
        """`instant` as shown; `now` for a test clock's world, whose now is its own."""
        return Shown(instant, self.zone, now or self.now) if instant is not None else None


def face_of(brand: Brand, now: datetime, request=None) -> Face:
    """The brand's zone, or the one the person chose to read every page in."""
    home = zone_of(brand.calendar_rules().zone_name)
    chosen = zone_named(request.session.get(ZONE_KEY, "")) if request is not None else None
    return Face(chosen or home, now, home)
