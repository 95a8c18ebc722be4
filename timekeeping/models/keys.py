"""API keys: how programs call a brand's API (docs/security.md)."""

from django.conf import settings
from django.db import models

from timekeeping.basics import wallclock
from timekeeping.basics.public_ids import PublicIdField
from timekeeping.models.base import Model
from timekeeping.models.brand import Brand


class ApiKey(Model):
    """A program's credential for one brand's API, made and revoked by the brand's owner.

    The secret is shown once, when the key is made; only its SHA-256 digest is kept, so a
    copy of the database holds no usable key. A key acts as the brand's staff do, on that
    brand only, and manages no keys."""

    id = PublicIdField(prefix="key")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=200, help_text="What the key is for.")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created = models.DateTimeField(default=wallclock.wall_now)
    last_used = models.DateTimeField(null=True, blank=True)
    revoked = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["brand", "-created"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.id})"
