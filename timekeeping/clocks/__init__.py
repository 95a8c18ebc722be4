"""Clocks: the dates the world sets, their occurrences, rungs, moves and lapses (SPEC S12-S16).

Opening a job opens each clock its Service declares: one occurrence per item with `each`
(one per period with `every`), whose civil date comes from the due rule, rolled on the
subject's calendar (a `clock.rolled` record with the reasons) and closing at `late_from` in
the subject's zone. Each rung is a timer in place 6 that rings at `rings_at` on its day, N
calendar days before the date kept, even when that day is closed; the date itself is a timer
at `late_from`. A move (a step the clock lists in `moves`, or the calendar's postponement)
changes the date kept and re-arms the rungs under the same keys: the old timers are
superseded, and a rung whose day has already passed fires in place.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction

from calendars import rules
from calendars.models import Calendar, Postponement
from calendars.moments import day_in_zone
from timekeeping.basics import instants
from timekeeping.clocks import changed, dues, emails, exposure, gate
from timekeeping.models import (
    Brand,
    Clock,
    Job,
    Manifest,
    Member,
    Occurrence,
    Subject,
    TestClock,
    Timer,
)
from timekeeping.specs import tiers
from timekeeping.specs.current import services_of
from timekeeping.specs.services import ClockSpec, ServiceSpec, parse_every
from timekeeping.timers import arming, firing, outbox, records

KIND = "clock"
ACK_ASKED = emails.ACK_ASKED  # the rung an `ack daily` rung notices with (kinds/clock.py)


class PeriodTaken(Exception):
    """A subject already holds a job of this Service for this period (SPEC S17)."""


class OrderRefused(Exception):
    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


# -- the calendar a subject's dates fall on ---------------------------------------------------

def calendar_for(subject: Subject) -> rules.Calendar:
    """The brand's calendar, read in the subject's zone: a due closes in the subject's zone."""
    base = subject.brand.calendar_rules()
    if not subject.zone or subject.zone == base.zone:
        return base
    return rules.Calendar(zone=subject.zone, weekends=base.weekends, holidays=base.holidays,
                          closed=base.closed, closes=base.closes, rings_at=base.rings_at,
                          roll=base.roll_rule)


now_for = firing.now_for


# -- opening a job ----------------------------------------------------------------------------

def order(*, brand: Brand, service: str, subject: Subject, period: str = "", input: dict | None
          = None, by: str = "") -> Job:
    """Open a job of `service` for `subject` and `period`, and open its clocks, on the
    subject's clock (its test clock, if it was made on one).

    A second order for the same subject, Service and period raises PeriodTaken and changes
    nothing (it charges nothing)."""
    test_clock = subject.test_clock
    version, spec = offered(brand, service, subject)
    check_live(brand, subject, spec)
    input = input or {}
    _check_order(spec, period, {**subject.input, **input})
    now = now_for(brand, test_clock)
    # Whole or absent: the job, its record, its clocks and their timers commit together.
    with transaction.atomic():
        try:
            with transaction.atomic():
                job = Job.objects.create(brand=brand, test_clock=test_clock, subject=subject,
                                         service=service, period=period, input=input,
                                         bundle=version.bundle, opened=now)
        except IntegrityError:
            raise PeriodTaken(f"{subject.pk} already holds a {service} job for period "
                              f"{period!r}") from None
        records.write("job.opened", brand=brand, instant=now, test_clock=test_clock,
                      subject=subject.pk, job=job.pk,
                      data={"service": service, "period": period, "by": by,
                            "bundle": version.bundle})
        # A clock whose date follows another clock opens after the clocks it follows.
        for clock_spec in sorted(spec.clocks.values(), key=lambda c: "clock" in c.due):
            _open_clock(job, spec, clock_spec, now)
        for opened in _on_open:  # the job's own time (timekeeping.jobs), after its clocks
            opened(job, spec, now)
    return job


# What else opens with a job, and ends with it: registered by the kinds that keep a job's own
# time (timekeeping.jobs), so the clocks import none of them.
_on_open: list = []
_on_end: list = []


def on_open(function):
    _on_open.append(function)
    return function


def on_end(function):
    _on_end.append(function)
    return function


def offered(brand: Brand, service: str, subject: Subject) -> tuple[Manifest, ServiceSpec]:
    """The brand's current manifest version and its `service`, for `subject`: refused,
    naming the field, when there is no manifest, no such service, or a subject of another
    kind. Ordering a job and subscribing to a plan both start here."""
    version = Manifest.objects.filter(brand=brand).order_by("-version").first()
    if version is None:
        raise OrderRefused("service", "the brand has no manifest yet")
    spec = services_of(version.bundle).get(service)
    if spec is None:
        raise OrderRefused("service", f"{service!r} is not a service of the brand's manifest")
    if spec.subject_kind and subject.kind != spec.subject_kind:
        raise OrderRefused("subject", f"{service!r} is for a {spec.subject_kind}, "
                                      f"not a {subject.kind}")
    return version, spec


