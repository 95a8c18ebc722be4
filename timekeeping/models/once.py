from django.db import models

from timekeeping.basics import wallclock
from timekeeping.models.base import Model


class SpentToken(Model):
    """A form's one-time token, spent by the post that acted on it (issue 27): a second post
    with the same token (a double click, a resent form) changes nothing. The unique key is
    the guard: of two posts at once, one inserts and the other finds it taken."""

    token = models.CharField(max_length=64, primary_key=True)
    spent = models.DateTimeField(default=wallclock.wall_now)

    class Meta:
        indexes = [models.Index(fields=["spent"], name="spent_token_spent")]

    def __str__(self) -> str:
        return f"token spent {self.spent:%Y-%m-%d %H:%MZ}"
