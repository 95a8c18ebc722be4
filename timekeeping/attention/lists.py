"""What needs a person's attention at a brand (S25): what failed first, then what is slow.

    attention(brand, now=…)  -> Attention (items, failures first, newest first within each)
    of_subject(subject, now=…) -> list[Item]  one subject's recent lapses, for its page

Failures: open faults of the brand's places, timers whose handler failed (still armed, with
attempts, backing off), timers, schedules and the timed moves of a connection parked after too
many failures (issue 31; the parked connection's own fault, and a parked schedule's failed
runs, are said by its parked item), runaway tick runs, failed schedule runs, deliveries that
failed for good.
Warnings: skipped schedule runs, deliveries still pending an hour after they were written,
timers that fired more than five minutes late, rows the timed-move job set aside.
A job's own time: lapses (a job, a grant; failures). Lapses with no date of their own (S23):
a mint its schedule could not open and a seat of record left empty (failures), periods a
catch-up skipped (a warning), each saying who heard. `work_at_risk` answers the rest of a job's
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
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from django.db.models import Count, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.urls import reverse

from timekeeping import clocks
from timekeeping.attention import settling
from timekeeping.basics import refusals, shown
from timekeeping.basics.spans import span_text
from timekeeping.clocks import lapses
from timekeeping.models import (
    Ask,
    Brand,
    Connection,
    Deadline,
    Delivery,
    Fault,
    Job,
    Record,
    Schedule,
    ScheduleRun,
    SetAside,
    Subject,
    Subscription,
    Task,
    TestClock,
    TickRun,
    Timer,
    WebhookEndpoint,
)
from timekeeping.webhooks import telling

SHOWN = 10  # per source
RECENT = timedelta(days=7)
LATE = timedelta(minutes=5)
STUCK = timedelta(hours=1)  # a delivery still pending this long after it was written


@dataclass(frozen=True)
class Item:
    kind: str  # fault, failed timer, runaway, failed run, skipped run, undelivered, late,
    # set aside; lapse, not opened, catch-up, seat, dunning, deadline, link, hold
    failure: bool
    at: datetime  # when it happened, UTC
    text: str  # one sentence in the owner's words (WORDS.md), without times: the page shows
    # `at` in the brand's zone
    ref: str = ""  # an id the Why box answers for (a timer, a schedule), or ""
    details: str = ""  # the engine's own words: ids, codes, errors (the page's Details)
    job: str = ""  # the job it is about: `_named` puts the job's name before the text
    test_clock: str | None = None  # the test world it happened in: `at` is of its time
    row: str = ""  # the row the item's actions act on (settling.ACTIONS), or ""
    subject: str = ""  # the subject whose page settles it, or ""
    page: str = ""  # another page that shows it (an endpoint's log), or ""

    @property
    def actions(self) -> tuple[tuple[str, str], ...]:
        """What settles it (`settling.ACTIONS`): a failed delivery is sent again, a warning
        dismissed with a reason; none for an item its subject's page settles."""
        actions = settling.ACTIONS.get(self.kind, ()) if self.row else ()
        return tuple(each for each in actions if each[0] != "retry" or self.failure)

    @property
    def owner_only(self) -> bool:
        """Only the brand's owner may take its actions (`settling.OWNER_ONLY`)."""
        return self.kind in settling.OWNER_ONLY

    @property
    def said(self) -> str:
        """The kind as the owner reads it."""
        return KINDS_SAID.get(self.kind, self.kind)


KINDS_SAID = {"fault": "failed", "failed timer": "failed", "runaway": "stopped",
              "failed run": "failed", "skipped run": "skipped", "undelivered": "not sent",
              "late": "late", "set aside": "held back", "lapse": "missed",
              "not opened": "not opened", "catch-up": "skipped", "seat": "no one named",
              "dunning": "unpaid", "deadline": "deadline", "link": "link", "hold": "hold",
              "webhook off": "stopped", "parked": "parked", "parked moves": "parked",
              "parked schedule": "parked"}


@dataclass
class Attention:
    items: list[Item] = field(default_factory=list)
    more: list[str] = field(default_factory=list)  # kinds with more than SHOWN

    @property
    def failures(self) -> int:
        return sum(1 for item in self.items if item.failure)


