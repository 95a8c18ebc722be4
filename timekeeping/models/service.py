"""Manifests, subjects, jobs, clocks and their occurrences (SPEC S12-S17, S22, S24)."""

import secrets

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.db.models import Q

from timekeeping.basics import wallclock
from timekeeping.basics.public_ids import PublicIdField
from timekeeping.models.base import Model
from timekeeping.models.brand import Brand, TestClock


def new_feed_token() -> str:
    return secrets.token_urlsafe(24)


class Manifest(Model):
    """One accepted version of a brand's manifest. Versions are kept; a job, subject or
    clock keeps the bundle (a hash of the content) it opened under (SPEC S24)."""

    id = PublicIdField(prefix="mfv")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="manifests")
    version = models.PositiveIntegerField()
    bundle = models.CharField(max_length=64, help_text="sha256 of the canonical content")
    document = models.JSONField(encoder=DjangoJSONEncoder)
    created = models.DateTimeField(default=wallclock.wall_now)

    class Meta:
        ordering = ["brand", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["brand", "version"], name="manifest_version"),
        ]

    def __str__(self) -> str:
        return f"{self.brand_id} v{self.version} ({self.bundle[:12]})"


class Subject(Model):
    """Whom the work is for (a taxpayer), with its own zone: a due closes in it."""

    id = PublicIdField(prefix="sbj")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="subjects")
    kind = models.CharField(max_length=64)
    key = models.CharField(max_length=200, help_text="Its identifier of that kind (an EIN).")
    name = models.CharField(max_length=200)
    zone = models.CharField(max_length=64, blank=True, default="")
    input = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)
    contact_email = models.EmailField(blank=True, default="")
    owner_name = models.CharField(max_length=200, blank=True, default="",
                                  help_text="Who answers for the subject's own dates.")
    test_clock = models.ForeignKey(
        TestClock, null=True, blank=True, on_delete=models.CASCADE, related_name="subjects",
        help_text="A subject made on a test clock lives in that clock's world: its jobs and "
                  "dates run on it.")
    bundle = models.CharField(max_length=64, blank=True, default="")
    plan = models.CharField(
        max_length=10, blank=True, default="",
        help_text="The brand's plan it was made under (S24), kept to its end: a smaller "
                  "plan the brand moves to later does not reach it. Empty: the brand's plan.")
    feed_token = models.CharField(max_length=64, default=new_feed_token)
    created = models.DateTimeField(default=wallclock.wall_now)
    erased = models.DateTimeField(
        null=True, blank=True, editable=False,
        help_text="When its personal data was erased (`timekeeping.subjects.erasing`): its "
                  "name, key, contact and facts are gone; its jobs, dates and records stay "
                  "as anonymous history, and nothing new is done for it.")

    class Meta:
        ordering = ["brand", "name"]
        constraints = [
            models.UniqueConstraint(fields=["brand", "kind", "key"],
                                    condition=models.Q(test_clock__isnull=True),
                                    name="subject_kind_key"),
            models.UniqueConstraint(fields=["test_clock", "kind", "key"],
                                    condition=models.Q(test_clock__isnull=False),
                                    name="subject_kind_key_test"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind} {self.key})"


class Job(Model):
    """One job of a Service for a subject and period (SPEC S17: one per period)."""

    class State(models.TextChoices):
        OPEN = "open", "open"
        ENDED = "ended", "ended"
        LAPSED = "lapsed", "lapsed"
        CANCELLED = "cancelled", "cancelled"

    id = PublicIdField(prefix="job")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="jobs")
    test_clock = models.ForeignKey(TestClock, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="jobs")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="jobs")
    service = models.CharField(max_length=100)
    period = models.CharField(max_length=32, blank=True, default="")
    input = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)
    bundle = models.CharField(max_length=64)
    plan = models.CharField(
        max_length=10, blank=True, default="",
        help_text="The brand's plan it opened under (S24), kept to its end: a smaller "
                  "plan the brand moves to later does not reach it. Empty: the brand's plan.")
    opened = models.DateTimeField()
    ended = models.DateTimeField(null=True, blank=True)
    steps_done = models.JSONField(default=list, blank=True,
                                  help_text="The steps committed so far, in order: a step that "
                                            "comes `after` others opens once they are here.")

    class Meta:
        ordering = ["-opened"]
        constraints = [models.UniqueConstraint(fields=["subject", "service", "period"],
                                               name="job_one_per_period")]

    def __str__(self) -> str:
        return f"{self.service} {self.period} for {self.subject_id}"


