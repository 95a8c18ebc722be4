from datetime import timedelta

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.db.models import Q

from timekeeping.basics import wallclock
from timekeeping.basics.public_ids import PublicIdField
from timekeeping.models.base import Model
from timekeeping.models.brand import Brand, TestClock


class Timer(Model):
    """One owed instant (SPEC S3, DESIGN decision 3). Everything that happens on its own is one.

    The key names the timer on its brand clock: arming the same key twice finds the first
    timer, and no move of a date rewrites it (a move supersedes the live timer and arms a new
    one under the same key). The tick fires armed timers owed by its instant in
    (owed, place, owner_opened, key) order; key is compared byte by byte.
    """

    class State(models.TextChoices):
        ARMED = "armed", "armed"
        FIRED = "fired", "fired"
        SUPERSEDED = "superseded", "superseded"
        HELD = "held", "held"
        CANCELLED = "cancelled", "cancelled"
        DROPPED = "dropped", "dropped (past its overdue bound)"

    id = PublicIdField(prefix="tmr")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="timers")
    test_clock = models.ForeignKey(
        TestClock, null=True, blank=True, on_delete=models.CASCADE, related_name="timers"
    )
    # On PostgreSQL the migration gives this column the "C" collation, so ORDER BY key and
    # the tie index compare bytes; SQLite's default BINARY collation already does.
    key = models.CharField(max_length=255)
    kind = models.CharField(max_length=32)
    place = models.PositiveSmallIntegerField()
    owed = models.DateTimeField()
    state = models.CharField(max_length=12, choices=State.choices, default=State.ARMED)
    fired = models.DateTimeField(null=True, blank=True)
    late_by = models.DurationField(null=True, blank=True)
    owner_type = models.CharField(max_length=32, blank=True, default="")
    owner_id = models.CharField(max_length=64, blank=True, default="")
    owner_opened = models.DateTimeField(help_text="When the owner opened: the third tie rule.")
    bundle = models.CharField(max_length=64, blank=True, default="")
    payload = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)
    armed_at = models.DateTimeField(default=wallclock.wall_now)
    armed_by = models.CharField(max_length=48, blank=True, default="",
                                help_text="The timer whose firing armed this one.")
    ended_by = models.CharField(max_length=200, blank=True, default="",
                                help_text="What superseded, held, cancelled or dropped it.")
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")
    # Backoff (issue 31, docs/operating.md): after a failure the tick takes it again only
    # from here on; None: whenever it is owed.
    next_attempt = models.DateTimeField(null=True, blank=True)
    # Parked after `brand.park_after` failures: held (out of the tick's index, still its key's
    # live timer, so a moved date supersedes it) until retried or given up.
    parked = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["owed", "place", "owner_opened", "key"]
        constraints = [
            # One live (armed or held) timer per key and brand clock. A moved date supersedes
            # its rung's timer and arms a new one under the same key (SPEC S3, S12).
            models.UniqueConstraint(
                fields=["brand", "key"],
                condition=Q(test_clock__isnull=True, state__in=["armed", "held"]),
                name="timer_key_per_real_clock",
            ),
            models.UniqueConstraint(
                fields=["test_clock", "key"],
                condition=Q(test_clock__isnull=False, state__in=["armed", "held"]),
                name="timer_key_per_test_clock",
            ),
            models.CheckConstraint(
                condition=Q(place__gte=1) & Q(place__lte=8), name="timer_place_1_to_8"
            ),
        ]
        indexes = [
            # A key's timers in any state: arming asks whether its key has rung already (a
            # fired timer for that instant, S3). Without it each arm read the brand's whole
            # history of timers, and ordering a job got slower with every timer ever fired.
            models.Index(fields=["brand", "key"], name="timer_key"),
            # "Armed timers of this clock owed by T", already in tie order. A fired timer
            # leaves these partial indexes, so they stay the size of what is still owed.
            models.Index(
                fields=["brand", "owed", "place", "owner_opened", "key"],
                condition=Q(state="armed", test_clock__isnull=True),
                name="timer_armed_real",
            ),
            models.Index(
                fields=["test_clock", "owed", "place", "owner_opened", "key"],
                condition=Q(state="armed", test_clock__isnull=False),
                name="timer_armed_test",
            ),
            # A date's own timers (its rungs and its date: owner_id is the occurrence's
            # label), for re-arming a moved date and for the pages' "which rung rang".
            # A brand's armed timers whatever the clock (the console's failed timers and
            # renewals in dunning), which must not meet the brand's fired history.
            models.Index(fields=["brand", "owed"], condition=Q(state="armed"),
                         name="timer_armed_brand"),
            models.Index(fields=["owner_id"], name="timer_owner"),
            # Armed timers backing off after a failure (`timers.parking`), by their next
            # attempt: a walk asks each instant for the first retried one, which without it
            # read every armed timer of the clock.
            models.Index(fields=["brand", "next_attempt"], name="timer_retried",
                         condition=Q(state="armed", next_attempt__isnull=False)),
            # A brand's parked timers, for "needs attention": a handful beside its history.
            models.Index(fields=["brand", "-parked"], name="timer_parked",
                         condition=Q(state="held", parked__isnull=False)),
            # Timers that fired more than five minutes late, newest first, for "needs
            # attention": a small slice of the fired ones, which grow with years of use.
            models.Index(fields=["brand", "-fired"], name="timer_late",
                         condition=Q(state="fired", late_by__gt=timedelta(minutes=5))),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.key} owed {self.owed:%Y-%m-%d %H:%M:%SZ} ({self.state})"


class TickRun(Model):
    """One tick of one brand clock: what it did, for operators and the trace.

    Purged hourly 30 days after it started (`TickRun.purge`, SPEC J10)."""

    purge_after = timedelta(days=30)
    purge_field = "started"

    id = PublicIdField(prefix="tick")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="tick_runs")
    test_clock = models.ForeignKey(
        TestClock, null=True, blank=True, on_delete=models.CASCADE, related_name="tick_runs"
    )
    instant = models.DateTimeField(help_text="The clock's time the tick fired at (the last).")
    started = models.DateTimeField()
    finished = models.DateTimeField(null=True, blank=True)
    holder = models.CharField(max_length=200, blank=True, default="")
    passes = models.PositiveIntegerField(default=0)
    fired = models.PositiveIntegerField(default=0)
    armed = models.PositiveIntegerField(default=0)
    held = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    dropped = models.PositiveIntegerField(default=0)
    runaway = models.BooleanField(default=False)
    unfinished = models.BooleanField(default=False, help_text="The budget ran out first.")
    error = models.TextField(blank=True, default="",
                             help_text="Why it failed, or that its process ended before it "
                                       "finished (abandoned); empty when it went well.")

    class Meta:
        ordering = ["-started"]
        indexes = [
            models.Index(fields=["brand", "-started"], name="tickrun_brand_started"),
            # Runs not finished: those ticking now, and those a killed tick left behind, which
            # the next tick of their clock marks abandoned (an index probe, not a scan).
            models.Index(fields=["brand", "test_clock"], condition=Q(finished__isnull=True),
                         name="tickrun_unfinished"),
            # The real clock's last hour of runs, for /metrics, whatever the brands.
            models.Index(fields=["-started"], condition=Q(test_clock__isnull=True),
                         name="tickrun_real_started"),
        ]

    def __str__(self) -> str:
        return f"tick {self.started:%Y-%m-%d %H:%M:%SZ} · {self.fired} fired"