def check_live(brand: Brand, subject: Subject, spec: ServiceSpec) -> None:
    """Live (a subject on the real clock), only the keys the brand's plan has (S26); on a
    test clock every key runs."""
    if subject.test_clock_id is not None:
        return
    try:
        tiers.check_live(brand.plan, spec)
    except tiers.PlanLacksKey as lacking:
        raise OrderRefused("service", f"{tiers.PlanLacksKey.code}: {lacking}") from None


def _check_order(spec: ServiceSpec, period: str, given: dict) -> None:
    """Refuse, naming the field, a period or an input date the job's dates cannot be read
    from, or that lies outside the dates kept."""
    if spec.period.of != "none":
        try:
            end = spec.period.end_of(period, given)
        except OverflowError:  # a year past the calendar's end
            end = date.max
        if end is None:
            raise OrderRefused("period", f"{period!r} is not a {spec.period.of} period")
        if not instants.in_span(end):
            raise OrderRefused("period", f"{period!r} ends outside the dates kept "
                                         f"({instants.SPAN})")
    for field in sorted(_input_dates(spec)):
        if given.get(field) not in (None, ""):
            try:
                instants.parse_date(given[field], field=f"input.{field}")
            except ValueError as error:
                raise OrderRefused(f"input.{field}",
                                   str(error).removeprefix(f"input.{field}: ")) from None


def _input_dates(spec: ServiceSpec) -> set[str]:
    """The input fields the Service's due rules read as dates."""
    found = set()
    for clock_spec in spec.clocks.values():
        for rule in (clock_spec.due, *clock_spec.moves.values()):
            for each in (rule, *(rule.get("items") or {}).values()):
                if isinstance(each.get("input"), str):
                    found.add(each["input"])
    return found


def _open_clock(job: Job, service: ServiceSpec, spec: ClockSpec, now: datetime) -> Clock:
    row = Clock.objects.create(
        brand=job.brand, test_clock=job.test_clock, subject=job.subject, job=job,
        name=spec.name, title=spec.title.replace("{period}", job.period), owner=spec.owner,
        hard=spec.hard, lives_on_subject=spec.lives_on_subject, bundle=job.bundle, opened=now,
    )
    for item in items_of(job, spec):
        _open_occurrence(row, spec, item, seq=0)
    return row


def items_of(job: Job, spec: ClockSpec) -> list[str]:
    if not spec.each:
        return [""]
    found = job.input.get(spec.each, job.subject.input.get(spec.each, []))
    return [str(item) for item in found]


def _open_occurrence(row: Clock, spec: ClockSpec, item: str, seq: int) -> Occurrence | None:
    try:
        rule_due = _rule_due(row, spec, spec.due, item, seq)
    except (OverflowError, ValueError):  # past the end of the calendar itself
        rule_due = date.max
    why = "its due rule gave no date"
    if rule_due is None and "after_kept" in spec.due:
        measured = spec.due["after_kept"]
        why = (f"it is measured from {measured['clock']} {measured.get('item', item)}, which "
               "this job does not keep").replace("  ", " ")
    if rule_due is not None and not instants.in_span(rule_due):
        if not seq:  # opening the job: the order is refused, and nothing of it is kept
            raise OrderRefused("period", f"the {spec.name} date {rule_due} falls outside the "
                                         f"dates kept ({instants.SPAN})")
        rule_due, why = None, f"its next date {rule_due} falls outside the dates kept"
    if rule_due is None:
        records.write("clock.no_date", brand=row.brand, instant=now_for(row.brand,
                      row.test_clock), test_clock=row.test_clock, subject=row.subject_id,
                      job=row.job_id,
                      data={"clock": row.id, "name": row.name, "item": item, "why": why})
        return None
    price = exposure.price(spec.exposure)
    occurrence = Occurrence(clock=row, item=item, seq=seq, rule_due=rule_due, due=rule_due,
                            brand_id=row.brand_id, test_clock_id=row.test_clock_id,
                            hard=row.hard, miss_cost=price.monthly if price else 0,
                            miss_currency=price.currency if price else "")
    _keep(occurrence, rule_due, by="")  # sets the date kept and late_from
    _apply_postponements(occurrence)
    occurrence.save()
    arm(occurrence, spec)
    return occurrence


def _rule_due(row: Clock, spec: ClockSpec, rule: dict, item: str, seq: int) -> date | None:
    job = row.job
    service = services_of(row.bundle)[job.service]
    context = dues.DueContext(
        period_end=service.period.end_of(job.period, job.input),
        job_input={**job.subject.input, **job.input},
        item=item, job=job, other_clock=lambda name, other_item: _other_due(job, name,
                                                                            other_item),
        other_kept=lambda name, other_item: _other_kept(row, name, other_item),
        period=job.period)
    found = dues.evaluate(rule, context)
    if found is not None and seq and spec.every:
        found = found + parse_every(spec.every) * seq  # counted from the first: no drift
    return found


def _other_due(job: Job, name: str, item: str) -> date | None:
    of_clock = Occurrence.objects.filter(brand_id=job.brand_id, clock__job=job, clock__name=name)
    occurrence = of_clock.filter(item=item).first() or of_clock.first()
    return occurrence.due if occurrence else None


