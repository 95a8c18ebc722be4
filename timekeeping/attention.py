"""What needs a person's attention at a brand (S25): what failed first, then what is slow.

    attention(brand, now=…)  -> Attention (items, failures first, newest first within each)

Failures: open faults of the brand's places, timers whose handler failed (still armed, with
attempts), runaway tick runs, failed schedule runs, deliveries that failed for good.
Warnings: skipped schedule runs, deliveries still pending an hour after they were written,
timers that fired more than five minutes late, rows the timed-move job set aside.

Recent means the last seven days on the real clock. Each source is one query of at most
`SHOWN` rows (one more is read to know there are more), whatever the data: a page that shows
this costs the same few queries for ten subjects or ten thousand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Q

from timekeeping.models import Brand, Delivery, Fault, ScheduleRun, SetAside, TickRun, Timer
from timekeeping.spans import span_text

SHOWN = 10  # per source
RECENT = timedelta(days=7)
LATE = timedelta(minutes=5)
STUCK = timedelta(hours=1)  # a delivery still pending this long after it was written


@dataclass(frozen=True)
class Item:
    kind: str  # fault, failed timer, runaway, failed run, skipped run, undelivered, late, set aside
    failure: bool
    at: datetime  # when it happened, UTC
    text: str  # one sentence, without times: the page shows `at` in the brand's zone
    ref: str = ""  # an id the Why box answers for (a timer, a schedule), or ""


@dataclass
class Attention:
    items: list[Item] = field(default_factory=list)
    more: list[str] = field(default_factory=list)  # kinds with more than SHOWN

    @property
    def failures(self) -> int:
        return sum(1 for item in self.items if item.failure)


def attention(brand: Brand, *, now: datetime) -> Attention:
    found = Attention()
    for kind, rows, said in _sources(brand, now):
        rows = list(rows[:SHOWN + 1])
        if len(rows) > SHOWN:
            found.more.append(kind)
        found.items += [said(row) for row in rows[:SHOWN]]
    # Failures first, then the newest first.
    found.items.sort(key=lambda item: item.at, reverse=True)
    found.items.sort(key=lambda item: not item.failure)
    return found


def _sources(brand: Brand, now: datetime) -> list[tuple[str, object, Callable[..., Item]]]:
    since = now - RECENT
    return [
        ("faults", Fault.objects.filter(brand=brand, resolved__isnull=True)
         .order_by("-last_seen"), _fault),
        ("failed timers", Timer.objects.filter(brand=brand, state=Timer.State.ARMED,
                                               attempts__gt=0).order_by("-attempts", "owed"),
         _failed_timer),
        ("runaways", TickRun.objects.filter(brand=brand, runaway=True, started__gte=since)
         .order_by("-started"), _runaway),
        # Schedule runs may live in another database (SCHEDULES_STORE, J6): filtered on the
        # schedule's brand column, never joined to the brand.
        ("schedule runs", ScheduleRun.objects.filter(
            schedule__brand_id=brand.pk, tick__gte=since,
            outcome__in=[ScheduleRun.Outcome.FAILED, ScheduleRun.Outcome.SKIPPED])
         .select_related("schedule").order_by("outcome", "-tick"), _run),
        ("deliveries", Delivery.objects.filter(brand=brand).filter(
            Q(state=Delivery.State.FAILED)
            | Q(state=Delivery.State.PENDING, created__lt=now - STUCK))
         .order_by("state", "-created"), _delivery),
        ("late timers", Timer.objects.filter(brand=brand, test_clock__isnull=True,
                                             state=Timer.State.FIRED, fired__gte=since,
                                             late_by__gt=LATE).order_by("-fired"), _late),
        ("set-aside rows", SetAside.objects.filter(connection__brand=brand, until__gt=now)
         .order_by("-created"), _set_aside),
    ]


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1].rstrip(".") if lines else "no error kept"


def _fault(fault: Fault) -> Item:
    times = "once" if fault.count == 1 else f"{fault.count} times"
    return Item("fault", True, fault.last_seen,
                f"The {fault.get_phase_display()} of {fault.where} failed {times} and has not "
                f"succeeded since: {_last_line(fault.error)}")


def _on(timer: Timer) -> str:
    world = f" on test clock {timer.test_clock_id}" if timer.test_clock_id else ""
    return f"{timer.id} ({timer.kind}, for {timer.owner_id or timer.key}){world}"


def _failed_timer(timer: Timer) -> Item:
    return Item("failed timer", True, timer.owed,
                f"Timer {_on(timer)} failed {timer.attempts} time(s) and is still owed: "
                f"{_last_line(timer.last_error)}", ref=timer.id)


def _runaway(run: TickRun) -> Item:
    world = f"test clock {run.test_clock_id}" if run.test_clock_id else "the real clock"
    return Item("runaway", True, run.started,
                f"A runaway chain of timers on {world}: the tick stopped it after "
                f"{run.passes} passes ({run.fired} fired)")


def _run(run: ScheduleRun) -> Item:
    failed = run.outcome == ScheduleRun.Outcome.FAILED
    return Item("failed run" if failed else "skipped run", failed, run.tick,
                f"Schedule {run.schedule.name} {'failed' if failed else 'was skipped'}"
                f"{' (run by hand)' if run.by_hand else ''}: "
                f"{(run.reason or 'no reason kept').rstrip('.')}",
                ref=run.schedule_id)


def _delivery(delivery: Delivery) -> Item:
    what = delivery.payload.get("subject") or delivery.payload.get("url") or delivery.id
    if delivery.state == Delivery.State.FAILED:
        return Item("undelivered", True, delivery.created,
                    f"The {delivery.channel} '{what}' was not delivered after "
                    f"{delivery.attempts} attempts: {_last_line(delivery.last_error)}")
    return Item("undelivered", False, delivery.created,
                f"The {delivery.channel} '{what}' is still waiting to be sent "
                f"({delivery.attempts} attempts so far)")


def _late(timer: Timer) -> Item:
    return Item("late", False, timer.fired,
                f"Timer {_on(timer)} fired {span_text(timer.late_by)} late", ref=timer.id)


def _set_aside(row: SetAside) -> Item:
    return Item("set aside", False, row.created,
                f"{row.table}:{row.row} is set aside: timed move {row.rule} was refused "
                f"({row.code}); the job tries it again after the hour",
                ref=f"{row.table}:{row.row}")
