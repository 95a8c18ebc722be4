"""System checks: configuration the schedules need (SPEC J6)."""

from django.conf import settings
from django.core.checks import Error

ROUTER = "config.routers.ScheduleStoreRouter"
TAG = "timekeeping"  # the product's checks, which `manage.py tick` runs (it skips Django's)


def schedule_store(app_configs, **kwargs):
    """With several databases, the schedules' store must be named (SCHEDULES_STORE), be one
    of them, and be routed to (without the router the setting would change nothing)."""
    databases = list(settings.DATABASES)
    store = getattr(settings, "SCHEDULES_STORE", None)
    if len(databases) > 1 and store is None:
        return [Error("schedule.store_required: several databases are configured; name the "
                      "one that keeps schedule state with SCHEDULES_STORE",
                      id="timekeeping.E001")]
    if store is not None and store not in databases:
        return [Error(f"schedule.store_required: SCHEDULES_STORE names {store!r}, which is not "
                      f"a configured database ({', '.join(databases)})", id="timekeeping.E002")]
    if store is not None and ROUTER not in settings.DATABASE_ROUTERS:
        return [Error(f"schedule.store_required: SCHEDULES_STORE names {store!r}, but "
                      f"DATABASE_ROUTERS lacks {ROUTER!r}, so schedule state would stay in "
                      "the default database", id="timekeeping.E003")]
    return []