def _other_kept(row: Clock, name: str, item: str) -> tuple[date | None, date] | None:
    """When another clock's item of the job was kept (the day, in the subject's zone; None
    while it is not) and the date its due rule first gave; None when the job has no such
    date."""
    occurrence = Occurrence.objects.filter(
        brand_id=row.brand_id, clock__job_id=row.job_id, clock__name=name,
        item=item).order_by("-seq").first()
    if occurrence is None:
        return None
    kept = day_in_zone(occurrence.settled, calendar_for(row.subject).zone_name) \
        if occurrence.status == Occurrence.Status.SATISFIED else None
    return kept, occurrence.rule_due


def _measure_from(kept: Occurrence) -> None:
    """The dates of the job measured from when `kept` was kept (`after_kept`: a refund window
    runs from the filing) open now, or move to it if they had a date already."""
    row = kept.clock
    measured = measured_from_it(kept)
    if not measured:
        return
    for other in Clock.objects.filter(job_id=row.job_id, name__in=[s.name for s in measured]
                                      ).select_related("job__subject", "subject", "brand",
                                                       "test_clock"):
        spec = spec_of(other)
        found = Occurrence.objects.filter(clock=other).order_by("-seq").first()
        if found is None:
            _open_occurrence(other, spec, "", seq=0)
            continue
        day = _rule_due(other, spec, spec.due, found.item, found.seq)
        if found.status == Occurrence.Status.OPEN and day is not None and \
                day not in (found.due, found.rolled_from):
            _move_to(found, spec, day, by=row.name + MEASURED, roll=True)


def measured_from_it(kept: Occurrence) -> list[ClockSpec]:
    """The clocks of the job whose dates are measured from when `kept` is kept. Read from the
    service's clocks: keeping a date asks nothing more of the database unless one is."""
    row = kept.clock
    return [spec for spec in services_of(row.bundle)[row.job.service].clocks.values()
            if (spec.due.get("after_kept") or {}).get("clock") == row.name
            and spec.due["after_kept"].get("item", kept.item) == kept.item]


MEASURED = " kept"  # how a move by `after_kept` is said: `by: "file kept"`


def measured_from(moved_by: str) -> str | None:
    """The clock a date was measured from, when a keeping moved it (`after_kept`)."""
    return moved_by.removesuffix(MEASURED) if moved_by.endswith(MEASURED) else None


def _keep(occurrence: Occurrence, day: date, *, by: str) -> None:
    """Set the date kept: roll it on the subject's calendar and record the roll."""
    cal = calendar_for(occurrence.clock.subject)
    rolled = cal.roll(day)
    occurrence.due = rolled.date
    occurrence.rolled_from = rolled.rolled_from
    occurrence.roll_reasons = rolled.reasons
    occurrence.late_from = cal.late_from(rolled.date)
    if rolled.rolled_from is not None:
        row = occurrence.clock
        records.write("clock.rolled", brand=row.brand, instant=now_for(row.brand,
                      row.test_clock), test_clock=row.test_clock, subject=row.subject_id,
                      job=row.job_id, data={"clock": row.id, "name": row.name,
                                            "item": occurrence.item,
                                            "from": rolled.rolled_from, "to": rolled.date,
                                            "why": rolled.reasons, "by": by or "due rule"})


# -- rungs ------------------------------------------------------------------------------------

def spec_of(row: Clock) -> ClockSpec:
    return services_of(row.bundle)[row.job.service].clocks[row.name]


def arm(occurrence: Occurrence, spec: ClockSpec, *, why: str = "") -> None:
    """Arm (or re-arm, after a move) the occurrence's rungs and its date, under stable keys."""
    row = occurrence.clock
    cal = calendar_for(row.subject)
    wanted = {}
    for rung in spec.rungs:
        wanted[f"{occurrence.label}:{rung.text}"] = (
            cal.rings(occurrence.due - timedelta(days=rung.days)), {"rung": rung.text})
    wanted[f"{occurrence.label}:date"] = (occurrence.late_from, {"date": True})
    live = arming.clock_timers(row.brand, row.test_clock).filter(
        owner_id=occurrence.label, state__in=[Timer.State.ARMED, Timer.State.HELD])
    for stale in live.exclude(key__in=list(wanted)):
        arming.end(stale.id, state=Timer.State.SUPERSEDED, by=why or "re-armed")
    for key, (owed, payload) in wanted.items():
        arming.rearm(brand=row.brand, test_clock=row.test_clock, kind=KIND, key=key, owed=owed,
                     why=why or "re-armed", owner_type="occurrence", owner_id=occurrence.label,
                     owner_opened=row.job.opened, bundle=row.bundle,
                     payload={"occurrence": occurrence.pk, **payload})


def end_timers(occurrence: Occurrence, why: str) -> None:
    row = occurrence.clock
    for timer_id in arming.clock_timers(row.brand, row.test_clock).filter(
            owner_id=occurrence.label, state__in=[Timer.State.ARMED, Timer.State.HELD]
    ).values_list("id", flat=True):
        arming.end(timer_id, state=Timer.State.SUPERSEDED, by=why)


