"""The tick's heartbeat: when the last tick passed, and the running histogram of how late the
real clocks' timers fired (`Lateness`), kept in the `Heartbeat` row named "tick". The tick
beats (`beat`); what reads it (the tick's health, /metrics, a schedule's "ticks stopped")
reads it here, below the tick."""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction

from timekeeping.models import Heartbeat

# How late timers fired, in seconds: the upper bounds of the tick's histogram (/metrics), the
# last bucket unbounded.
LATE_BY_BOUNDS = (1, 5, 15, 30, 60, 120, 300, 900, 3600, 21600, 86400)


@dataclass
class Lateness:
    """How late fired timers fired: a count per bucket of `LATE_BY_BOUNDS` and the sum."""

    counts: list[int] = field(default_factory=lambda: [0] * (len(LATE_BY_BOUNDS) + 1))
    sum_s: float = 0.0

    def add(self, seconds: float) -> None:
        self.counts[bisect_left(LATE_BY_BOUNDS, seconds)] += 1
        self.sum_s += seconds

    def merge(self, other: Lateness) -> None:
        self.counts = [a + b for a, b in zip(self.counts, other.counts, strict=True)]
        self.sum_s += other.sum_s

    def as_dict(self) -> dict:
        return {"late_by": self.counts, "late_by_sum_s": self.sum_s}

    @classmethod
    def of(cls, counts: dict) -> Lateness:
        kept = counts.get("late_by")
        if not isinstance(kept, list) or len(kept) != len(LATE_BY_BOUNDS) + 1:
            return cls()  # none yet, or kept with other bounds: start again
        return cls(counts=[int(n) for n in kept], sum_s=float(counts.get("late_by_sum_s", 0)))


def beat(instant: datetime, late_by: Lateness) -> datetime | None:
    """The tick passed: its heartbeat, and its firings added to the running histogram of how
    late timers fired (ticks at once add in turn, under the row's lock). Returns when the tick
    passed before (None the first time)."""
    with transaction.atomic():
        heartbeat, made = Heartbeat.objects.select_for_update().get_or_create(name="tick")
        before = None if made else heartbeat.at
        kept = Lateness.of(heartbeat.counts)
        kept.merge(late_by)
        heartbeat.at = instant
        heartbeat.counts = {**heartbeat.counts, **kept.as_dict()}
        heartbeat.save(update_fields=["at", "counts"])
    return before


def heartbeat() -> tuple[datetime | None, Lateness]:
    """When the last tick passed (None before the first), and the running histogram of how
    late the real clocks' timers fired."""
    at, counts = Heartbeat.objects.filter(name="tick").values_list("at", "counts").first() or (
        None, {})
    return at, Lateness.of(counts or {})


def last_tick() -> datetime | None:
    """When the last tick passed (its heartbeat), or None before the first."""
    return heartbeat()[0]
