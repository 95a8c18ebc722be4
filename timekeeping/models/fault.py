"""What failed in a tick, kept until the same work succeeds again (DESIGN decision 4)."""

from django.db import models
from django.db.models import Q

from timekeeping.basics.public_ids import PublicIdField
from timekeeping.models.base import Model
from timekeeping.models.brand import Brand


class Fault(Model):
    """One place of the tick that keeps failing: a brand clock's timers, a connection's
    minute of timed moves, or a whole phase (schedules, outbox, housekeeping).

    One open fault per place: the first failure opens it (a record, and the brand's owner
    told once); later failures only count; the next success there resolves it."""

    class Phase(models.TextChoices):
        TIMERS = "timers", "timers"
        SCHEDULES = "schedules", "schedules"
        MOVES = "moves", "timed moves"
        WALKS = "walks", "test clock walks"
        DIGESTS = "digests", "digests"
        OUTBOX = "outbox", "outbox sweep"
        HOUSEKEEPING = "housekeeping", "housekeeping"

    id = PublicIdField(prefix="flt")
    brand = models.ForeignKey(Brand, null=True, blank=True, on_delete=models.CASCADE,
                              related_name="faults")
    phase = models.CharField(max_length=20, choices=Phase.choices)
    where = models.CharField(max_length=64, help_text="The brand clock or connection, or the "
                                                      "phase's name.")
    error = models.TextField(help_text="The last error: its type and message.")
    first_seen = models.DateTimeField()
    last_seen = models.DateTimeField()
    count = models.PositiveIntegerField(default=1)
    resolved = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-last_seen"]
        constraints = [models.UniqueConstraint(fields=["phase", "where"],
                                               condition=Q(resolved__isnull=True),
                                               name="fault_open_per_place")]

    def __str__(self) -> str:
        return f"{self.phase} {self.where}: {self.error[:80]}"