# -- what steps do ----------------------------------------------------------------------------

def open_occurrences(job: Job, *, hard: bool | None = None):
    found = Occurrence.objects.filter(brand_id=job.brand_id, clock__job=job,
                                      status=Occurrence.Status.OPEN)
    return found if hard is None else found.filter(clock__hard=hard)


def satisfy(job: Job, step: str, items: list[str], at: datetime) -> list[str]:
    """Satisfy the open occurrences this step keeps. With `each`, only an item's own step
    satisfies it (the step names the item)."""
    kept = []
    # A lapsed date is still kept by its step, late: the record says so.
    for occurrence in Occurrence.objects.filter(
            brand_id=job.brand_id, clock__job=job,
            status__in=[Occurrence.Status.OPEN, Occurrence.Status.LAPSED],
    ).select_related("clock"):
        spec = spec_of(occurrence.clock)
        if step not in spec.satisfied_by:
            continue
        if occurrence.item and occurrence.item not in items:
            continue
        _settle(occurrence, spec, by=step, at=at)
        kept.append(f"{occurrence.clock.name} {occurrence.item or ''}".strip())
    return kept


def _settle(occurrence: Occurrence, spec: ClockSpec, *, by: str, at: datetime,
            noted: dict | None = None):
    """Keep the date; `noted` joins its record (what an undo needs: who, what it was)."""
    late = occurrence.status == Occurrence.Status.LAPSED
    occurrence.status = Occurrence.Status.SATISFIED
    occurrence.settled, occurrence.settled_by = at, by
    occurrence.save(update_fields=["status", "settled", "settled_by"])
    end_timers(occurrence, f"satisfied by {by}")
    written = _record(occurrence, "clock.satisfied", {"by": by, "due": occurrence.due,
                                                      "late": late, **(noted or {})})
    _measure_from(occurrence)
    if spec.every:
        _open_occurrence(occurrence.clock, spec, occurrence.item, occurrence.seq + 1)
    return written


def mark_done(occurrence: Occurrence, *, by: str):
    """Its owner marks a date kept by hand: the way to keep a date that outlived its job,
    or one no step of the Service covers. Answers the `clock.satisfied` record, which names
    who and what the date was before (`timekeeping.clocks.undo` reads it)."""
    if occurrence.status not in (Occurrence.Status.OPEN, Occurrence.Status.LAPSED):
        raise OrderRefused("item", f"the date is {occurrence.status}; only an open or lapsed "
                                   "date can be marked done")
    at = now_for(occurrence.clock.brand, occurrence.clock.test_clock)
    return _settle(occurrence, spec_of(occurrence.clock), by=f"marked done by {by}", at=at,
                   noted={"who": by, "occurrence": occurrence.pk,
                          "was": changed.was(occurrence)})


def move(job: Job, step: str, items: list[str]) -> list[str]:
    """Move the occurrences a committed step covers, each by its clock's rule for that step."""
    moved = []
    for occurrence in open_occurrences(job, hard=False).select_related("clock"):
        spec = spec_of(occurrence.clock)
        # With `each`, a step moves only the items it names (as it satisfies only those).
        if step not in spec.moves or (occurrence.item and occurrence.item not in items):
            continue
        new_day = _rule_due(occurrence.clock, spec, spec.moves[step], occurrence.item,
                            occurrence.seq)
        if new_day is None or new_day in (occurrence.due, occurrence.rolled_from):
            continue  # already there: a step taken again moves nothing
        moved.append(_move_to(occurrence, spec, new_day, by=step, roll=True))
    return moved


def _move_to(occurrence: Occurrence, spec: ClockSpec, day: date, *, by: str, roll: bool,
             notice: str = "") -> str:
    before = occurrence.due
    if roll:
        _keep(occurrence, day, by=by)
    else:
        occurrence.due, occurrence.rolled_from, occurrence.roll_reasons = day, None, []
        occurrence.late_from = calendar_for(occurrence.clock.subject).late_from(day)
    occurrence.moved_from, occurrence.moved_by = before, by
    occurrence.acknowledged = None  # a new date is acknowledged anew
    occurrence.save()
    data = {"by": by, "from": before, "to": occurrence.due, "rolled_from":
            occurrence.rolled_from}
    if notice:
        data["notice"] = notice
    _record(occurrence, "clock.moved", data)
    arm(occurrence, spec, why=f"moved to {occurrence.due} by {by}")
    rolled = (f", rolled from {occurrence.rolled_from}" if occurrence.rolled_from else "")
    return f"{occurrence.item or occurrence.clock.name} {before} → {occurrence.due}{rolled}"


