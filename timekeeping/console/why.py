"""Why something has or has not fired or moved, in sentences (S25): the console's Why box.

    why(brand, text, now=None)  -> list[str]

`text` names one thing of the brand:

    tmr_…                 a timer: `arming.explain`, the words of `manage.py timers why`
    sch_… or a name       a schedule: `schedules.operate.why`, the words of `schedules why`
    clk_…[#item][@n]      a clock's dates (or `clk_… item`): each date's status, due and late
                          instants, and each of its timers explained
    table:id              a row of one of the brand's tables: its state, the timed move that
                          leaves it, its moment or why it has none, whether it is set aside

Everything is looked up within the brand: another brand's id answers exactly as a missing one
("No such timer tmr_… in this brand."). Each answer costs a bounded number of queries.
"""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

from django.db.models import F

from calendars.moments import zone_of
from timekeeping.automations import words
from timekeeping.basics import shown, wallclock
from timekeeping.models import (
    Brand,
    Clock,
    Connection,
    Job,
    Occurrence,
    Record,
    Schedule,
    SetAside,
    Subscription,
    TestClock,
    Timer,
)
from timekeeping.moves.moments import MomentOutOfRange
from timekeeping.moves.rows import Venue
from timekeeping.schedules import operate
from timekeeping.timers import arming

ROW = re.compile(r"(?P<table>[a-z][a-z0-9_]{0,40}):(?P<pk>\d{1,18})")
OCCURRENCE = re.compile(r"(?P<clock>clk_[A-Za-z0-9]{1,40})(?:(?:#|\s+)(?P<item>[^@\s]{1,64}))?"
                        r"(?:@(?P<seq>\d{1,6}))?")
NAME = re.compile(r"[a-z][a-z0-9_.-]{0,199}")
SHOWN = 20  # dates of one clock, schedules of one name
RUNS = ("automation.ran", "automation.stopped")
HELP = ("Ask about a timer (tmr_…), a schedule (sch_… or its name), a job's own time "
        "(job_…), a plan's subscription (sbn_…), a clock's dates (clk_…, with an item: "
        "clk_… US-CA) or a table row (table:id, such as orders:12).")


def why(brand: Brand, text: str, *, now: datetime | None = None) -> list[str]:
    text = (text or "").strip()[:300]
    now = now or wallclock.wall_now()
    zone = zone_of(brand.calendar_rules().zone_name)
    if text.startswith("tmr_"):
        return _timer(brand, text)
    if text.startswith("sch_"):
        return _schedules(brand, Schedule.objects.filter(pk=text), f"schedule {text}", now)
    if text.startswith("job_"):
        return _job(brand, text, zone, now)
    if text.startswith("sbn_"):
        return _subscription(brand, text)
    found = OCCURRENCE.fullmatch(text)
    if found:
        return _dates(brand, found, zone)
    found = ROW.fullmatch(text)
    if found:
        return _row(brand, found["table"], int(found["pk"]), now, zone)
    if NAME.fullmatch(text):
        return _schedules(brand, Schedule.objects.filter(name=text, active=True),
                          f"schedule named {text!r}", now)
    return [HELP]


def _job(brand: Brand, job_id: str, zone: ZoneInfo, now: datetime) -> list[str]:
    """A job's own time (docs/jobs.md): its deadlines, links and tasks, then its live timers,
    each told against the job's world."""
    job = Job.objects.select_related("test_clock").filter(brand=brand, pk=job_id).first()
    if job is None:
        return _missing(f"job {job_id}")
    world = job.test_clock.frozen_time if job.test_clock_id else now
    lines = [f"Job {job.pk} ({job.service} {job.period}".rstrip() + f") is {job.state}"
             + (f", on test clock {job.test_clock_id}" if job.test_clock_id else "") + "."]
    for deadline in job.deadlines.all()[:SHOWN]:
        running = (f"held by {deadline.held_by}" if deadline.running_since is None
                   else "counting")
        lines.append(f"Deadline on {deadline.what} (within {deadline.rule}): "
                     f"{deadline.get_state_display()}, {running}, late from "
                     f"{_at(deadline.ends, zone, world)}.")
    for ask in job.asks.all()[:SHOWN]:
        lines.append(f"Link for {ask.title}, asked of {ask.party}: {ask.get_state_display()}, "
                     f"works until {_at(ask.expires, zone, world)}"
                     + (" (opened once more)" if ask.expiries == 1 else "") + ".")
    for task in job.tasks.select_related("holder__user")[:SHOWN]:
        held = (f", held by {task.holder.user.get_username()} until "
                f"{_at(task.held_until, zone, world)}" if task.holder and task.held_until
                else "")
        lines.append(f"Task {task.title}: {task.get_state_display()}{held}.")
    for timer in Timer.objects.select_related("brand", "test_clock").filter(
            brand=brand, owner_id=job.pk, state__in=["armed", "held"]).order_by(
            "owed")[:SHOWN]:
        lines.append(arming.explain(timer))
    runs = Record.objects.filter(brand=brand, job=job.pk, kind__in=RUNS).order_by("-instant")
    return lines + [words.ran(record) for record in runs[:SHOWN]]


