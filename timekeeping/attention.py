"""What needs a person's attention at a brand (S25): what failed first, then what is slow.

    attention(brand, now=…)  -> Attention (items, failures first, newest first within each)

Failures: open faults of the brand's places, timers whose handler failed (still armed, with
attempts), runaway tick runs, failed schedule runs, deliveries that failed for good.
Warnings: skipped schedule runs, deliveries still pending an hour after they were written,
timers that fired more than five minutes late, rows the timed-move job set aside.
A job's own time: lapses (a job, a grant; failures). `work_at_risk` answers the rest of a job's
own time that is at risk, for the console's at-risk section.

A renewal in dunning (unpaid, its retries not over) is a warning; a subscription frozen after
them is a lapse for as long as it stays frozen.

Recent means the last seven days in the row's own world: the real clock's, or its test
clock's frozen time. Each source is one query of at most
`SHOWN` rows (one more is read to know there are more), whatever the data: a page that shows
this costs the same few queries for ten subjects or ten thousand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db.models import Count, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce

from timekeeping.models import (
    Ask,
    Brand,
    Deadline,
    Delivery,
    Fault,
    Record,
    ScheduleRun,
    SetAside,
    Subscription,
    Task,
    TickRun,
    Timer,
)
from timekeeping.spans import span_text

SHOWN = 10  # per source
RECENT = timedelta(days=7)
LATE = timedelta(minutes=5)
STUCK = timedelta(hours=1)  # a delivery still pending this long after it was written


@dataclass(frozen=True)
class Item:
    kind: str  # fault, failed timer, runaway, failed run, skipped run, undelivered, late,
    # set aside; lapse, dunning, deadline, link, hold
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
    found = _gathered(_sources(brand, now))
    # Failures first, then the newest first.
    found.items.sort(key=lambda item: item.at, reverse=True)
    found.items.sort(key=lambda item: not item.failure)
    return found


def _gathered(sources) -> Attention:
    """At most `SHOWN` items of each source, one query each, noting the kinds with more."""
    found = Attention()
    for kind, rows, said in sources:
        rows = list(rows[:SHOWN + 1])
        if len(rows) > SHOWN:
            found.more.append(kind)
        found.items += [said(row) for row in rows[:SHOWN]]
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
        ("set-aside rows", SetAside.objects.filter(brand=brand, until__gt=now)
         .order_by("-created"), _set_aside),
        # A job's own time (S6-S10, S23): lapses on the record, deadlines at risk or late,
        # links about to expire, holds about to end.
        ("lapses", Record.objects.filter(_since(brand, "instant", now, RECENT),
                                         kind__in=LAPSES).order_by("-instant"), _lapse),
        # A subscription frozen after its dunning, for as long as it stays frozen.
        ("frozen", Subscription.objects.filter(brand=brand, frozen_since__isnull=False)
         .annotate(held_mints=_held_mints()).order_by("-frozen_since"), _frozen),
        # A renewal unpaid, its dunning not over: the next retry, in its own world.
        ("dunning", Timer.objects.filter(brand=brand, kind="money", state=Timer.State.ARMED,
                                         payload__attempt__gt=0).order_by("owed"), _dunning),
    ]


def work_at_risk(brand: Brand, *, now: datetime) -> Attention:
    """A job's own time at risk, for the console's at-risk section: deadlines late (first) or
    at risk, links that expire within a week and holds that end within a day, each in its own
    world; each source one query of at most `SHOWN` rows."""
    found = _gathered([
        ("deadlines", Deadline.objects.filter(brand=brand, state__in=["at_risk", "late"])
         .order_by("-state", "ends"), _deadline),
        ("links", Ask.objects.filter(_before(brand, "expires", now, SOON), state="open")
         .order_by("expires"), _link),
        ("holds", Task.objects.filter(_before(brand, "held_until", now, timedelta(days=1)),
                                      state="held")
         .select_related("holder__user").order_by("held_until"), _hold),
    ])
    found.items.sort(key=lambda item: not item.failure)
    return found


# Every lapse (S23): a date, a hard date, a job, a grant. A link's second expiry is said by its
# job's lapse.
LAPSES = ("clock.lapsed", "job.lapsed", "grant.ended", "outcome.lapsed")


def _since(brand: Brand, field: str, now: datetime, within: timedelta) -> Q:
    """Rows of the brand whose `field` is no older than `within` in their own world: a lapse
    a test clock walked to in 2028 is recent on that clock, whatever the real date."""
    return Q(brand=brand) & (
        Q(test_clock__isnull=True, **{f"{field}__gte": now - within})
        | Q(test_clock__isnull=False, **{f"{field}__gte": F("test_clock__frozen_time") - within}))


def _before(brand: Brand, field: str, now: datetime, within: timedelta) -> Q:
    """Rows of the brand whose `field` comes within `within` of their own world's now: the
    real clock's, or their test clock's frozen time."""
    return Q(brand=brand) & (
        Q(test_clock__isnull=True, **{f"{field}__lt": now + within})
        | Q(test_clock__isnull=False, **{f"{field}__lt": F("test_clock__frozen_time") + within}))
SOON = timedelta(days=7)


def _world(row) -> str:
    return f" on test clock {row.test_clock_id}" if row.test_clock_id else ""


def _lapse(record: Record) -> Item:
    data = record.data if isinstance(record.data, dict) else {}
    date = (f"The {'hard ' if data.get('hard') else ''}date {data.get('name', '')}"
            f"{' ' + data['item'] if data.get('item') else ''} due {data.get('due')} passed "
            "unkept" + ("; the steps it bars are refused" if data.get("bars") else
                        "; its owner is asked to choose" if data.get("choices") else ""))
    said = {"clock.lapsed": f"{date} (job {record.job})",
            "job.lapsed": f"Job {record.job} lapsed: a party's link expired twice",
            "grant.ended": f"The grant on job {record.job} ended: steps that need it are "
                           "refused until the party gives it again",
            "outcome.lapsed": f"The outcome {data.get('outcome')} of job {record.job} lapsed: "
                              "no payment matched it by its due, and nothing is charged"}
    ref = data.get("clock", record.job) if record.kind == "clock.lapsed" else record.job
    return Item("lapse", True, record.instant, said[record.kind] + _world(record), ref=ref)


def _held_mints():
    """How many of a subscription's mints wait, held (a subquery: the source stays one
    query)."""
    held = Timer.objects.filter(owner_id=OuterRef("pk"), kind="schedule",
                                state=Timer.State.HELD).order_by().values("owner_id").annotate(
        count=Count("id")).values("count")
    return Coalesce(Subquery(held, output_field=IntegerField()), Value(0))


def _frozen(subscription: Subscription) -> Item:
    held = getattr(subscription, "held_mints", 0)
    mints = f"{held} mint{'' if held == 1 else 's'} held" if held else "no mint held yet"
    return Item("lapse", True, subscription.frozen_since,
                f"The renewal of {subscription.pk} ({subscription.service}) is unpaid after "
                "its dunning: its allowances are frozen and its mints held until it is paid "
                f"({mints})" + _world(subscription), ref=subscription.pk)


def _dunning(timer: Timer) -> Item:
    data = timer.payload
    return Item("dunning", False, timer.owed,
                f"The renewal of {data.get('subscription')} (cycle {data.get('cycle')}) is "
                f"unpaid: retry {data.get('attempt')} of its dunning looks again at "
                f"{timer.owed:%Y-%m-%d %H:%MZ}; the last one unpaid freezes it" + _world(timer),
                ref=data.get("subscription", ""))


def _deadline(deadline: Deadline) -> Item:
    late = deadline.state == "late"
    return Item("deadline", late, deadline.ends,
                f"The deadline on {deadline.what} of job {deadline.job_id} (within "
                f"{deadline.rule}) is {'late' if late else 'at risk'}{_world(deadline)}",
                ref=deadline.job_id)


def _link(ask: Ask) -> Item:
    return Item("link", False, ask.expires,
                f"The link for {ask.title} on job {ask.job_id} expires soon, unanswered by "
                f"{ask.party}" + (" (its second and last time)" if ask.expiries else "")
                + _world(ask), ref=ask.job_id)


def _hold(task: Task) -> Item:
    holder = task.holder.user.get_username() if task.holder else "someone"
    return Item("hold", False, task.held_until,
                f"{holder}'s hold on {task.title} (job {task.job_id}) ends soon"
                + _world(task), ref=task.job_id)


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
