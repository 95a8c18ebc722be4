from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.db.models.functions import Now

from timekeeping.basics.public_ids import PublicIdField
from timekeeping.models.base import Model
from timekeeping.models.brand import Brand, TestClock


class AppendOnlyError(Exception):
    """Records are never changed or deleted through the ORM's normal paths."""


class RecordQuerySet(models.QuerySet):
    def update(self, **kwargs):
        raise AppendOnlyError("records are append-only: they cannot be updated")

    def delete(self):
        raise AppendOnlyError("records are append-only: they cannot be deleted")

    def bulk_update(self, objs, fields, batch_size=None):
        raise AppendOnlyError("records are append-only: they cannot be updated")


class Record(Model):
    """One thing that happened, written once (DESIGN decision 5).

    Subject, job and timer are kept as public ids rather than foreign keys: a record outlives
    whatever it speaks of and must never be changed or removed by a cascade from it. Only the
    removal of a whole brand or test clock (its world) takes its records with it. The one
    exception to never changing: erasing a subject rewrites its records' `data` without its
    personal data (`timekeeping.subjects.scrubbing.records`, a raw UPDATE of `data` alone).
    """

    id = PublicIdField(prefix="rec")
    kind = models.CharField(max_length=64)
    instant = models.DateTimeField(help_text="When it happened, on the clock it happened on.")
    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="records")
    test_clock = models.ForeignKey(
        TestClock, null=True, blank=True, on_delete=models.CASCADE, related_name="records"
    )
    subject = models.CharField(max_length=48, blank=True, default="")
    job = models.CharField(max_length=48, blank=True, default="")
    timer = models.CharField(max_length=48, blank=True, default="")
    data = models.JSONField(default=dict, blank=True, encoder=DjangoJSONEncoder)
    # When the row was written, by the database's clock: on PostgreSQL the table is
    # partitioned by month of it (`timekeeping.tick.partitions`), so a firing's records go into
    # this month's indexes, whatever the years kept. Records from before partitioning say
    # 1970-01-01 00:00Z.
    written = models.DateTimeField(db_default=Now(), editable=False)

    objects = RecordQuerySet.as_manager()

    class Meta:
        ordering = ["instant", "id"]
        indexes = [
            models.Index(fields=["brand", "kind", "instant"], name="record_brand_kind"),
            models.Index(fields=["timer"], name="record_timer", condition=~models.Q(timer="")),
            # A subject's history, whatever the brand's other subjects have kept for years.
            models.Index(fields=["brand", "subject", "instant"], name="record_subject",
                         condition=~models.Q(subject="")),
            # A brand's events in the order they were written (the events API's pages).
            models.Index(fields=["brand", "written", "id"], name="record_brand_written"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} at {self.instant:%Y-%m-%d %H:%M:%SZ}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise AppendOnlyError("records are append-only: a saved record cannot change")
        kwargs["force_insert"] = True
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise AppendOnlyError("records are append-only: they cannot be deleted")