def date_passed(job: Job, step: str, items: list[str], now: datetime) -> Occurrence | None:
    """The hard date (of this job, or living on its subject) that bars `step` and has passed."""
    for occurrence in Occurrence.objects.filter(
            brand_id=job.brand_id, clock__subject=job.subject, clock__hard=True,
            clock__test_clock=job.test_clock,
    ).exclude(status=Occurrence.Status.SATISFIED).select_related("clock", "clock__job"):
        row = occurrence.clock
        if row.job_id != job.pk and not row.lives_on_subject:
            continue
        if step in spec_of(row).bars and now >= occurrence.late_from:
            if not items or not occurrence.item or occurrence.item in items:
                return occurrence
    return None


def lapse(occurrence: Occurrence, at: datetime) -> str:
    """Its date came, unsatisfied: on the record, and a choice put to its owner (SPEC S23)."""
    occurrence.status = Occurrence.Status.LAPSED
    occurrence.settled, occurrence.settled_by = at, "its date passed"
    occurrence.save(update_fields=["status", "settled", "settled_by"])
    spec = spec_of(occurrence.clock)
    _record(occurrence, "clock.lapsed", {"due": occurrence.due, "hard": spec.hard,
                                         "bars": list(spec.bars), "choices": list(spec.choices)})
    _tell_owner(occurrence, *emails.missed(occurrence, spec.choices), key="lapsed")
    return "lapsed · a choice put to its owner"


def end_job(job: Job, *, state: str = Job.State.ENDED, by: str = "",
            data: dict | None = None) -> None:
    """End a job (S16). Clocks that live on the subject stay open in their owner's hands;
    the job's other dates close, and so does its own time (deadlines, asks, tasks)."""
    now = now_for(job.brand, job.test_clock)
    with transaction.atomic():
        if Job.objects.filter(pk=job.pk, state=Job.State.OPEN).update(state=state,
                                                                      ended=now) != 1:
            raise OrderRefused("job", f"job {job.pk} is {Job.objects.get(pk=job.pk).state}; "
                                      "only an open job ends")
        job.state, job.ended = state, now
        for ended in _on_end:
            ended(job, state, now)
        kept = []
        for occurrence in open_occurrences(job).select_related("clock"):
            if occurrence.clock.lives_on_subject:
                kept.append(occurrence.label)
                continue
            occurrence.status = Occurrence.Status.CLOSED
            occurrence.save(update_fields=["status"])
            end_timers(occurrence, f"job {job.pk} {state}")
        records.write(f"job.{state}", brand=job.brand, instant=now, test_clock=job.test_clock,
                      subject=job.subject_id, job=job.pk,
                      data={**(data or {}), "by": by, "lives_on": kept})


def postpone(brand: Brand, postponement: Postponement) -> list[str]:
    """Move every open occurrence due in the notice's range, on matching subjects, to its
    `to`: hard dates included (SPEC S2). The one thing that moves a hard date."""
    moved = []
    for occurrence in Occurrence.objects.filter(
            clock__brand=brand, status=Occurrence.Status.OPEN,
            clock__test_clock_id=postponement.test_clock or None,
            due__gte=postponement.from_date, due__lte=postponement.through,
    ).select_related("clock", "clock__subject", "clock__job"):
        if not _matches(occurrence.clock.subject, postponement.where):
            continue
        moved.append(_move_to(occurrence, spec_of(occurrence.clock), postponement.to,
                              by="calendar", roll=False, notice=postponement.notice))
    return moved


def _apply_postponements(occurrence: Occurrence) -> None:
    calendar_id = occurrence.clock.brand.calendar_id
    if calendar_id is None:
        return
    for notice in Postponement.objects.filter(calendar_id=calendar_id,
                                              test_clock=occurrence.clock.test_clock_id or "",
                                              from_date__lte=occurrence.due,
                                              through__gte=occurrence.due):
        if _matches(occurrence.clock.subject, notice.where):
            before = occurrence.due
            occurrence.moved_from, occurrence.moved_by = before, "calendar"
            occurrence.due, occurrence.rolled_from, occurrence.roll_reasons = notice.to, None, []
            occurrence.late_from = calendar_for(occurrence.clock.subject).late_from(notice.to)
            _record(occurrence, "clock.moved", {"by": "calendar", "from": before,
                                                "to": notice.to, "notice": notice.notice})


def _matches(subject: Subject, where: dict) -> bool:
    for field, wanted in (where or {}).items():
        have = getattr(subject, field, None) if field in ("kind", "key", "zone", "name") \
            else subject.input.get(field)
        if isinstance(wanted, list) and have not in wanted:
            return False
        if not isinstance(wanted, list) and have != wanted:
            return False
    return True


# -- the calendar changes: a notice added, the calendar edited --------------------------------