class Clock(Model):
    """A date the world sets, declared in a Service's `clocks` (SPEC S12)."""

    id = PublicIdField(prefix="clk")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="clocks")
    test_clock = models.ForeignKey(TestClock, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="clocks")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="clocks")
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="clocks")
    name = models.CharField(max_length=100)
    title = models.CharField(max_length=200)
    owner = models.CharField(max_length=200, help_text="Who answers for it.")
    hard = models.BooleanField(default=False)
    lives_on_subject = models.BooleanField(default=False)
    bundle = models.CharField(max_length=64)
    opened = models.DateTimeField()
    # S16: once its job ends, a date that lives on the subject is kept by the subject's
    # steward (a job of the manifest's steward service) or, with none, by its owner.
    steward = models.ForeignKey(
        Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="stewarded",
        help_text="The steward job keeping this date between jobs; empty: its owner keeps it.")
    keeper = models.ForeignKey(
        "timekeeping.Member", null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+", help_text="The member who keeps it for the steward; empty: the "
                                    "brand's owner.")

    class Meta:
        ordering = ["job", "name"]
        constraints = [models.UniqueConstraint(fields=["job", "name"], name="clock_per_job")]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"

    def kept_by(self, job_state: str) -> str:
        """Who keeps the date (S16): "job" while its job is open (or when it does not live on
        the subject), then "steward" or "owner". `job_state`: its job's state, read by the
        caller (a list reads it in its query)."""
        if not self.lives_on_subject or job_state == Job.State.OPEN:
            return "job"
        return "steward" if self.steward_id else "owner"


class Occurrence(Model):
    """One coming of a clock's date: one per item with `each`, one per period with `every`."""

    class Status(models.TextChoices):
        OPEN = "open", "open"
        SATISFIED = "satisfied", "satisfied"
        LAPSED = "lapsed", "lapsed"
        CLOSED = "closed", "closed (its job ended)"

    clock = models.ForeignKey(Clock, on_delete=models.CASCADE, related_name="occurrences")
    # Its clock's brand, world and hardness, and what a month late costs, kept on the row: the
    # console's dates at risk are read in order from one index, whatever the brand's size.
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="occurrences")
    test_clock = models.ForeignKey(TestClock, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="occurrences")
    hard = models.BooleanField(default=False)
    miss_cost = models.BigIntegerField(
        default=0, help_text="What a month late costs, in minor units (the clock's exposure as "
                             "the job's manifest version prices it); 0: not priced.")
    miss_currency = models.CharField(max_length=3, blank=True, default="",
                                     help_text="The currency of `miss_cost`.")
    item = models.CharField(max_length=64, blank=True, default="")
    seq = models.PositiveIntegerField(default=0, help_text="Which coming, with `every`.")
    rule_due = models.DateField(help_text="The date the due rule gives, before any roll.")
    due = models.DateField(help_text="The date kept: rolled, moved or postponed.")
    rolled_from = models.DateField(null=True, blank=True)
    roll_reasons = models.JSONField(default=list, blank=True)
    moved_from = models.DateField(null=True, blank=True, help_text="Its date before a move.")
    moved_by = models.CharField(max_length=200, blank=True, default="")
    late_from = models.DateTimeField(help_text="The first late instant, in UTC.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    settled = models.DateTimeField(null=True, blank=True)
    settled_by = models.CharField(max_length=200, blank=True, default="")
    acknowledged = models.DateTimeField(null=True, blank=True)
    assignee = models.ForeignKey("timekeeping.Member", null=True, blank=True,
                                 on_delete=models.SET_NULL, related_name="dates",
                                 help_text="The member who sees this date through (S25).")

    class Meta:
        ordering = ["due", "clock", "item", "seq"]
        constraints = [models.UniqueConstraint(fields=["clock", "item", "seq"],
                                               name="occurrence_per_item_seq")]
        indexes = [
            models.Index(fields=["due"], condition=Q(status="open"), name="occurrence_open_due"),
            # Dates at risk: the brand's live dates by currency, dearest miss first in each,
            # then the nearest (amounts in two currencies are never compared).
            models.Index(fields=["brand", "miss_currency", "-miss_cost", "late_from", "id"],
                         condition=Q(status__in=["open", "lapsed"]), name="occurrence_risk"),
            # The next days of one world of a brand.
            models.Index(fields=["brand", "test_clock", "due"], condition=Q(status="open"),
                         name="occurrence_brand_due"),
        ]

    def __str__(self) -> str:
        return f"{self.label} due {self.due}"

    @property
    def label(self) -> str:
        """How timers and traces name it: `clk_…#US-CA`, with `@n` for a later `every`."""
        text = f"{self.clock_id}#{self.item}" if self.item else self.clock_id
        return f"{text}@{self.seq}" if self.seq else text