def attention(brand: Brand, *, now: datetime, world: TestClock | None = None) -> Attention:
    """What needs attention in one world: live (the default) or one test clock's (issue 27's
    test mode). Faults, schedule runs, deliveries and held rows belong to no test world: they
    are live."""
    found = _named(_gathered(_sources(brand, now, world)))
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


def _sources(brand: Brand, now: datetime,
             world: TestClock | None) -> list[tuple[str, object, Callable[..., Item]]]:
    live = _live(brand, now) if world is None else []
    if world is not None:
        now = world.frozen_time
    since, on = now - RECENT, _on_world(world)
    return live + [
        ("failed timers", Timer.objects.filter(brand=brand, state=Timer.State.ARMED,
                                               attempts__gt=0, **on)
         .order_by("-attempts", "owed"), _failed_timer),
        ("parked timers", Timer.objects.filter(brand=brand, state=Timer.State.HELD,
                                               parked__isnull=False, **on)
         .order_by("-parked"), _parked_timer),
        # Schedules may live in another database (SCHEDULES_STORE, J6): by their brand column.
        # One no longer declared runs no more: not a person's to settle.
        ("parked schedules", Schedule.objects.filter(brand_id=brand.pk, parked__isnull=False,
                                                     active=True, **on).order_by("-parked"),
         _parked_schedule),
        ("runaways", TickRun.objects.filter(brand=brand, runaway=True, started__gte=since,
                                            **on)
         .exclude(pk__in=settling.dismissed(brand, "runaway")).order_by("-started"), _runaway),
        # A job's own time (S6-S10, S23): lapses on the record, deadlines at risk or late,
        # links about to expire, holds about to end.
        # A lapse a late notice withdrew (the date reopened, issue 29) no longer stands.
        ("lapses", Record.objects.filter(_since(brand, "instant", now, RECENT),
                                         kind__in=LAPSES, **on)
         .exclude(pk__in=clocks.withdrawn_lapses(brand)).order_by("-instant"), _lapse),
        # What lapsed with no date of its own (S23): mints not opened, catch-ups' skipped
        # periods, seats of record left empty.
        ("unopened", Record.objects.filter(_since(brand, "instant", now, RECENT),
                                           kind__in=UNOPENED, **on).order_by("-instant"),
         _unopened),
        # A subscription frozen after its dunning, for as long as it stays frozen.
        ("frozen", Subscription.objects.filter(brand=brand, frozen_since__isnull=False, **on)
         .select_related("subject").annotate(held_mints=_held_mints())
         .order_by("-frozen_since"), _frozen),
        # A renewal unpaid, its dunning not over: the next retry, in its own world.
        ("dunning", Timer.objects.filter(brand=brand, kind="money", state=Timer.State.ARMED,
                                         payload__attempt__gt=0, **on).order_by("owed"),
         _dunning),
    ]


def _on_world(world: TestClock | None) -> dict:
    """The filter that keeps a query to one world: a test clock's, or live (none)."""
    return {"test_clock": world} if world is not None else {"test_clock__isnull": True}


