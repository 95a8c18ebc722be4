"""Purge schedules (SPEC J10): a model that declares a lifecycle purge gets an hourly
`<Model>.purge` schedule, keyed by its born name, deleting at most 20 batches of 500 rows
older than its `purge_after` (by its `purge_field`) each run; the run counts the items.

    class TickRun(models.Model):
        purge_after = timedelta(days=30)
        purge_field = "started"
"""

from __future__ import annotations

from django.apps import apps

from timekeeping.basics import wallclock
from timekeeping.schedules.declare import Declared, action

BATCHES = 20
BATCH_SIZE = 500
EVERY_S = 3600


def purged_models() -> list:
    return [model for model in apps.get_models() if getattr(model, "purge_after", None)]


def _action_name(model) -> str:
    return f"purge.{model._meta.app_label}_{model._meta.model_name}"


def register_actions() -> None:
    """One purge action per model that declares a purge (called when the app is ready)."""
    for model in purged_models():
        action(_action_name(model))(_purger(model))


def _purger(model):
    def purge_old() -> int:
        return purge(model)

    return purge_old


def schedules() -> list[Declared]:
    return [Declared(f"{model.__name__}.purge", _action_name(model), EVERY_S, "purge")
            for model in purged_models()]


def purge(model) -> int:
    """Delete rows past their age in at most 20 batches of 500; the number deleted."""
    older = wallclock.wall_now() - model.purge_after
    deleted = 0
    for _ in range(BATCHES):
        keys = list(model.objects.filter(**{f"{model.purge_field}__lt": older})
                    .values_list("pk", flat=True)[:BATCH_SIZE])
        if not keys:
            break
        deleted += model.objects.filter(pk__in=keys).delete()[0]
    return deleted
