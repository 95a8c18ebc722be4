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

from datetime import date, datetime, timedelta

from django.db import IntegrityError, transaction

from calendars import rules
from calendars.models import Postponement
from timekeeping import clock as wall
from timekeeping import dues, firing, outbox, records, timers
from timekeeping.manifests import services_of
from timekeeping.manifests.spec import ClockSpec, ServiceSpec, parse_every
from timekeeping.models import Brand, Clock, Job, Manifest, Occurrence, Subject, TestClock, Timer

KIND = "clock"


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


def now_for(brand: Brand, test_clock: TestClock | None) -> datetime:
    batch = firing.current()
    if batch is not None and batch.brand.pk == brand.pk:
        return batch.instant
    return wall.now(brand=brand, test_clock=test_clock)


# -- opening a job ----------------------------------------------------------------------------

def order(*, brand: Brand, service: str, subject: Subject, period: str = "", input: dict | None
          = None, by: str = "") -> Job:
    """Open a job of `service` for `subject` and `period`, and open its clocks, on the
    subject's clock (its test clock, if it was made on one).

    A second order for the same subject, Service and period raises PeriodTaken and changes
    nothing (it charges nothing)."""
    test_clock = subject.test_clock
    version = Manifest.objects.filter(brand=brand).order_by("-version").first()
    if version is None:
        raise OrderRefused("service", "the brand has no manifest yet")
    spec = services_of(version.bundle).get(service)
    if spec is None:
        raise OrderRefused("service", f"{service!r} is not a service of the brand's manifest")
    if spec.subject_kind and subject.kind != spec.subject_kind:
        raise OrderRefused("subject", f"{service!r} is for a {spec.subject_kind}, "
                                      f"not a {subject.kind}")
    input = input or {}
    if spec.period.of != "none" and spec.period.end_of(period, input) is None:
        raise OrderRefused("period", f"{period!r} is not a {spec.period.of} period")
    now = now_for(brand, test_clock)
    try:
        with transaction.atomic():
            job = Job.objects.create(brand=brand, test_clock=test_clock, subject=subject,
                                     service=service, period=period, input=input,
                                     bundle=version.bundle, opened=now)
    except IntegrityError:
        raise PeriodTaken(f"{subject.pk} already holds a {service} job for period "
                          f"{period!r}") from None
    with transaction.atomic():
        records.write("job.opened", brand=brand, instant=now, test_clock=test_clock,
                      subject=subject.pk, job=job.pk,
                      data={"service": service, "period": period, "by": by,
                            "bundle": version.bundle})
        # A clock whose date follows another clock opens after the clocks it follows.
        for clock_spec in sorted(spec.clocks.values(), key=lambda c: "clock" in c.due):
            _open_clock(job, spec, clock_spec, now)
    return job


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
    rule_due = _rule_due(row, spec, spec.due, item, seq)
    if rule_due is None:
        records.write("clock.no_date", brand=row.brand, instant=now_for(row.brand,
                      row.test_clock), test_clock=row.test_clock, subject=row.subject_id,
                      job=row.job_id, data={"clock": row.id, "item": item,
                                            "why": "its due rule gave no date"})
        return None
    occurrence = Occurrence(clock=row, item=item, seq=seq, rule_due=rule_due, due=rule_due)
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
                                                                            other_item))
    found = dues.evaluate(rule, context)
    if found is not None and seq and spec.every:
        found = found + parse_every(spec.every) * seq  # counted from the first: no drift
    return found