def _subscription(brand: Brand, subscription_id: str) -> list[str]:
    """A plan's subscription (docs/recurring.md): its cycle and its live timers (its next
    renewal and each schedule's next mint)."""
    found = Subscription.objects.select_related("brand", "test_clock").filter(
        brand=brand, pk=subscription_id).first()
    if found is None:
        return _missing(f"subscription {subscription_id}")
    lines = [f"Subscription {found.pk}: {found.subject_id} on {found.service} since "
             f"{found.anchor}, cycle {found.cycle}, {found.get_state_display()}"
             + (f", ending after cycle {found.ends_after}" if found.ends_after else "") + "."]
    for timer in Timer.objects.select_related("brand", "test_clock").filter(
            brand=brand, owner_id=found.pk, state="armed").order_by("owed")[:SHOWN]:
        lines.append(arming.explain(timer))
    return lines


def _missing(what: str) -> list[str]:
    return [f"No such {what} in this brand."]


def _at(instant: datetime, zone: ZoneInfo, now: datetime) -> str:
    return f"{shown.moment(instant, zone)} ({shown.relative(instant, now)})"


# -- timers and schedules: the words of `timers why` and `schedules why` ----------------------

def _timer(brand: Brand, timer_id: str) -> list[str]:
    timer = Timer.objects.select_related("brand", "test_clock").filter(
        brand=brand, pk=timer_id).first()
    if timer is None:
        return _missing(f"timer {timer_id}")
    lines = [arming.explain(timer)]
    if timer.owner_id:
        lines.append(f"It belongs to {timer.owner_type or 'its owner'} {timer.owner_id}"
                     f"{', armed by ' + timer.armed_by if timer.armed_by else ''}.")
    return lines


def _schedules(brand: Brand, rows, what: str, now: datetime) -> list[str]:
    # Schedules may live in another database (SCHEDULES_STORE, J6): filtered on their brand
    # column, and their test clocks read by a second query, never joined.
    real_first = F("test_clock_id").asc(nulls_first=True)
    found = list(rows.filter(brand_id=brand.pk).order_by(real_first, "pk")[:SHOWN])
    if not found:
        return _missing(what)
    worlds = dict(TestClock.objects.filter(
        brand=brand, pk__in=[row.test_clock_id for row in found if row.test_clock_id])
        .values_list("pk", "frozen_time"))
    lines = []
    for row in found:
        said = operate.why(row, now=worlds.get(row.test_clock_id, now))
        if row.test_clock_id:
            said = f"On test clock {row.test_clock_id}: {said}"
        lines.append(said)
    return lines


# -- a clock's dates -------------------------------------------------------------------------

def _dates(brand: Brand, found: re.Match, zone: ZoneInfo) -> list[str]:
    row = Clock.objects.select_related("test_clock").filter(brand=brand,
                                                            pk=found["clock"]).first()
    if row is None:
        return _missing(f"clock {found['clock']}")
    occurrences = row.occurrences.filter(brand=brand).order_by("item", "-seq")
    if found["item"]:
        occurrences = occurrences.filter(item=found["item"])
    if found["seq"]:
        occurrences = occurrences.filter(seq=int(found["seq"]))
    occurrences = list(occurrences[:SHOWN])
    if not occurrences:
        return _missing(f"date {found.group(0)}")
    now = wallclock.now(brand=brand, test_clock=row.test_clock)
    owned = Timer.objects.select_related("brand", "test_clock").filter(
        brand=brand, owner_id__in=[o.label for o in occurrences]).order_by("owed")
    by_owner: dict[str, list[Timer]] = {}
    for timer in owned[:SHOWN * 8]:
        by_owner.setdefault(timer.owner_id, []).append(timer)
    world = f" on test clock {row.test_clock_id}" if row.test_clock_id else ""
    lines = [f"{row.id} is '{row.title}' of job {row.job_id}, subject {row.subject_id}{world}."]
    for occurrence in occurrences:
        lines.append(_date(occurrence, zone, now))
        for timer in by_owner.get(occurrence.label, []):
            what = timer.payload.get("rung") or ("its date" if timer.payload.get("date")
                                                 else timer.kind)
            lines.append(f"· {what}: {arming.explain(timer)}")
    return lines