def add_postponement(*, calendar: Calendar, from_date: date, through: date, to: date,
                     where: dict, notice: str, test_clock_id: str = "",
                     by: str = "") -> tuple[Postponement, list[str]]:
    """Add an authority's notice to `calendar` and move the open dates it covers (SPEC S2).
    The API and the admin both add a postponement through it.

    Steps, whole or not at all (one transaction):
    1. refuse with OrderRefused, naming the field and changing nothing: a date outside the
       span kept, `through` before `from`, a `where` that is not an object, no notice, or a
       test clock that is not one of a brand on this calendar;
    2. store the postponement;
    3. for each brand on the calendar (brands may share one), move its open dates in the
       range, on matching subjects, to `to` (`postpone`): on the real clock, or only on the
       test clock named;
    4. record `calendar.postponed` on each of those brands: the notice, who, what moved.
    """
    test_clock = _check_postponement(calendar, from_date, through, to, where, notice,
                                     test_clock_id)
    brands = [test_clock.brand] if test_clock else list(Brand.objects.filter(calendar=calendar))
    moved: list[str] = []
    with transaction.atomic():
        _lock_jobs(Occurrence.objects.filter(
            clock__brand__in=brands, clock__test_clock_id=test_clock_id or None,
            status=Occurrence.Status.OPEN, due__gte=from_date, due__lte=through))
        postponement = Postponement.objects.create(
            calendar=calendar, from_date=from_date, through=through, to=to, where=where,
            notice=notice.strip(), test_clock=test_clock_id)
        for brand in brands:
            lines = postpone(brand, postponement)
            records.write("calendar.postponed", brand=brand, test_clock=test_clock,
                          instant=now_for(brand, test_clock),
                          data={"postponement": postponement.pk, "from": from_date,
                                "through": through, "to": to, "where": where,
                                "notice": postponement.notice, "by": by, "moved": lines})
            moved += lines
    return postponement, moved


def _check_postponement(calendar: Calendar, from_date: date, through: date, to: date,
                        where: dict, notice: str, test_clock_id: str) -> TestClock | None:
    for name, day in (("from", from_date), ("through", through), ("to", to)):
        if not isinstance(day, date) or isinstance(day, datetime):
            raise OrderRefused(name, f"{day!r} is not a date")
        try:
            instants.check_span(day, field=name)
        except instants.OutOfSpan as error:
            raise OrderRefused(name, str(error).removeprefix(f"{name}: ")) from None
    if through < from_date:
        raise OrderRefused("through", "'through' is on or after 'from'")
    if not isinstance(where, dict):
        raise OrderRefused("where", "'where' is an object of field: value pairs")
    if not isinstance(notice, str) or not notice.strip():
        raise OrderRefused("notice", "cite the notice that moves the dates")
    if len(notice.strip()) > 500:
        raise OrderRefused("notice", "a notice is at most 500 characters")
    if not test_clock_id:
        return None
    found = TestClock.objects.select_related("brand").filter(
        pk=test_clock_id, brand__calendar=calendar).first()
    if found is None:
        raise OrderRefused("test_clock", f"{test_clock_id} is not a test clock of a brand on "
                                         f"the calendar {calendar}")
    return found


def _lock_jobs(open_dates) -> None:
    """Lock the jobs of these dates, in id order, as the gate locks a job while it judges a
    step: a step that keeps or moves one of them waits for this change, or this change for the
    step, instead of one saving over the other."""
    list(Job.objects.select_for_update().filter(pk__in=open_dates.values("clock__job_id"))
         .order_by("pk").values_list("pk", flat=True))


@dataclasses.dataclass
class Rerolled:
    """What a calendar change did to the open dates on it: one line per date moved, one per
    date kept back with why; dates the change leaves where they were are not listed."""

    moved: list[str] = dataclasses.field(default_factory=list)
    kept: list[str] = dataclasses.field(default_factory=list)
    why: Counter = dataclasses.field(default_factory=Counter)

    def keep(self, what: str, why: str) -> None:
        self.kept.append(f"{what}: kept: {why}")
        self.why[why] += 1

    def said(self) -> str:
        dates = "date" if len(self.moved) == 1 else "dates"
        text = f"Re-rolled {len(self.moved)} open {dates}; {len(self.kept)} kept as they are"
        if self.why:
            text += " (" + "; ".join(f"{why}: {n}" for why, n in self.why.items()) + ")"
        return text + "."


def calendar_changed(calendar: Calendar, *, by: str) -> Rerolled:
    """Re-roll the open dates on `calendar` after it changed, or say why one stays (SPEC S1).

    Steps, whole or not at all (one transaction), for every open occurrence of every brand on
    the calendar, on the real clock and on test clocks alike:
    1. lock the jobs of those dates, as the gate does;
    2. keep back a date an authority's notice set (`moved_by` "calendar"), and one whose
       `late_from` has passed on its clock: its lapse is owed, not a new date;
    3. roll its unrolled date (`rolled_from or due`) on the calendar as it is now, read in the
       subject's zone (`calendar_for`);
    4. if the date kept or `late_from` changes: save it (guarded: still open), record
       `clock.moved` (by "calendar change", who) and re-arm its rungs and date, superseding
       the old timers under the same keys.
    """
    done = Rerolled()
    open_dates = Occurrence.objects.filter(clock__brand__calendar=calendar,
                                           status=Occurrence.Status.OPEN)
    nows: dict[tuple[str, str | None], datetime] = {}
    with transaction.atomic():
        _lock_jobs(open_dates)
        for occurrence in open_dates.select_related(
                "clock__brand", "clock__test_clock", "clock__job",
                "clock__subject__brand__calendar").order_by("pk"):
            _reroll(occurrence, by=by, nows=nows, done=done)
    return done


