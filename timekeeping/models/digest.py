"""A person's digest of one brand (issue 27): a daily or weekly email of their dates at risk
and what changed, in their zone, sent by the tick (`timekeeping.digests`)."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from timekeeping.basics import wallclock
from timekeeping.basics.public_ids import PublicIdField
from timekeeping.models.base import Model
from timekeeping.models.brand import Brand


class Digest(Model):
    """One person's choice for one brand: a person who keeps two brands chooses per brand.

    `next_due` is the next instant it goes (None while off): the tick asks its index, never
    scans. `last_key` names the period last sent ("daily:2028-03-26"): a period is sent once,
    however many ticks run (`digests.send` claims it with a guarded UPDATE)."""

    class Period(models.TextChoices):
        OFF = "off", "off"
        DAILY = "daily", "every day"
        WEEKLY = "weekly", "every week"

    id = PublicIdField(prefix="dgs")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="digests")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="digests")
    period = models.CharField(max_length=8, choices=Period.choices, default=Period.OFF)
    zone = models.CharField(max_length=64, blank=True, default="",
                            help_text="The IANA zone it is sent and written in; empty: the "
                                      "brand's.")
    hour = models.PositiveSmallIntegerField(default=7, help_text="The hour it goes, 0 to 23, "
                                                                 "in its zone.")
    weekday = models.PositiveSmallIntegerField(default=0, help_text="The day a weekly one "
                                                                    "goes: 0 Monday … 6 Sunday.")
    next_due = models.DateTimeField(null=True, blank=True)
    last_key = models.CharField(max_length=32, blank=True, default="")
    last_sent = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(default=wallclock.wall_now)

    class Meta:
        ordering = ["brand", "user"]
        constraints = [models.UniqueConstraint(fields=["brand", "user"], name="digest_once")]
        indexes = [models.Index(fields=["next_due"], condition=Q(next_due__isnull=False),
                                name="digest_due")]

    def __str__(self) -> str:
        return f"{self.user} digest of {self.brand} ({self.period})"