def _other_due(job: Job, name: str, item: str) -> date | None:
    occurrence = Occurrence.objects.filter(clock__job=job, clock__name=name, item=item).first() \
        or Occurrence.objects.filter(clock__job=job, clock__name=name).first()
    return occurrence.due if occurrence else None


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
                      job=row.job_id, data={"clock": row.id, "item": occurrence.item,
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
    live = timers.clock_timers(row.brand, row.test_clock).filter(
        owner_id=occurrence.label, state__in=[Timer.State.ARMED, Timer.State.HELD])
    for stale in live.exclude(key__in=list(wanted)):
        timers.end(stale.id, state=Timer.State.SUPERSEDED, by=why or "re-armed")
    for key, (owed, payload) in wanted.items():
        timers.rearm(brand=row.brand, test_clock=row.test_clock, kind=KIND, key=key, owed=owed,
                     why=why or "re-armed", owner_type="occurrence", owner_id=occurrence.label,
                     owner_opened=row.job.opened, bundle=row.bundle,
                     payload={"occurrence": occurrence.pk, **payload})


def _end_timers(occurrence: Occurrence, why: str) -> None:
    row = occurrence.clock
    for timer_id in timers.clock_timers(row.brand, row.test_clock).filter(
            owner_id=occurrence.label, state__in=[Timer.State.ARMED, Timer.State.HELD]
    ).values_list("id", flat=True):
        timers.end(timer_id, state=Timer.State.SUPERSEDED, by=why)


# -- what steps do ----------------------------------------------------------------------------

def open_occurrences(job: Job, *, hard: bool | None = None):
    found = Occurrence.objects.filter(clock__job=job, status=Occurrence.Status.OPEN)
    return found if hard is None else found.filter(clock__hard=hard)


def satisfy(job: Job, step: str, items: list[str], at: datetime) -> list[str]:
    """Satisfy the open occurrences this step keeps. With `each`, only an item's own step
    satisfies it (the step names the item)."""
    kept = []
    # A lapsed date is still kept by its step, late: the record says so.
    for occurrence in Occurrence.objects.filter(
            clock__job=job, status__in=[Occurrence.Status.OPEN, Occurrence.Status.LAPSED]
    ).select_related("clock"):
        spec = spec_of(occurrence.clock)
        if step not in spec.satisfied_by:
            continue
        if occurrence.item and occurrence.item not in items:
            continue
        _settle(occurrence, spec, by=step, at=at)
        kept.append(f"{occurrence.clock.name} {occurrence.item or ''}".strip())
    return kept


def _settle(occurrence: Occurrence, spec: ClockSpec, *, by: str, at: datetime) -> None:
    late = occurrence.status == Occurrence.Status.LAPSED
    occurrence.status = Occurrence.Status.SATISFIED
    occurrence.settled, occurrence.settled_by = at, by
    occurrence.save(update_fields=["status", "settled", "settled_by"])
    _end_timers(occurrence, f"satisfied by {by}")
    _record(occurrence, "clock.satisfied", {"by": by, "due": occurrence.due, "late": late})
    if spec.every:
        _open_occurrence(occurrence.clock, spec, occurrence.item, occurrence.seq + 1)


def mark_done(occurrence: Occurrence, *, by: str) -> None:
    """Its owner marks a date kept by hand: the way to keep a date that outlived its job,
    or one no step of the Service covers."""
    if occurrence.status not in (Occurrence.Status.OPEN, Occurrence.Status.LAPSED):
        raise OrderRefused("item", f"the date is {occurrence.status}; only an open or lapsed "
                                   "date can be marked done")
    at = now_for(occurrence.clock.brand, occurrence.clock.test_clock)
    _settle(occurrence, spec_of(occurrence.clock), by=f"marked done by {by}", at=at)


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
            clock__subject=job.subject, clock__hard=True, clock__test_clock=job.test_clock,
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
    _tell_owner(occurrence, f"{occurrence.clock.title} passed unkept",
                f"The date {occurrence.due} passed unkept. Choose what to do next"
                + (f": {', '.join(spec.choices)}." if spec.choices else "."), key="lapsed")
    return "lapsed · a choice put to its owner"


def end_job(job: Job, *, state: str = Job.State.ENDED) -> None:
    """End a job. Clocks that live on the subject stay open in their owner's hands."""
    now = now_for(job.brand, job.test_clock)
    with transaction.atomic():
        job.state, job.ended = state, now
        job.save(update_fields=["state", "ended"])
        for occurrence in open_occurrences(job).filter(clock__lives_on_subject=False):
            occurrence.status = Occurrence.Status.CLOSED
            occurrence.save(update_fields=["status"])
            _end_timers(occurrence, f"job {job.pk} {state}")
        records.write(f"job.{state}", brand=job.brand, instant=now, test_clock=job.test_clock,
                      subject=job.subject_id, job=job.pk, data={})


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


def choose(occurrence: Occurrence, choice: str, *, by: str):
    """The owner's choice on a clock: one the clock offers (`choices`); a choice that names a
    step runs it through the gate, for the occurrence's item."""
    from timekeeping import gate  # the gate calls back into the clocks

    spec = spec_of(occurrence.clock)
    if choice not in spec.choices:
        raise OrderRefused("choice", f"{choice!r} is not one of this clock's choices: "
                                     f"{', '.join(spec.choices) or 'none'}")
    _record(occurrence, "clock.chosen", {"choice": choice, "by": by})
    return gate.propose(job=occurrence.clock.job, step=choice,
                        items=[occurrence.item] if occurrence.item else [],
                        by=f"choice of {by}")


def acknowledge(occurrence: Occurrence, *, by: str) -> None:
    at = now_for(occurrence.clock.brand, occurrence.clock.test_clock)
    occurrence.acknowledged = at
    occurrence.save(update_fields=["acknowledged"])
    _record(occurrence, "clock.acknowledged", {"by": by})


# -- telling people ---------------------------------------------------------------------------

def _record(occurrence: Occurrence, kind: str, data: dict) -> None:
    row = occurrence.clock
    records.write(kind, brand=row.brand, instant=now_for(row.brand, row.test_clock),
                  test_clock=row.test_clock, subject=row.subject_id, job=row.job_id,
                  data={"clock": row.id, "name": row.name, "item": occurrence.item, **data})


def owner_email(occurrence: Occurrence, *, escalate: bool = False) -> str:
    row = occurrence.clock
    brand_owner = row.brand.owner.email if row.brand.owner else ""
    if escalate or row.owner in ("brand", "of_record") or row.owner.startswith("mbr_"):
        return brand_owner
    return row.subject.contact_email or brand_owner


def _tell_owner(occurrence: Occurrence, subject: str, body: str, *, key: str,
                escalate: bool = False) -> None:
    to = owner_email(occurrence, escalate=escalate)
    if not to:
        return
    instant = now_for(occurrence.clock.brand, occurrence.clock.test_clock)
    outbox.enqueue_email(brand=occurrence.clock.brand, to=[to], subject=subject, body=body,
                         key=f"{occurrence.label}:{key}:{occurrence.due}:{instant.isoformat()}")


def notice(occurrence: Occurrence, rung: str, *, escalate: bool = False) -> None:
    kind = "clock.escalated" if escalate else "clock.notice"
    _record(occurrence, kind, {"rung": rung, "due": occurrence.due})
    _tell_owner(occurrence, f"{occurrence.clock.title}: due {occurrence.due}",
                f"{occurrence.clock.title}{', ' + occurrence.item if occurrence.item else ''} "
                f"is due {occurrence.due} (late from {occurrence.late_from:%Y-%m-%d %H:%MZ}).",
                key=rung, escalate=escalate)