def _reroll(occurrence: Occurrence, *, by: str, nows: dict, done: Rerolled) -> None:
    row = occurrence.clock
    what = " ".join(part for part in (row.subject_id, row.name, occurrence.item,
                                      str(occurrence.due)) if part)
    why = _kept_back(occurrence, nows)
    if why is None:
        cal = calendar_for(row.subject)
        rolled = cal.roll(occurrence.rolled_from or occurrence.due)
        late_from = cal.late_from(rolled.date)
        if (rolled.date, late_from) == (occurrence.due, occurrence.late_from):
            return  # the change leaves it where it was
        before = (occurrence.due, occurrence.late_from)
        if _save_roll(occurrence, rolled, late_from):
            done.moved.append(_rerolled(occurrence, before, what, by))
            return
        why = "it was settled meanwhile"
    done.keep(what, why)


def _kept_back(occurrence: Occurrence, nows: dict) -> str | None:
    """Why a calendar change leaves this open date as it is, or None."""
    row = occurrence.clock
    if occurrence.moved_by == "calendar":
        return "an authority's notice set its date"
    on = (row.brand_id, row.test_clock_id)
    if on not in nows:
        nows[on] = now_for(row.brand, row.test_clock)  # read once per brand clock
    if nows[on] >= occurrence.late_from:
        return "its date has passed"
    return None


def _rerolled(occurrence: Occurrence, before: tuple[date, datetime], what: str, by: str) -> str:
    """Record the re-rolled date and re-arm its rungs and date under their keys."""
    _record(occurrence, "clock.moved", {
        "by": "calendar change", "who": by, "from": before[0], "to": occurrence.due,
        "rolled_from": occurrence.rolled_from, "why": occurrence.roll_reasons,
        "late_from": occurrence.late_from})
    arm(occurrence, spec_of(occurrence.clock),
        why=f"re-rolled to {occurrence.due} by a calendar change")
    if occurrence.due != before[0]:
        rolled = f", rolled from {occurrence.rolled_from}" if occurrence.rolled_from else ""
        return f"{what} → {occurrence.due}{rolled}"
    return (f"{what}: late from {before[1]:%Y-%m-%d %H:%MZ} → "
            f"{occurrence.late_from:%Y-%m-%d %H:%MZ}")


def _save_roll(occurrence: Occurrence, rolled: rules.Rolled, late_from: datetime) -> bool:
    changes = {"due": rolled.date, "rolled_from": rolled.rolled_from,
               "roll_reasons": rolled.reasons, "late_from": late_from}
    if rolled.date != occurrence.due:
        changes["acknowledged"] = None  # a new date is acknowledged anew
    # A tick lapsing this date at the same moment (it takes no job lock): the guarded UPDATE
    # finds it no longer open, and leaves it as the lapse left it.
    if Occurrence.objects.filter(pk=occurrence.pk, status=Occurrence.Status.OPEN).update(
            **changes) != 1:
        return False
    for name, value in changes.items():
        setattr(occurrence, name, value)
    return True


def choose(occurrence: Occurrence, choice: str, *, by: str):
    """The owner's choice on a clock: one the clock offers (`choices`); a choice that names a
    step runs it through the gate, for the occurrence's item."""
    spec = spec_of(occurrence.clock)
    if choice not in spec.choices:
        raise OrderRefused("choice", f"{choice!r} is not one of this clock's choices: "
                                     f"{', '.join(spec.choices) or 'none'}")
    job = occurrence.clock.job
    before = changed.before(job)
    outcome = gate.propose(job=job, step=choice,
                           items=[occurrence.item] if occurrence.item else [],
                           by=f"choice of {by}")
    # Written after the step, so it can say what the step changed (`timekeeping.clocks.undo`).
    written = _record(occurrence, "clock.chosen", {
        "choice": choice, "by": by, "occurrence": occurrence.pk,
        "committed": outcome.committed, **changed.since(job, before, outcome)})
    outcome.record = written.pk if written is not None else ""
    return outcome


def acknowledge(occurrence: Occurrence, *, by: str):
    """Acknowledge the date; answers its record, which keeps what it was before (undo). A
    date acknowledged already stays as it is (a second click acts once): None."""
    if occurrence.acknowledged is not None:
        return None
    at = now_for(occurrence.clock.brand, occurrence.clock.test_clock)
    was = occurrence.acknowledged
    occurrence.acknowledged = at
    occurrence.save(update_fields=["acknowledged"])
    # One reading of the clock for both: an undo knows the date is as this left it by the
    # record's instant equalling the date's (`undo._still_acknowledged`).
    return _record(occurrence, "clock.acknowledged", {"by": by, "occurrence": occurrence.pk,
                                                      "was": was}, at=at)


