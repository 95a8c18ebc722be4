"""Interval schedules: a state row per schedule and a record per due time (SPEC J2-J7)."""

from django.db import models

from timekeeping.basics import wallclock
from timekeeping.basics.public_ids import PublicIdField
from timekeeping.models.base import Model
from timekeeping.models.brand import Brand, TestClock


class Schedule(Model):
    """A schedule's state: its grid, its lease, whether it is paused.

    `key` holds the name it was first declared with (with its brand and clock), so a rename
    keeps the state and the history; `name` is the name it is declared with now."""

    id = PublicIdField(prefix="sch")
    key = models.CharField(max_length=300, unique=True)
    name = models.CharField(max_length=200)
    # No database constraint: the state may live in another database than brands and test
    # clocks (SCHEDULES_STORE, SPEC J6). On one database, deleting either still cascades.
    brand = models.ForeignKey(Brand, null=True, blank=True, on_delete=models.CASCADE,
                              related_name="schedules", db_constraint=False)
    test_clock = models.ForeignKey(TestClock, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="schedules", db_constraint=False)
    action = models.CharField(max_length=200)
    every_s = models.PositiveIntegerField("every (seconds)", help_text="0: at a wall time.")
    at = models.CharField(max_length=120, blank=True, default="",
                          help_text="A wall time, \"mon 09:00 Europe/London\" (T8); else "
                                    "blank, and it runs every `every_s`.")
    declared_in = models.CharField(max_length=20, default="code")
    active = models.BooleanField(default=True, help_text="Still declared.")
    next_due = models.DateTimeField(null=True, blank=True)
    paused = models.BooleanField(default=False)
    run_requested = models.BooleanField(default=False, help_text="Run by hand at the next tick.")
    lease_holder = models.CharField(max_length=200, blank=True, default="")
    lease_until = models.DateTimeField(null=True, blank=True)
    last_tick = models.DateTimeField(null=True, blank=True,
                                     help_text="The last tick that reached it.")
    # Backoff (issue 31, docs/operating.md): failed runs in a row and the last one's error;
    # after a failure `next_due` is its next try, moved past the wait onto its grid.
    attempts = models.PositiveIntegerField(default=0, editable=False)
    last_error = models.TextField(blank=True, default="", editable=False)
    # Parked after `brand.park_after` failed runs in a row (PARK_AFTER for the product's
    # own): no tick runs it until someone retries it or gives it up (`schedules.parking`).
    parked = models.DateTimeField(null=True, blank=True, editable=False)
    created = models.DateTimeField(default=wallclock.wall_now)

    class Meta:
        ordering = ["name"]
        indexes = [models.Index(fields=["next_due"], condition=models.Q(active=True),
                                name="schedule_next_due")]

    def __str__(self) -> str:
        return self.name


class ScheduleRun(Model):
    """One due time of a schedule: a run, a failure, or a skip with its reason."""

    class Outcome(models.TextChoices):
        RUNNING = "running", "running"
        SUCCEEDED = "succeeded", "succeeded"
        FAILED = "failed", "failed"
        SKIPPED = "skipped", "skipped"

    id = PublicIdField(prefix="run")
    schedule = models.ForeignKey(Schedule, on_delete=models.CASCADE, related_name="runs")
    due = models.DateTimeField()
    tick = models.DateTimeField(help_text="The tick's time: the run's clock (J4).")
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=10, choices=Outcome.choices)
    reason = models.TextField(blank=True, default="")
    items = models.PositiveIntegerField(default=0)
    by_hand = models.BooleanField(default=False)
    holder = models.CharField(max_length=200, blank=True, default="")

    class Meta:
        ordering = ["-tick"]
        indexes = [models.Index(fields=["schedule", "-tick"], name="run_schedule_tick"),
                   models.Index(fields=["tick"], name="run_tick")]

    def __str__(self) -> str:
        return f"{self.schedule} due {self.due:%Y-%m-%d %H:%M:%SZ}: {self.outcome}"


class Heartbeat(Model):
    """When something last happened: the last tick, the last housekeeping pass. A lease
    on the row keeps housekeeping to one process at a time."""

    name = models.CharField(max_length=64, primary_key=True)
    at = models.DateTimeField(null=True, blank=True)
    lease_holder = models.CharField(max_length=200, blank=True, default="")
    lease_until = models.DateTimeField(null=True, blank=True)
    counts = models.JSONField(
        default=dict, blank=True,
        help_text="Running totals kept with the beat. The tick's: its fired timers counted by "
                  "how late they fired (`timers.heartbeat.LATE_BY_BOUNDS`), for /metrics.")

    def __str__(self) -> str:
        return f"{self.name} at {self.at}"
