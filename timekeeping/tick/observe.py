"""What an operator watches (docs/operating.md, "Watching it"): `/health/` for a load balancer,
`/health/tick` for a monitor, and `/metrics` in Prometheus's text format.

Every figure is of the real clock (test clocks are rehearsals) and is read when asked, one
query each. The timer figures read the tick's own partial indexes (armed timers, late ones),
the tick runs their last hour by an index of their own; nothing reads the history of fired
timers or records. Deliveries, set-aside rows and faults are counted whole: their tables hold
what is waiting or wrong, which housekeeping keeps small.
"""

from __future__ import annotations

import hmac
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count, DurationField, ExpressionWrapper, F, Max, Min, Q, Sum
from django.http import Http404, HttpResponse, JsonResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from timekeeping.basics import instants, wallclock
from timekeeping.models import (
    Delivery,
    Fault,
    ScheduleRun,
    SetAside,
    TickRun,
    Timer,
)
from timekeeping.schedules import engine as schedules
from timekeeping.tick import housekeeping
from timekeeping.timers import heartbeat, outbox

LATE = timedelta(minutes=5)  # a timer fired later than this is late (as needs attention says)
HOUR = timedelta(hours=1)


def tick_stale_after() -> timedelta:
    """How old the last tick may be before the tick counts as stopped (TICK_STALE_SECONDS)."""
    return timedelta(seconds=settings.TICK_STALE_SECONDS)


def health(now: datetime) -> tuple[bool, dict]:
    """Whether this web process can serve: its database answers. The tick's age is said
    beside it, not judged: a load balancer should not drop the web because cron stopped."""
    try:
        at = heartbeat.last_tick()  # reading the tick's heartbeat is the database answering
    except DatabaseError as error:
        return False, {"database": "unreachable", "error": type(error).__name__}
    return True, {"database": "ok", **_tick(now, at)}


def tick_health(now: datetime) -> tuple[bool, dict]:
    """Whether the tick runs: its last pass is no older than TICK_STALE_SECONDS."""
    ok, said = health(now)
    return ok and said.get("tick") == "running", said


def _tick(now: datetime, at: datetime | None) -> dict:
    if at is None:
        return {"tick": "never", "last_tick": None, "last_tick_age_s": None}
    age = max(now - at, timedelta(0))
    return {"tick": "running" if age <= tick_stale_after() else "stopped",
            "last_tick": instants.z(at),
            "last_tick_age_s": int(age.total_seconds())}


def token_ok(header: str) -> bool:
    """`Authorization: Bearer <METRICS_TOKEN>`, compared in constant time; no token set, no
    metrics."""
    wanted = settings.METRICS_TOKEN
    given = header.removeprefix("Bearer ") if header.startswith("Bearer ") else ""
    return bool(wanted) and hmac.compare_digest(given.encode(), wanted.encode())


