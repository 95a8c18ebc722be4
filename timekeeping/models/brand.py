from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from calendars import rules
from timekeeping.basics import instants, wallclock
from timekeeping.basics.public_ids import PublicIdField
from timekeeping.models.base import Model

# Failed tries in a row before a piece of scheduled work is parked (issue 31): a brand's
# `park_after` unless it sets its own, and the product's own schedules' (no brand).
PARK_AFTER = 10
# The calendar of a brand that has none (UTC, weekends only): immutable, so one value serves
# every call, and each year's closed days are built once.
NO_CALENDAR = rules.Calendar()


class Brand(Model):
    """A business that keeps time with us: its own clock, calendar, manifest and people
    (its owner, its members with their roles, its customers)."""

    id = PublicIdField(prefix="brd")
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=64, unique=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="owned_brands",
        help_text="The person who hears alarms and answers for the brand's dates.",
    )
    calendar = models.ForeignKey(
        "calendars.Calendar",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="brands",
        help_text="The calendar every date of the brand falls on; none: UTC, weekends only.",
    )
    plan = models.CharField(
        max_length=10, default="team",
        choices=[("free", "Free"), ("launch", "Launch"), ("team", "Team")],
        help_text="Which manifest keys run live on this plan (docs/manifest.md); every key "
                  "runs on a test clock whatever the plan.")
    park_after = models.PositiveSmallIntegerField(
        default=PARK_AFTER, validators=[MinValueValidator(1), MaxValueValidator(50)],
        help_text="Failed tries of one piece of scheduled work before it is parked: no more "
                  "tries on its own until someone retries it or gives it up "
                  "(docs/operating.md).")
    created = models.DateTimeField(default=wallclock.wall_now, editable=False)
    # The real clock's tick lease (DESIGN decision 4): taken by one conditional UPDATE.
    lease_holder = models.CharField(max_length=200, blank=True, default="", editable=False)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def role_of(self, user) -> str | None:
        """What `user` is here: "owner" (the brand's owner, an owner member, a superuser),
        "manager", "viewer", or None (not one of the brand's people)."""
        if not user.is_authenticated:
            return None
        if user.is_superuser or self.owner_id == user.pk:
            return "owner"
        return self.members.filter(user=user).values_list("role", flat=True).first()

    def calendar_rules(self) -> rules.Calendar:
        return self.calendar.rules() if self.calendar else NO_CALENDAR


class TestClock(Model):
    """A brand clock whose time moves only when someone advances it (S5).

    Timers armed on a test clock belong to it, and only its advance fires them.
    """

    __test__ = False  # not a pytest test class, despite its name

    class Status(models.TextChoices):
        READY = "ready", "ready"
        ADVANCING = "advancing", "advancing"
        INTERNAL_FAILURE = "internal_failure", "internal failure"

    id = PublicIdField(prefix="tc")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="test_clocks")
    name = models.CharField(max_length=200)
    frozen_time = models.DateTimeField(help_text="The clock's now, in UTC.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.READY)
    created = models.DateTimeField(default=wallclock.wall_now, editable=False)
    lease_holder = models.CharField(max_length=200, blank=True, default="", editable=False)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["brand", "name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"


class Walk(Model):
    """An advance of a test clock (S5): asked for at once, walked by the tick in slices.

    Each instant walked commits with the walk's figures, so a walk killed midway resumes
    from the last instant it finished, and its figures count every timer once. At most one
    walk of a clock is walking at a time (a unique index).
    """

    class State(models.TextChoices):
        WALKING = "walking", "walking"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    id = PublicIdField(prefix="wlk")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="walks")
    test_clock = models.ForeignKey(TestClock, on_delete=models.CASCADE, related_name="walks")
    start = models.DateTimeField(help_text="The clock's time when the advance was asked for.")
    to = models.DateTimeField(help_text="Where the walk ends.")
    reached = models.DateTimeField(help_text="The last instant walked to the end.")
    step_s = models.PositiveIntegerField(
        default=0, help_text="The least time between two ticks for schedules (0: every due "
                             "time).")
    last_tick = models.DateTimeField(null=True, blank=True)
    synced = models.BooleanField(default=False, help_text="The brand's schedules are on it.")
    state = models.CharField(max_length=20, choices=State.choices, default=State.WALKING)
    by = models.CharField(max_length=200, blank=True, default="")
    requested = models.DateTimeField(default=wallclock.wall_now, editable=False)
    finished = models.DateTimeField(null=True, blank=True)
    slices = models.PositiveIntegerField(default=0)
    fired = models.PositiveIntegerField(default=0)
    armed = models.PositiveIntegerField(default=0)
    held = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    dropped = models.PositiveIntegerField(default=0)
    passes = models.PositiveIntegerField(default=0)
    schedule_runs = models.PositiveIntegerField(default=0)
    line_count = models.PositiveIntegerField(default=0, help_text="Lines of its trace.")
    runaway = models.BooleanField(default=False)
    tries = models.PositiveSmallIntegerField(default=0, help_text="Slices in a row that "
                                                                  "failed.")
    error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-requested"]
        constraints = [
            models.UniqueConstraint(fields=["test_clock"], condition=models.Q(state="walking"),
                                    name="walk_one_at_a_time"),
        ]
        indexes = [
            models.Index(fields=["requested"], condition=models.Q(state="walking"),
                         name="walk_walking"),
        ]

    def __str__(self) -> str:
        return f"{self.test_clock_id} to {self.to:%Y-%m-%dT%H:%M:%SZ} ({self.state})"

    @property
    def share(self) -> float:
        """The part of the walk's span behind it, 0 to 1."""
        if self.state == self.State.DONE:
            return 1.0
        return instants.share(self.start, self.to, self.reached)


class WalkLine(Model):
    """One firing of a walk's trace, rendered as `manage.py tick --trace` prints it, with
    what `--on` needs to choose it (the timer's owner, what armed it, what it armed)."""

    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="+")
    walk = models.ForeignKey(Walk, on_delete=models.CASCADE, related_name="lines")
    seq = models.PositiveIntegerField()
    timer = models.CharField(max_length=48)
    owner = models.CharField(max_length=64)
    armed_by = models.CharField(max_length=48, blank=True, default="")
    armed = models.JSONField(default=list, blank=True)
    outcome = models.CharField(max_length=20)
    held = models.PositiveIntegerField(default=0)
    text = models.TextField()

    class Meta:
        ordering = ["walk", "seq"]
        constraints = [models.UniqueConstraint(fields=["walk", "seq"], name="walkline_seq")]


def brands_kept_by(user):
    """The brands `user` works for (owner or member; superusers: all): the scope of every
    brand query in the API and the console."""
    if not user.is_authenticated:
        return Brand.objects.none()
    if user.is_superuser:
        return Brand.objects.all()
    return Brand.objects.filter(models.Q(owner=user) | models.Q(members__user=user)).distinct()