def _live(brand: Brand, now: datetime) -> list[tuple[str, object, Callable[..., Item]]]:
    """The sources that belong to no test world: the engine's own faults, schedule runs,
    deliveries, rows held back and timers that fired late on the real clock."""
    since = now - RECENT
    return [
        ("faults", Fault.objects.filter(brand=brand, resolved__isnull=True)
         .exclude(phase=Fault.Phase.MOVES, where__in=Connection.objects.filter(
             brand=brand, parked__isnull=False).values("pk"))
         .order_by("-last_seen"), _fault),
        ("parked moves", Connection.objects.filter(brand=brand, parked__isnull=False),
         _parked_moves),
        # Schedule runs may live in another database (SCHEDULES_STORE, J6): filtered on the
        # schedule's brand column, never joined to the brand.
        # A parked schedule's failed runs are said by its parked item (its runs and it are in
        # the same store, so the join stays in one database).
        ("schedule runs", ScheduleRun.objects.filter(
            schedule__brand_id=brand.pk, tick__gte=since,
            outcome__in=[ScheduleRun.Outcome.FAILED, ScheduleRun.Outcome.SKIPPED])
         .exclude(outcome=ScheduleRun.Outcome.FAILED, schedule__parked__isnull=False)
         .exclude(pk__in=_runs_dismissed(brand, since))
         .select_related("schedule").order_by("outcome", "-tick"), _run),
        # A webhook's deliveries are its endpoint's log; an endpoint turned off needs a person.
        ("deliveries", Delivery.objects.filter(brand=brand, channel=Delivery.Channel.EMAIL)
         .filter(
            Q(state=Delivery.State.FAILED)
            | Q(state=Delivery.State.PENDING, created__lt=now - STUCK))
         .exclude(pk__in=settling.dismissed(brand, "undelivered"))
         .order_by("state", "-created"), _delivery),
        # An endpoint the sender turned off (a 410, five days failing); not one its owner did.
        ("webhooks off", WebhookEndpoint.objects.filter(
            brand=brand, enabled=False, disabled__in=OFF_BY_SENDER).order_by("-disabled_at"),
         _webhook_off),
        ("set-aside rows", SetAside.objects.filter(brand=brand, test_clock__isnull=True,
                                                   until__gt=now)
         .order_by("-created"), _set_aside),
        # Late on the real clock only: a test clock's time jumps, and nothing there is late.
        ("late timers", Timer.objects.filter(brand=brand, test_clock__isnull=True,
                                             state=Timer.State.FIRED, fired__gte=since,
                                             late_by__gt=LATE)
         .exclude(pk__in=settling.dismissed(brand, "late")).order_by("-fired"), _late),
    ]


def _runs_dismissed(brand: Brand, since: datetime) -> list[str]:
    """The schedule runs dismissed since `since` (runs may live in another database, so read
    as a list: a run shown is no older than `since`, and so is its dismissal)."""
    return [row for kind in ("failed run", "skipped run")
            for row in settling.dismissed(brand, kind, since=since).values_list("row",
                                                                                flat=True)]


def work_at_risk(brand: Brand, *, now: datetime,
                 world: TestClock | None = None) -> Attention:
    """A job's own time at risk, for the console's at-risk section: deadlines late (first) or
    at risk, links that expire within a week and holds that end within a day, in one world
    (live, or a test clock's); each source one query of at most `SHOWN` rows."""
    on = _on_world(world)
    found = _gathered([
        ("deadlines", Deadline.objects.filter(brand=brand, state__in=["at_risk", "late"], **on)
         .order_by("-state", "ends"), _deadline),
        ("links", Ask.objects.filter(_before(brand, "expires", now, SOON), state="open", **on)
         .order_by("expires"), _link),
        ("holds", Task.objects.filter(_before(brand, "held_until", now, timedelta(days=1)),
                                      state="held", **on)
         .select_related("holder__user").order_by("held_until"), _hold),
    ])
    found.items.sort(key=lambda item: not item.failure)
    return _named(found)


def _named(found: Attention) -> Attention:
    """Each item about a job begins with the job's name ("Juniper Labs' 2027 annual-return"),
    read in one query for all of them."""
    jobs = {item.job for item in found.items if item.job}
    if not jobs:
        return found
    named = {job.pk: job for job in Job.objects.filter(pk__in=jobs)
             .select_related("subject").only("pk", "service", "period", "subject__name")}
    found.items = [replace(item, text=f"{job_name(named[item.job])}: {_joined(item.text)}",
                           subject=item.subject or named[item.job].subject_id)
                   if item.job in named else item for item in found.items]
    return found


def _joined(text: str) -> str:
    """A sentence after a name and a colon: "The deadline …" reads "the deadline …"; a name
    stays as it is."""
    first, _, rest = text.partition(" ")
    return f"{first.lower()} {rest}" if first in {"The", "A", "It"} else text


def job_name(job: Job) -> str:
    """A job as people name it: "Juniper Labs' 2027 annual-return"."""
    owner = job.subject.name
    return f"{owner}{chr(39) if owner.endswith('s') else chr(39) + 's'} " \
           f"{(job.period + ' ' if job.period else '')}{shown.service(job.service)}"


# Every lapse (S23): a date, a hard date, a job, a grant. A link's second expiry is said by its
# job's lapse.
LAPSES = ("clock.lapsed", "job.lapsed", "grant.ended", "outcome.lapsed", "clock.no_date")


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
    return f" (test world {row.test_clock_id})" if row.test_clock_id else ""


