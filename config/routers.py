"""Database routing (SPEC J6): schedule state lives in the store `SCHEDULES_STORE` names.

`timekeeping.Schedule` and `timekeeping.ScheduleRun` are read and written there; everything
else stays where Django puts it (None: the default database, or the `using()` a caller
chose). The setting is read at each call, not at import, so tests can override it.
"""

from __future__ import annotations

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, models

SCHEDULE_MODELS = frozenset({("timekeeping", "schedule"), ("timekeeping", "schedulerun")})


def schedules_store() -> str | None:
    return getattr(settings, "SCHEDULES_STORE", None)


def is_schedule_model(app_label: str, model_name: str | None) -> bool:
    return (app_label, (model_name or "").lower()) in SCHEDULE_MODELS


def _is_schedule(model: type[models.Model] | models.Model) -> bool:
    return is_schedule_model(model._meta.app_label, model._meta.model_name)


class ScheduleStoreRouter:
    """Schedules and their runs to the store; what a schedule points at to the default."""

    def db_for_read(self, model, **hints) -> str | None:
        return self._route(model, hints)

    def db_for_write(self, model, **hints) -> str | None:
        return self._route(model, hints)

    @staticmethod
    def _route(model, hints) -> str | None:
        store = schedules_store()
        if store is None:
            return None
        if _is_schedule(model):
            return store
        instance = hints.get("instance")
        if instance is not None and _is_schedule(instance):
            # `schedule.brand`, `schedule.test_clock`: without an answer Django would read
            # them from the schedule's own database (the store), but brands and test clocks
            # live in the default one.
            return DEFAULT_DB_ALIAS
        return None

    def allow_relation(self, obj1, obj2, **hints) -> bool | None:
        # A schedule in the store points at its brand and test clock in the default
        # database: the foreign keys have no database constraint (db_constraint=False).
        if schedules_store() is not None and (_is_schedule(obj1) or _is_schedule(obj2)):
            return True
        return None

    def allow_migrate(self, db, app_label, model_name=None, **hints) -> bool | None:
        # `migrate --database <store>` makes the schedule tables there. Everything else keeps
        # Django's answer (every database), so the default database keeps (empty) schedule
        # tables too: deleting a brand there still finds its schedules to cascade to.
        if db == schedules_store() and is_schedule_model(app_label, model_name):
            return True
        return None