def _date(occurrence: Occurrence, zone: ZoneInfo, now: datetime) -> str:
    label = occurrence.label
    text = f"{label} is {occurrence.status}, due {occurrence.due}"
    if occurrence.rolled_from:
        text += f" (rolled from {occurrence.rolled_from}: {'; '.join(occurrence.roll_reasons)})"
    if occurrence.moved_from:
        text += f" (moved from {occurrence.moved_from} by {occurrence.moved_by})"
    text += f"; late from {_at(occurrence.late_from, zone, now)}"
    if occurrence.settled:
        text += f"; settled {_at(occurrence.settled, zone, now)} by {occurrence.settled_by}"
    if occurrence.acknowledged:
        text += f"; acknowledged {_at(occurrence.acknowledged, zone, now)}"
    return text + "."


# -- a table's row ---------------------------------------------------------------------------

def _row(brand: Brand, table: str, pk: int, now: datetime, zone: ZoneInfo) -> list[str]:
    name = f"{table}:{pk}"
    link = Connection.objects.select_related("brand").filter(brand=brand).first()
    venue = Venue.of(link) if link is not None else None
    spec = venue.tables.get(table) if venue is not None else None
    row = spec and venue.model(table).objects.using(link.database).filter(pk=pk).first()
    if not row:
        return _missing(f"table row {name}")
    return _row_state(venue, spec, row, name, now, zone) + _heard(brand, table, pk)


def _heard(brand: Brand, table: str, pk: int) -> list[str]:
    """What the brand's automations did when the row changed, newest first (issue 30)."""
    runs = Record.objects.filter(brand=brand, kind__in=RUNS, data__table=table, data__row=pk,
                                 test_clock__isnull=True).order_by("-instant", "-written")
    return [words.ran(record) for record in runs[:SHOWN]]


def _row_state(venue: Venue, spec, row, name: str, now: datetime, zone: ZoneInfo) -> list[str]:
    link, table, pk = venue.link, spec.name, row.pk
    if spec.states is None:
        return [f"{name} has no states: nothing moves it on its own."]
    state = getattr(row, spec.states.column)
    lines = [f"{name} is {state}."]
    rule = next((rule for rule in spec.states.timed if rule.from_state == state), None)
    if rule is None:
        leaving = ", ".join(f"{r.from_state} → {r.to}" for r in spec.states.timed) or "none"
        return lines + [f"No timed move leaves {state}, so it stays until someone moves it "
                        f"(the timed moves of {table}: {leaving})."]
    lines.append(_moment(venue, row, rule, now, zone))
    aside = SetAside.objects.filter(brand_id=link.brand_id, connection=link, table=table,
                                    row=pk, until__gt=now, test_clock__isnull=True
                                    ).order_by("-until").first()
    if aside is not None:
        lines.append(f"It is set aside until {_at(aside.until, zone, now)}: timed move "
                     f"{aside.rule} was refused ({aside.code}); the job tries it again then.")
    if link.paused:
        lines.append("The connection is paused: no timed move runs until it is resumed.")
    return lines + _backing_off(link, zone, now)


def _backing_off(link, zone: ZoneInfo, now: datetime) -> list[str]:
    """The connection's failed minutes (issue 31, `moves.parking`): when the job tries again,
    or that it is parked."""
    if link.parked:
        return [f"The timed moves failed {link.attempts} times in a row, the last "
                f"{_at(link.parked, zone, now)}, so they were parked: nothing moves until "
                "someone retries them or gives them up (Needs attention)."]
    if link.attempts and link.next_attempt:
        times = "once" if link.attempts == 1 else f"{link.attempts} times in a row"
        return [f"The timed moves failed {times}; the job tries again "
                f"{_at(link.next_attempt, zone, now)}, waiting longer after each failure."]
    return []


def _moment(venue: Venue, row, rule, now: datetime, zone: ZoneInfo) -> str:
    move = f"timed move {rule.number} ({rule.from_state} → {rule.to}, at its {rule.at['column']})"
    try:
        moment = venue.moment(row, rule.at)
    except MomentOutOfRange as error:
        return f"Its moment for {move} falls outside the calendar ({error}): the job sets it aside."
    if moment is None:
        return (f"Its {rule.at['column']} is empty, so {move} never moves it on its own "
                "(A3).")
    if moment <= now:
        return (f"Its moment for {move} was {_at(moment, zone, now)}: the next minute's job "
                f"moves it to {rule.to}.")
    return f"It moves to {rule.to} at {_at(moment, zone, now)}, by {move}."
