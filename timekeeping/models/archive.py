"""A brand its owner deleted, kept for 30 days so the deletion can be undone (issue 31).

The brand's whole data is written as its export (`timekeeping.brands.layout`), gzipped, in
parts of at most a megabyte, so neither writing nor reading it holds more than one part in
memory. Undoing the deletion loads the export back; after `until` the tick's housekeeping
removes the archive and the sign-in accounts of people the brand alone had."""

from django.conf import settings
from django.db import models

from timekeeping.basics.public_ids import PublicIdField
from timekeeping.models.base import Model


class BrandArchive(Model):
    id = PublicIdField(prefix="arc")
    brand_id = models.CharField(max_length=48, help_text="The deleted brand's id.")
    name = models.CharField(max_length=200)
    slug = models.CharField(max_length=64)
    deleted = models.DateTimeField()
    until = models.DateTimeField(help_text="When the archive goes for good.")
    deleted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    keepers = models.JSONField(default=list, help_text="The sign-in accounts (ids) that may "
                                                       "undo it: the brand's owners.")
    people = models.JSONField(default=list, help_text="The brand's people's accounts (ids), "
                                                      "removed with the archive if no other "
                                                      "brand has them.")
    size = models.BigIntegerField(default=0, help_text="Bytes of the gzipped export.")
    restored = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-deleted"]
        indexes = [models.Index(fields=["until"], name="archive_until")]

    def __str__(self) -> str:
        return f"{self.name} (deleted {self.deleted:%Y-%m-%d})"


class ArchivePart(Model):
    archive = models.ForeignKey(BrandArchive, on_delete=models.CASCADE, related_name="parts")
    seq = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        ordering = ["archive", "seq"]
        constraints = [models.UniqueConstraint(fields=["archive", "seq"], name="archive_part")]