def _lapse(record: Record) -> Item:
    data = record.data if isinstance(record.data, dict) else {}
    due = shown.day_of(data.get("due"))
    date = (f"The {'fixed ' if data.get('hard') else ''}{data.get('name', '')} date"
            f"{' for ' + data['item'] if data.get('item') else ''}{' of ' + due if due else ''} "
            "was missed" + ("; what it bars can no longer be recorded" if data.get("bars") else
                            "; someone needs to choose what happens next"
                            if data.get("choices") else ""))
    said = {"clock.lapsed": date,
            "job.lapsed": "It was missed: a link expired twice without an answer",
            "grant.ended": "A permission ended: what needs it waits until it is given again",
            "outcome.lapsed": f"No payment matched the outcome {data.get('outcome')} by its "
                              "date, so nothing is charged",
            # S23: a job opened without one of its dates; nothing reminds anyone of it.
            "clock.no_date": f"The {data.get('name', '')} date"
                             f"{' for ' + data['item'] if data.get('item') else ''} could not "
                             f"be set ({data.get('why', 'no reason kept')}), so no reminder "
                             "will come for it"}
    dated = record.kind in ("clock.lapsed", "clock.no_date")
    ref = data.get("clock", record.job) if dated else record.job
    return Item("lapse", True, record.instant, said[record.kind], ref=ref, job=record.job or "",
                test_clock=record.test_clock_id, subject=record.subject,
                details=f"{record.kind} · job {record.job}{_world(record)}")


# Lapses with no date of their own (S23), each with who heard (`clocks.lapses`).
UNOPENED = ("schedule.mint_refused", "schedule.catch_up_skipped", "subject.of_record_lapsed")


def _unopened(record: Record) -> Item:
    data = record.data if isinstance(record.data, dict) else {}
    name, told = data.get("subject_name") or "A subject", lapses.told_text(data.get("told"))
    work = f"{shown.service(str(data.get('service', '')))} for {name}"
    if record.kind == "schedule.mint_refused":
        item = Item("not opened", True, record.instant,
                    f"The {data.get('period')} {work} was not opened on its schedule: "
                    f"{data.get('said')}", ref=data.get("subscription", ""),
                    details=f"{record.kind} · {data.get('code')} · {data.get('field')}: "
                            f"{data.get('why')} · schedule {data.get('schedule')} of "
                            f"{data.get('subscription')}")
    elif record.kind == "schedule.catch_up_skipped":
        count = data.get("count") or 0
        item = Item("catch-up", False, record.instant,
                    f"The {work} was not opened for {count} "
                    f"period{'' if count == 1 else 's'} missed while no tick ran "
                    f"({', '.join(data.get('periods') or [])}): its schedule opens only "
                    f"{'the latest' if data.get('catch_up') == 'last' else 'what is on time'}",
                    ref=data.get("subscription", ""),
                    details=f"{record.kind} · catch_up {data.get('catch_up')} · schedule "
                            f"{data.get('schedule')} of {data.get('subscription')} · next "
                            f"{data.get('next')}")
    else:
        item = Item("seat", True, record.instant,
                    f"{data.get('member_name') or 'A member'} left {name} with no one named "
                    f"to take over: {_count(data.get('dates'), 'date')} and "
                    f"{_count(data.get('tasks'), 'task')} are back with your practice; "
                    "assign them to someone",
                    details=f"{record.kind} · member {data.get('member')}")
    return replace(item, text=f"{item.text}. {told}" if told else item.text,
                   subject=record.subject, test_clock=record.test_clock_id,
                   details=item.details + _world(record))


def _count(n: object, word: str) -> str:
    n = n if isinstance(n, int) else 0
    return f"{n} {word}{'' if n == 1 else 's'}"


def of_subject(subject: Subject, *, now: datetime) -> list[Item]:
    """What needs attention about one subject, for its page: its recent lapses (last seven
    days in its own world), dated or not, newest first, less those a late notice withdrew;
    one query, and one for job names."""
    rows = Record.objects.filter(_since(subject.brand, "instant", now, RECENT),
                                 subject=subject.pk, kind__in=LAPSES + UNOPENED
                                 ).exclude(pk__in=clocks.withdrawn_lapses(subject.brand)
                                           ).order_by("-instant")[:SHOWN]
    return _named(Attention([_unopened(row) if row.kind in UNOPENED else _lapse(row)
                             for row in rows])).items


