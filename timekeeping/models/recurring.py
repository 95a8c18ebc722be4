"""Plans a subject subscribes to (S18, S19, T2): a subscription renews on its cycle dates and
mints jobs on its schedules; its allowances are counted per cycle."""

from django.db import models

from timekeeping.basics import wallclock
from timekeeping.basics.public_ids import PublicIdField
from timekeeping.models.base import Model
from timekeeping.models.brand import Brand, TestClock
from timekeeping.models.service import Subject


class Subscription(Model):
    """A subject on a plan (a service with `price.every`), from its anchor day. It keeps the
    manifest version and the brand's plan it was ordered under (S24)."""

    class State(models.TextChoices):
        ACTIVE = "active", "active"
        CANCELLED = "cancelled", "cancelled"

    id = PublicIdField(prefix="sbn")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="subscriptions")
    test_clock = models.ForeignKey(TestClock, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="subscriptions")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="subscriptions")
    service = models.CharField(max_length=100, help_text="The plan: a service with a cycle.")
    bundle = models.CharField(max_length=64)
    plan = models.CharField(
        max_length=10, blank=True, default="",
        help_text="The brand's plan it was ordered under (S24), kept to its end: a smaller "
                  "plan the brand moves to later does not reach it. Empty: the brand's plan.")
    anchor = models.DateField(help_text="The first day of cycle 1; cycles count from it.")
    cycle = models.PositiveIntegerField(default=1, help_text="The cycle it is in.")
    state = models.CharField(max_length=10, choices=State.choices, default=State.ACTIVE)
    opened = models.DateTimeField()
    ends_after = models.PositiveIntegerField(
        null=True, blank=True, help_text="Cancelled at the end of this cycle, if set.")
    paid = models.BigIntegerField(
        default=0, help_text="What was recorded paid of its cycles' charges, in minor units.")
    frozen_since = models.DateTimeField(
        null=True, blank=True, help_text="Dunning ran out on an unpaid renewal: allowances are "
                                         "frozen and mints held until it is paid.")
    created = models.DateTimeField(default=wallclock.wall_now)

    class Meta:
        ordering = ["brand", "subject", "service"]
        constraints = [models.UniqueConstraint(
            fields=["subject", "service"], condition=models.Q(state="active"),
            name="subscription_active_once")]

    def __str__(self) -> str:
        return f"{self.service} for {self.subject_id} from {self.anchor} (cycle {self.cycle})"


class Allowance(Model):
    """What a cycle of a subscription has used of one included service (T2): a row per cycle,
    so a new cycle starts at zero with no reset job."""

    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="+")
    subscription = models.ForeignKey(Subscription, on_delete=models.CASCADE,
                                     related_name="allowances")
    service = models.CharField(max_length=100)
    cycle = models.PositiveIntegerField()
    used = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["subscription", "service", "cycle"],
                                               name="allowance_per_cycle")]

    def __str__(self) -> str:
        return f"{self.subscription_id} {self.service} cycle {self.cycle}: {self.used} used"


class Outcome(Model):
    """What a job paid by its outcome waits for (S21): a payment that matches it, before its
    `due`. Won by the first; lapsed at `due` with none, or lost when the brand says so; a lost
    one still wins until its tail (`tail_until`) ends."""

    class State(models.TextChoices):
        WAITING = "waiting", "waiting"
        WON = "won", "won"
        LAPSED = "lapsed", "lapsed (no payment by its due)"
        LOST = "lost", "lost"

    id = PublicIdField(prefix="out")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="outcomes")
    test_clock = models.ForeignKey(TestClock, null=True, blank=True, on_delete=models.CASCADE,
                                   related_name="outcomes")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="outcomes")
    job = models.OneToOneField("timekeeping.Job", on_delete=models.CASCADE,
                               related_name="outcome")
    state = models.CharField(max_length=8, choices=State.choices, default=State.WAITING)
    due = models.DateTimeField(help_text="No matching payment by then: the outcome lapses.")
    ended = models.DateTimeField(null=True, blank=True, help_text="When it was won, lapsed or "
                                                                  "lost.")
    tail_until = models.DateTimeField(
        null=True, blank=True, help_text="After a lost end, a matching payment until then "
                                         "still wins it.")
    collected = models.BigIntegerField(default=0, help_text="What its payments brought, in "
                                                            "minor units, less reversals.")
    opened = models.DateTimeField()

    class Meta:
        ordering = ["brand", "due"]

    def __str__(self) -> str:
        return f"{self.pk} ({self.state}) of {self.job_id}"
