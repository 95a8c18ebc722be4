"""What a subject owns, by id, read once under an erasure's lock: what finds the timers,
emails and records about it (`timekeeping.subjects.erasing`)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from timekeeping.models import (
    Ask,
    Clock,
    Invitation,
    Job,
    Occurrence,
    Subject,
    Subscription,
    Task,
    Timer,
)
from timekeeping.subjects.scrubbing import chunks


def _label(clock: str, item: str, seq: int) -> str:
    """An occurrence's label as its timers name their owner (`Occurrence.label`)."""
    text = f"{clock}#{item}" if item else clock
    return f"{text}@{seq}" if seq else text


@dataclass(frozen=True)
class Owned:
    subject: str
    jobs: tuple[str, ...]
    clocks: tuple[str, ...]
    dates: tuple[str, ...]  # its occurrences' labels: the owners of their timers
    plans: tuple[str, ...]
    asks: tuple[str, ...]
    tasks: tuple[str, ...]
    invitations: tuple[str, ...]

    @classmethod
    def of(cls, subject: Subject) -> Owned:
        mine = {"brand_id": subject.brand_id, "subject": subject}

        def ids(model) -> tuple[str, ...]:
            return tuple(model.objects.filter(**mine).values_list("pk", flat=True))

        dates = Occurrence.objects.filter(brand_id=subject.brand_id, clock__subject=subject)
        return cls(subject.pk, ids(Job), ids(Clock),
                   tuple(_label(*each) for each in dates.values_list("clock_id", "item", "seq")),
                   ids(Subscription), ids(Ask), ids(Task), ids(Invitation))

    def ids(self) -> frozenset[str]:
        """Every id it owns, the subject's own among them: what an email's key may name."""
        return frozenset((self.subject, *self.jobs, *self.clocks, *self.plans, *self.asks,
                          *self.tasks, *self.invitations))

    def timer_ids(self, brand_id: str, states: list[str] | None = None) -> list[str]:
        """Its timers in any state (or in `states`): its jobs', its dates' and its plans', and a
        scheduled order's for it (a `jobs.order` delay naming it)."""
        found = []
        for owner_type, owners in (("job", self.jobs), ("occurrence", self.dates),
                                   ("subscription", self.plans)):
            for batch in chunks(owners):
                found += self._ids(brand_id, states, Q(owner_type=owner_type,
                                                       owner_id__in=batch))
        return found + self._ids(brand_id, states, Q(
            kind="delay", payload__operation="jobs.order", payload__input__subject=self.subject))

    @staticmethod
    def _ids(brand_id: str, states: list[str] | None, owners: Q) -> list[str]:
        timers = Timer.objects.filter(Q(brand_id=brand_id) & owners)
        if states is not None:
            timers = timers.filter(state__in=states)
        return list(timers.values_list("pk", flat=True))