def _held_mints():
    """How many of a subscription's mints wait, held (a subquery: the source stays one
    query)."""
    held = Timer.objects.filter(owner_id=OuterRef("pk"), kind="schedule",
                                state=Timer.State.HELD).order_by().values("owner_id").annotate(
        count=Count("id")).values("count")
    return Coalesce(Subquery(held, output_field=IntegerField()), Value(0))


def _frozen(subscription: Subscription) -> Item:
    held = getattr(subscription, "held_mints", 0)
    waiting = (f"{held} piece{'' if held == 1 else 's'} of work wait" if held
               else "nothing waits yet")
    return Item("lapse", True, subscription.frozen_since,
                f"{subscription.subject.name}'s {shown.plan(subscription.service)} is on hold: its "
                f"renewal is still unpaid after the reminders, so its allowances are paused "
                f"and new work waits until it is paid ({waiting})", ref=subscription.pk,
                test_clock=subscription.test_clock_id, subject=subscription.subject_id,
                details=f"subscription {subscription.pk} frozen{_world(subscription)}")


def _dunning(timer: Timer) -> Item:
    data = timer.payload
    return Item("dunning", False, timer.owed,
                f"A plan's renewal (cycle {data.get('cycle')}) is unpaid: reminder "
                f"{data.get('attempt')} is out, and if the last one goes unpaid the plan goes "
                "on hold", ref=data.get("subscription", ""), test_clock=timer.test_clock_id,
                details=f"subscription {data.get('subscription')} · dunning retry "
                        f"{data.get('attempt')} · timer {timer.id}{_world(timer)}")


def _deadline(deadline: Deadline) -> Item:
    late = deadline.state == "late"
    return Item("deadline", late, deadline.ends,
                f"The deadline for {deadline.what} ({deadline.rule}) "
                f"{'has passed with the work not done' if late else 'is close'}",
                ref=deadline.job_id, job=deadline.job_id, test_clock=deadline.test_clock_id,
                details=f"deadline {deadline.pk} of job {deadline.job_id}{_world(deadline)}")


def _link(ask: Ask) -> Item:
    return Item("link", False, ask.expires,
                f"{ask.party} has not answered the link for {ask.title}, and it expires soon"
                + (" (its second and last time)" if ask.expiries else ""),
                ref=ask.job_id, job=ask.job_id, test_clock=ask.test_clock_id,
                details=f"ask {ask.pk} of job {ask.job_id}{_world(ask)}")


def _hold(task: Task) -> Item:
    holder = shown.person(task.holder.user) if task.holder else "Someone"
    return Item("hold", False, task.held_until, f"{holder}'s hold on {task.title} ends soon",
                ref=task.job_id, job=task.job_id, test_clock=task.test_clock_id,
                details=f"task {task.pk} of job {task.job_id}{_world(task)}")


def _last_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1].rstrip(".") if lines else "no error kept"


def _fault(fault: Fault) -> Item:
    times = "once" if fault.count == 1 else f"{fault.count} times"
    # A connection's timed moves back off (issue 31): not tried again each minute.
    again = ("; they are tried again later, waiting longer after each failure"
             if fault.phase == Fault.Phase.MOVES else "")
    return Item("fault", True, fault.last_seen,
                f"The {fault.get_phase_display()} failed {times} and has not worked since; "
                f"the rest of your brand's work goes on{again}", row=fault.pk,
                details=f"{fault.where}: {_last_line(fault.error)}")


def _parked_moves(link: Connection) -> Item:
    return Item("parked moves", True, link.parked,
                f"The timed moves of your tables failed {link.attempts} times in a row, so "
                "they were parked: no row moves on its own until you retry them or give them "
                "up", row=link.pk,
                details=f"connection {link.pk} (database {link.database}): "
                        f"{_last_line(link.last_error)}")


def _on(timer: Timer) -> str:
    return f"timer {timer.id} ({timer.kind}, for {timer.owner_id or timer.key}){_world(timer)}"