def assign(occurrence: Occurrence, member: Member | None, *, by: str):
    """Give the date to one of its brand's members to see through (S25), or to nobody (None):
    a `clock.assigned` record says to whom, by whom, and who had it before (undo). A member of
    another brand is refused, naming the field, and nothing changes. The API and the pages
    all assign through it."""
    if member is not None and member.brand_id != occurrence.clock.brand_id:
        raise OrderRefused("member", f"{member.pk} is not a member of the clock's brand")
    was = occurrence.assignee_id
    occurrence.assignee = member
    occurrence.save(update_fields=["assignee"])
    return _record(occurrence, "clock.assigned", {
        "member": member.pk if member else None, "occurrence": occurrence.pk, "was": was,
        "to": member.user.get_username() if member else "nobody", "by": by})


# -- telling people ---------------------------------------------------------------------------

def _record(occurrence: Occurrence, kind: str, data: dict, *, at: datetime | None = None):
    row = occurrence.clock
    return records.write(kind, brand=row.brand, instant=at or now_for(row.brand, row.test_clock),
                  test_clock=row.test_clock, subject=row.subject_id, job=row.job_id,
                  data={"clock": row.id, "name": row.name, "item": occurrence.item, **data})


def owner_email(occurrence: Occurrence, *, escalate: bool = False) -> str:
    return _recipient(occurrence, escalate=escalate)[0]


def _recipient(occurrence: Occurrence, *, escalate: bool) -> tuple[str, bool]:
    """Whom a date's email goes to, and whether that is the customer: the subject's contact
    for a buyer's date; for a brand's date assigned to a member (`mbr_…`), that member; else
    (and for an escalation) the brand's owner. A date in a test clock's world is the brand's
    own rehearsal: its emails never reach anyone but the brand's owner."""
    row = occurrence.clock
    brand_owner = row.brand.owner.email if row.brand.owner else ""
    if escalate or row.test_clock_id:
        return brand_owner, False
    if row.owner != "buyer" or not row.subject.contact_email:
        assignee = occurrence.assignee
        if assignee is not None and assignee.user.email:
            return assignee.user.email, False
        return brand_owner, False
    return row.subject.contact_email, True


def act_link(occurrence: Occurrence, *, customer: bool) -> str:
    """The page where the recipient acts on the date: the portal's subject page for the
    customer, the console's subject page for the brand's own people."""
    row = occurrence.clock
    if customer:
        return f"{settings.SITE_URL}/portal/subjects/{row.subject_id}/"
    return f"{settings.SITE_URL}/console/{row.brand_id}/subjects/{row.subject_id}/"


def _tell_owner(occurrence: Occurrence, subject: str, body: str, *, key: str,
                escalate: bool = False) -> None:
    """Queue the email to the date's owner, with the link to where they act; in a test
    clock's world its subject line says so."""
    to, customer = _recipient(occurrence, escalate=escalate)
    if not to:
        return
    row = occurrence.clock
    subject = outbox.practice(subject, row.test_clock_id)
    body += f"\n\n{act_link(occurrence, customer=customer)}\n"
    instant = now_for(row.brand, row.test_clock)
    outbox.enqueue_email(brand=row.brand, to=[to], subject=subject, body=body,
                         key=f"{occurrence.label}:{key}:{occurrence.due}:{instant.isoformat()}")


def notice(occurrence: Occurrence, rung: str, *, escalate: bool = False) -> None:
    """A rung's notice on the record, and its email. An `ack daily` rung ("ack asked") asks
    for the acknowledgement, and its email says where to give it."""
    kind = "clock.escalated" if escalate else "clock.notice"
    _record(occurrence, kind, {"rung": rung, "due": occurrence.due})
    _tell_owner(occurrence, *emails.notice(occurrence, rung), key=rung, escalate=escalate)


# -- what the gate asks of the clocks ---------------------------------------------------------
# Registered by `register` (apps.ready): the gate imports no kind (it is the floor the kinds
# propose to).

def check_items_known(job: Job, step: str, items: list[str], now: datetime):
    service = services_of(job.bundle)[job.service]
    known = {item for spec in service.clocks.values() for item in items_of(job, spec)}
    unknown = [item for item in items if item not in known]
    if unknown:
        return "item_unknown", f"{', '.join(unknown)} is not an item of job {job.pk}"
    return None


def check_hard_date(job: Job, step: str, items: list[str], now: datetime):
    passed = date_passed(job, step, items, now)
    if passed is not None:
        return "date_passed", (f"the hard date {passed.clock.name}"
                               f"{' ' + passed.item if passed.item else ''} of {passed.due} "
                               f"has passed, and it bars '{step}'")
    return None


def effect_satisfied(job: Job, step: str, items: list[str], now: datetime, outcome) -> None:
    outcome.satisfied = satisfy(job, step, items, now)


def effect_moved(job: Job, step: str, items: list[str], now: datetime, outcome) -> None:
    outcome.moved = move(job, step, items)


def register() -> None:
    """What the gate asks of the clocks (called by `apps.ready`, before the jobs')."""
    gate.check(30)(check_items_known)
    gate.check(40)(check_hard_date)
    gate.effect(10)(effect_satisfied)
    gate.effect(20)(effect_moved)
