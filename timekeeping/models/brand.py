from django.conf import settings
from django.db import models

from calendars import rules
from timekeeping import clock
from timekeeping.public_ids import PublicIdField


class Brand(models.Model):
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
        help_text="Which manifest keys run live (timekeeping.tiers); every key runs on a test "
                  "clock whatever the plan.")
    created = models.DateTimeField(default=clock.wall_now, editable=False)
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
        return self.calendar.rules() if self.calendar else rules.Calendar()


class TestClock(models.Model):
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
    created = models.DateTimeField(default=clock.wall_now, editable=False)
    lease_holder = models.CharField(max_length=200, blank=True, default="", editable=False)
    lease_until = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["brand", "name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"


def brands_kept_by(user):
    """The brands `user` works for (owner or member; superusers: all): the scope of every
    brand query in the API and the console."""
    if not user.is_authenticated:
        return Brand.objects.none()
    if user.is_superuser:
        return Brand.objects.all()
    return Brand.objects.filter(models.Q(owner=user) | models.Q(members__user=user)).distinct()