def _failed_timer(timer: Timer) -> Item:
    return Item("failed timer", True, timer.owed,
                f"A scheduled {shown.kind(timer.kind)} failed "
                f"{timer.attempts} time{'' if timer.attempts == 1 else 's'} in a row; it "
                "is tried again later, waiting longer after each failure", ref=timer.id,
                test_clock=timer.test_clock_id,
                details=f"{_on(timer)}: {_last_line(timer.last_error)}")


def _parked_timer(timer: Timer) -> Item:
    return Item("parked", True, timer.parked,
                f"A scheduled {shown.kind(timer.kind)} failed {timer.attempts} times in a "
                "row, so it was parked: it is not tried again until you retry it or give it "
                "up", ref=timer.id, test_clock=timer.test_clock_id, row=timer.pk,
                details=f"{_on(timer)}: {_last_line(timer.last_error)}")


def _parked_schedule(row: Schedule) -> Item:
    return Item("parked schedule", True, row.parked,
                f"The {row.name} schedule failed {_count(row.attempts, 'time')} in a row, "
                "so it was parked: it does not run until you retry it or give it up",
                ref=row.pk,
                test_clock=row.test_clock_id, row=row.pk,
                details=f"schedule {row.pk} ({row.action}){_world(row)}: "
                        f"{_last_line(row.last_error)}")


def _runaway(run: TickRun) -> Item:
    world = f"test world {run.test_clock_id}" if run.test_clock_id else "the real clock"
    return Item("runaway", True, run.started,
                f"Scheduled work kept setting off more work at one moment, so it was stopped "
                f"after {run.passes} rounds ({run.fired} done)", test_clock=run.test_clock_id,
                row=run.pk,
                details=f"tick run {run.pk} on {world}: runaway after {run.passes} passes")


def _run(run: ScheduleRun) -> Item:
    failed = run.outcome == ScheduleRun.Outcome.FAILED
    # Backing off (issue 31): not tried again at each of its times.
    again = ("; it is tried again later, waiting longer after each failure"
             if failed and run.schedule.attempts else "")
    return Item("failed run" if failed else "skipped run", failed, run.tick,
                f"The {run.schedule.name} schedule {'failed' if failed else 'was skipped'}"
                f"{' (run by hand)' if run.by_hand else ''}{again}",
                ref=run.schedule_id, row=run.pk,
                details=f"{run.schedule_id}: {(run.reason or 'no reason kept').rstrip('.')}")


def _delivery(delivery: Delivery) -> Item:
    what = delivery.payload.get("subject") or "a message"
    if delivery.state == Delivery.State.FAILED:
        return Item("undelivered", True, delivery.created,
                    f"The {delivery.channel} '{what}' could not be sent after "
                    f"{delivery.attempts} tries", row=delivery.pk,
                    details=f"{delivery.id}: {_last_line(delivery.last_error)}")
    return Item("undelivered", False, delivery.created,
                f"The {delivery.channel} '{what}' is still waiting to be sent "
                f"({delivery.attempts} tries so far)", row=delivery.pk, details=delivery.id)


def _late(timer: Timer) -> Item:
    return Item("late", False, timer.fired,
                f"A scheduled {shown.kind(timer.kind)} ran "
                f"{span_text(timer.late_by)} late: no tick ran in the meantime", ref=timer.id,
                row=timer.pk,
                details=f"{_on(timer)} fired {span_text(timer.late_by)} late")


OFF_BY_SENDER = (WebhookEndpoint.Disabled.GONE, WebhookEndpoint.Disabled.FAILING)


def _webhook_off(endpoint: WebhookEndpoint) -> Item:
    return Item("webhook off", True, endpoint.disabled_at or endpoint.created,
                f"Events no longer go to {endpoint}: we turned it off because "
                f"{telling.WHY[endpoint.disabled]}. Events are still kept: turn it on again "
                "and it is sent what it missed", row=endpoint.pk,
                page=reverse("console:webhook", args=[endpoint.brand_id, endpoint.pk]),
                details=f"endpoint {endpoint.pk} · {endpoint.url} · disabled {endpoint.disabled}")


def _set_aside(row: SetAside) -> Item:
    return Item("set aside", False, row.created,
                refusals.set_aside(row.table, row.row, "", row.code).rstrip(".")
                + "; it is tried again after the hour",
                ref=f"{row.table}:{row.row}", row=str(row.pk),
                details=f"{row.table}:{row.row} · timed move {row.rule} · {row.code}")
