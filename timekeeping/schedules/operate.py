"""What operators do with schedules (SPEC J11): list, history, pause, resume, run by hand,
and why, in a sentence. The command and the admin both call these."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q

from timekeeping.basics import shown, wallclock
from timekeeping.basics.spans import span_text
from timekeeping.models import Brand, Schedule, ScheduleRun
from timekeeping.timers import heartbeat


class NotFound(Exception):
    pass


def find(name: str, *, brand: str | None = None) -> Schedule:
    """A schedule by its name (and brand id or slug, where several brands share a name)."""
    found = Schedule.objects.filter(name=name, active=True, test_clock__isnull=True)
    if brand:
        # Brands may live in another database than schedules (SCHEDULES_STORE, J6): find
        # the brand's id first, never by a join or a subquery across the two.
        ids = list(Brand.objects.filter(Q(pk=brand) | Q(slug=brand)).values_list("pk",
                                                                                 flat=True))
        found = found.filter(brand_id__in=ids)
    found = list(found.prefetch_related("brand"))  # a second query, in the brands' database
    if not found:
        raise NotFound(f"NAME: no schedule named {name!r}"
                       + (f" for brand {brand!r}" if brand else ""))
    if len(found) > 1:
        brands = ", ".join(row.brand.slug if row.brand else "(code)" for row in found)
        raise NotFound(f"NAME: {len(found)} schedules are named {name!r} (brands: {brands}); "
                       "add --brand")
    return found[0]


def listing() -> list[Schedule]:
    """Every active schedule on a real clock, by name, with its brand (for `schedules list`).
    The brands come by a second query, never a join: they may live in another database
    (SCHEDULES_STORE, J6)."""
    return list(Schedule.objects.filter(active=True, test_clock__isnull=True)
                .prefetch_related("brand").order_by("name"))


def pause(row: Schedule) -> None:
    Schedule.objects.filter(pk=row.pk).update(paused=True)


def resume(row: Schedule) -> None:
    Schedule.objects.filter(pk=row.pk).update(paused=False)


def run_by_hand(row: Schedule) -> bool:
    """Asks the next tick to run it once, beside its grid (which does not move). False for a
    parked schedule, which no tick runs: retrying it runs it (`schedules.parking`)."""
    return Schedule.objects.filter(pk=row.pk, parked__isnull=True).update(
        run_requested=True) == 1


def history(row: Schedule, limit: int = 20) -> list[ScheduleRun]:
    return list(row.runs.order_by("-tick")[:limit])


def when_text(every_s: int, at: str) -> str:
    """How a schedule's time reads: "every 15m", "at mon 09:00 Europe/London"."""
    return f"at {at}" if at else f"every {every_text(every_s)}"


def every_text(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def why(row: Schedule, *, now: datetime | None = None) -> str:
    now = now or wallclock.wall_now()
    parts = [f"{row.name} runs {row.action} " + when_text(row.every_s, row.at)]
    if row.parked is not None:
        parts.append(f"it is parked: it failed {_times(row.attempts)} in a row, the last at "
                     f"{row.parked:%Y-%m-%d %H:%M:%SZ}, so no tick runs it until someone "
                     "retries it or gives it up")
    elif row.paused:
        parts.append("it is paused: each due time is recorded as skipped (paused) until it is "
                     "resumed")
    elif row.next_due is None:
        parts.append("no tick has seen it yet; its first run is one interval after the first")
    else:
        wait = row.next_due - now
        when = "now, at the next tick" if wait.total_seconds() <= 0 else f"in {span_text(wait)}"
        parts.append(f"it runs next at {row.next_due:%Y-%m-%d %H:%M:%SZ} ({when}), "
                     + ("its wall time in its zone; late, it runs once at the next tick" if row.at
                        else "on its grid of UTC times"))
        if row.attempts:
            parts.append(_backing_off(row.attempts))
    if row.run_requested:
        parts.append("a run by hand is asked for at the next tick")
    last_bad = row.runs.exclude(outcome__in=["succeeded", "running"]).order_by("-tick").first()
    if last_bad is not None:
        parts.append(f"its last {'skip' if last_bad.outcome == 'skipped' else 'failure'} was "
                     f"due {last_bad.due:%Y-%m-%d %H:%M:%SZ}: {last_bad.reason}")
    return "; ".join(parts) + "."


def _backing_off(attempts: int) -> str:
    return (f"it failed {_times(attempts)} in a row, so that is its first time after a wait "
            "that grows with each failure")


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def ticks_stopped(now: datetime | None = None) -> str | None:
    """A warning once the last tick is older than TICK_STALE_SECONDS (the same threshold as
    /health/tick and /metrics), else None."""
    now = now or wallclock.wall_now()
    last = heartbeat.last_tick()
    if last is None:
        return "No tick has run yet: add the cron line (see docs/operating.md)."
    if now - last > timedelta(seconds=settings.TICK_STALE_SECONDS):
        return (f"Ticks stopped: nothing has run on its own for {shown.span(now - last)} (the "
                f"last tick ran {shown.moment(last, 'UTC')}). Check the cron line.")
    return None
