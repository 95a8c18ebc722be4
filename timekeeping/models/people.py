"""The people of a brand (S25): its members, with a role, and its customers, each linked to
the subjects they may see; and the invitations that make a subject's contact a customer."""

from django.conf import settings
from django.db import models

from timekeeping.basics import wallclock
from timekeeping.basics.public_ids import PublicIdField
from timekeeping.models.base import Model
from timekeeping.models.brand import Brand
from timekeeping.models.service import Subject


class Member(Model):
    """A person who works for a brand. Owners do everything, keys and manifests included;
    managers everything else; viewers read (docs/security.md)."""

    class Role(models.TextChoices):
        OWNER = "owner", "owner"
        MANAGER = "manager", "manager"
        VIEWER = "viewer", "viewer"

    id = PublicIdField(prefix="mbr")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="members")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MANAGER)
    zone = models.CharField(max_length=64, blank=True, default="",
                            help_text="The zone this person reads times in; empty: the brand's.")
    created = models.DateTimeField(default=wallclock.wall_now)

    class Meta:
        ordering = ["brand", "user__username"]
        constraints = [models.UniqueConstraint(fields=["brand", "user"], name="member_once")]

    def __str__(self) -> str:
        return f"{self.user} ({self.role} of {self.brand})"

    @property
    def name(self) -> str:
        """The member as the pages name them: their full name, else their sign-in name."""
        return self.user.get_full_name() or self.user.get_username()


class Customer(Model):
    """A customer's account at one brand: the portal shows the subjects linked to it."""

    id = PublicIdField(prefix="cus")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="customers")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="customer_accounts")
    subjects = models.ManyToManyField(Subject, blank=True, related_name="customers",
                                      through="CustomerSubject")
    created = models.DateTimeField(default=wallclock.wall_now)

    class Meta:
        ordering = ["brand", "user__username"]
        constraints = [models.UniqueConstraint(fields=["brand", "user"], name="customer_once")]

    def __str__(self) -> str:
        return f"{self.user} (customer of {self.brand})"


class CustomerSubject(Model):
    """A subject a customer may see: the link behind `Customer.subjects`, carrying its brand
    like every table that grows with use (DESIGN "Scale"). Linked with
    `customer.subjects.add(subject, through_defaults={"brand": customer.brand})`."""

    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="+")
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="+")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="+")

    class Meta:
        db_table = "timekeeping_customer_subjects"  # the table Django made for the link first
        unique_together = [("customer", "subject")]

    def __str__(self) -> str:
        return f"{self.customer_id} sees {self.subject_id}"


class Invitation(Model):
    """A subject's contact asked to the portal by email. The link's token is stored as a
    digest; the invitation works until `expires` (expiry is data, T1) and only once."""

    id = PublicIdField(prefix="inv")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="invitations")
    subject = models.ForeignKey(Subject, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    digest = models.CharField(max_length=64, unique=True, editable=False)
    expires = models.DateTimeField()
    accepted = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created = models.DateTimeField(default=wallclock.wall_now)

    class Meta:
        ordering = ["-created"]

    def __str__(self) -> str:
        return f"{self.email} to {self.subject_id}"