class Figures(Collector):
    """The figures of one scrape, read at `now`."""

    def __init__(self, now: datetime):
        self.now = now

    def collect(self):
        yield from self.timer_figures()
        yield from self.tick_figures()
        yield from self.waiting_figures()

    def timer_figures(self):
        """The real clock's timers: armed and owed by place, how late the most overdue is,
        how many fired late in the last hour."""
        now = self.now
        real = Timer.objects.filter(test_clock__isnull=True).order_by()
        armed = GaugeMetricFamily("keeping_time_timers_armed",
                                  "Timers armed on the real clock, by place in the tick.",
                                  labels=["place"])
        owed = GaugeMetricFamily("keeping_time_timers_owed",
                                 "Armed timers owed by now (the tick has not fired them yet).",
                                 labels=["place"])
        counts = {place: (0, 0) for place in range(1, 9)}
        oldest = None  # the most overdue armed timer's owed time
        for row in real.filter(state=Timer.State.ARMED).values("place").annotate(
                n_armed=Count("id"), n_owed=Count("id", filter=Q(owed__lte=now)),
                first_owed=Min("owed", filter=Q(owed__lte=now))):
            counts[row["place"]] = (row["n_armed"], row["n_owed"])
            first = row["first_owed"]
            if first is not None and (oldest is None or first < oldest):
                oldest = first
        for place, (all_armed, all_owed) in sorted(counts.items()):
            armed.add_metric([str(place)], all_armed)
            owed.add_metric([str(place)], all_owed)
        yield armed
        yield owed
        yield GaugeMetricFamily(
            "keeping_time_firing_lag_seconds",
            "How late the most overdue armed timer is now: 0 when nothing is owed.",
            value=max((now - oldest).total_seconds(), 0) if oldest else 0)
        yield GaugeMetricFamily(
            "keeping_time_timers_fired_late_last_hour",
            f"Timers fired more than {int(LATE.total_seconds() // 60)} minutes late in the last "
            "hour.",
            value=real.filter(state=Timer.State.FIRED, late_by__gt=LATE,
                              fired__gte=now - HOUR).count())

    def tick_figures(self):
        """The tick: how late timers fired (the heartbeat's histogram), its age, and its brand
        clocks' runs in the last hour."""
        now = self.now
        at, late_by = heartbeat.heartbeat()
        cumulative, buckets = 0, []
        for bound, count in zip([*heartbeat.LATE_BY_BOUNDS, "+Inf"], late_by.counts, strict=True):
            cumulative += count
            buckets.append((str(bound), cumulative))
        yield HistogramMetricFamily(
            "keeping_time_timer_late_by_seconds",
            "How late the real clocks' timers fired (fired minus owed), counted by the ticks "
            "since the histogram began; percentiles by histogram_quantile over a rate.",
            buckets=buckets, sum_value=late_by.sum_s)
        yield GaugeMetricFamily("keeping_time_tick_age_seconds",
                                "Seconds since the last tick's pass (-1: never ticked).",
                                value=(now - at).total_seconds() if at else -1)
        yield GaugeMetricFamily("keeping_time_tick_stopped",
                                "1 when the last tick is older than TICK_STALE_SECONDS.",
                                value=int(_tick(now, at)["tick"] != "running"))
        runs = TickRun.objects.filter(test_clock__isnull=True, started__gte=now - HOUR,
                                      finished__isnull=False).order_by().aggregate(
            clocks=Count("id"), fired=Sum("fired"), passes=Max("passes"),
            longest=Max(ExpressionWrapper(F("finished") - F("started"),
                                          output_field=DurationField())))
        yield GaugeMetricFamily("keeping_time_tick_clock_runs_last_hour",
                                "Brand clocks ticked in the last hour.", value=runs["clocks"])
        yield GaugeMetricFamily("keeping_time_tick_fired_last_hour",
                                "Timers fired by the brand clocks ticked in the last hour.",
                                value=runs["fired"] or 0)
        yield GaugeMetricFamily("keeping_time_tick_clock_seconds_max",
                                "The longest brand clock's tick in the last hour.",
                                value=runs["longest"].total_seconds() if runs["longest"] else 0)
        yield GaugeMetricFamily("keeping_time_tick_passes_max",
                                "The most passes one brand clock's tick took in the last hour.",
                                value=runs["passes"] or 0)

    def waiting_figures(self):
        """What waits or is wrong: deliveries, set-aside rows, failed schedule runs, stopped
        work, open faults."""
        now = self.now
        states = dict(Delivery.objects.filter(state__in=[
            Delivery.State.PENDING, Delivery.State.RUNNING, Delivery.State.FAILED]).order_by()
            .values_list("state").annotate(n=Count("id")))
        deliveries = GaugeMetricFamily("keeping_time_outbox_deliveries",
                                   "Deliveries waiting, sending, or failed for good.",
                                   labels=["state"])
        for state in ("pending", "running", "failed"):
            deliveries.add_metric([state], states.get(state, 0))
        yield deliveries
        waiting = Delivery.objects.filter(state=Delivery.State.PENDING).aggregate(
            first=Min("created"))["first"]
        yield GaugeMetricFamily("keeping_time_outbox_oldest_pending_seconds",
                                "Age of the oldest delivery waiting to be sent.",
                                value=(now - waiting).total_seconds() if waiting else 0)
        yield GaugeMetricFamily("keeping_time_set_aside_rows",
                                "Rows the timed-move job set aside and is still leaving alone.",
                                value=SetAside.objects.filter(test_clock__isnull=True,
                                                               until__gt=now).count())
        yield GaugeMetricFamily("keeping_time_schedule_failures_last_hour",
                                "Schedule runs that failed in the last hour.",
                                value=ScheduleRun.objects.filter(
                                    outcome=ScheduleRun.Outcome.FAILED,
                                    tick__gte=now - HOUR).count())
        stopped = GaugeMetricFamily(
            "keeping_time_stopped_work",
            "Work found stopped by its state and age, which the tick takes up again: deliveries "
            "still sending past their lease (sent again under their idempotency key), schedule "
            "runs still running past their schedule's lease (ended lease_expired), tick runs "
            "unfinished for an hour whose clock they no longer hold (marked abandoned).",
            labels=["kind"])
        # What counts as stopped is what the tick takes up: the same querysets.
        stopped.add_metric(["delivery_sending"], Delivery.objects.filter(
            outbox.sending_past_lease(now)).count())
        stopped.add_metric(["schedule_run_running"], schedules.lost_runs(now).count())
        stopped.add_metric(["tick_run_unfinished"], housekeeping.stale_runs(now).count())
        yield stopped
        yield GaugeMetricFamily("keeping_time_faults_open",
                                "Places of the tick failing now (a brand clock, a connection, "
                                "a phase).",
                                value=Fault.objects.filter(resolved__isnull=True).count())


# -- the doors --------------------------------------------------------------------------------

def health_view(request):
    """GET /health/: 200 while the database answers, 503 when it does not; the tick's age
    beside it. No session, no secret: it says nothing about any brand."""
    ok, said = health(wallclock.wall_now())
    return JsonResponse(said, status=200 if ok else 503)


def tick_health_view(request):
    """GET /health/tick: 503 once the last tick is older than TICK_STALE_SECONDS (or there
    was none), for a monitor that pages someone."""
    ok, said = tick_health(wallclock.wall_now())
    return JsonResponse(said, status=200 if ok else 503)


def metrics_view(request):
    """GET /metrics with `Authorization: Bearer <METRICS_TOKEN>`: the figures in Prometheus's
    text format. Without the token (or with none set) it answers 404, as a page that is not
    there."""
    if request.method != "GET" or not token_ok(request.headers.get("Authorization", "")):
        raise Http404
    registry = CollectorRegistry(auto_describe=False)
    registry.register(Figures(wallclock.wall_now()))
    answer = HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
    answer["Cache-Control"] = "no-store"
    return answer
