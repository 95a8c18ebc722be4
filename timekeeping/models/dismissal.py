"""What a brand's people set aside from "Needs attention" (issue 27): a warning they have read,
dismissed with a reason, so it leaves the list."""

from django.db import models

from timekeeping.models.base import Model
from timekeeping.models.brand import Brand


class Dismissal(Model):
    """One item dismissed: its kind (as `attention.Item.kind`) and the id of its row."""

    brand = models.ForeignKey(Brand, on_delete=models.CASCADE, related_name="dismissals")
    kind = models.CharField(max_length=20)
    row = models.CharField(max_length=64)
    reason = models.CharField(max_length=300)
    by = models.CharField(max_length=200)
    at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["brand", "kind", "row"],
                                               name="dismissal_once")]
