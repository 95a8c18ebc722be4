"""Opening a job: ordering it, and opening its clocks and their occurrences. Each date
comes from its due rule (or is measured from when another date of the job was kept), rolled on
the subject's calendar, moved by the postponements that cover it; then its rungs are armed.
What else opens and ends with a job registers itself with `on_open` and `on_end`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from datetime import date, datetime

from django.db import IntegrityError, transaction

from calendars.models import Postponement
from calendars.moments import day_in_zone
from timekeeping.basics import instants
from timekeeping.clocks import dues, exposure
from timekeeping.clocks.basis import (
    OrderRefused,
    PeriodTaken,
    calendar_for,
    lock_subjects,
    lock_unerased,
    now_for,
    refuse_erased,
)
from timekeeping.clocks.rungs import arm
from timekeeping.clocks.telling import record_line
from timekeeping.models import Brand, Clock, Job, Manifest, Occurrence, Subject
from timekeeping.specs import limits, tiers
from timekeeping.specs.current import services_of
from timekeeping.specs.services import ClockSpec, ServiceSpec, parse_every
from timekeeping.timers import arming, firing, in_progress, made, records


def order(*, brand: Brand, service: str, subject: Subject, period: str = "", input: dict | None
          = None, by: str = "", kept_plan: str = "") -> Job:
    """Open a job of `service` for `subject` and `period`, and open its clocks, on the
    subject's clock (its test clock, if it was made on one). The job keeps the brand's plan
    (S24); a job running work opened earlier mints (a subscription's) gives that work's
    `kept_plan`, which a smaller plan of the brand since does not reach.

    A second order for the same subject, Service and period raises PeriodTaken and changes
    nothing (it charges nothing)."""
    test_clock = subject.test_clock
    version, spec = offered(brand, service, subject)
    plan = check_live(brand, subject, spec, kept_plan=kept_plan)
    input = input or {}
    _check_size(spec, {**subject.input, **input})
    _check_order(spec, period, {**subject.input, **input})
    now = now_for(brand, test_clock)
    taken = PeriodTaken(f"{subject.pk} already holds a {service} job for period {period!r}")
    # Whole or absent: the job, its record, its clocks and their timers commit together; its
    # timers and records are gathered and written at its end, one statement each (issue 32).
    # Inside a firing batch that takes them its new rows are written with the batch's, and
    # it opens no savepoint: what it makes is gathered, and none is kept if it is refused.
    with_batch = made.taken()
    try:
        with nullcontext() if with_batch else transaction.atomic(), \
                arming.gathering() as gathered:
            lock_unerased(subject)  # an erasure at the same time: one waits for the other
            # Looked for first, so that making the job takes no savepoint of its own; of two
            # orders at once, the second's insert fails on the constraint, answered below.
            if _held(brand, subject, service, period):
                raise taken
            job = Job.fresh(brand=brand, test_clock=test_clock, subject=subject,
                            service=service, period=period, input=input,
                            bundle=version.bundle, plan=plan, opened=now)
            made.insert([job])
            gathered.fresh.add(job.pk)  # a job made just now: no timer can be under its keys
            records.write("job.opened", brand=brand, instant=now, test_clock=test_clock,
                          subject=subject.pk, job=job.pk,
                          data={"service": service, "period": period, "by": by,
                                "bundle": version.bundle, "brand_plan": plan})
            gathered.dates[job.pk] = _open_clocks(job, spec, now)
            with _refused_whole(with_batch):  # the job's own time (timekeeping.jobs)
                for opened in OPEN_HOOKS:  # after its clocks
                    opened(job, spec, now)
    except IntegrityError:
        if not _held(brand, subject, service, period):
            raise
        raise taken from None
    return job


@contextmanager
def _refused_whole(with_batch: bool) -> Iterator[None]:
    """What opens with a job writes some of its rows at once. An order with no savepoint of
    its own (`with_batch`) refused after that would keep them: its batch is redone a timer at
    a time instead (`firing.RowsReadBack`), where the order has its savepoint."""
    try:
        yield
    except (PeriodTaken, OrderRefused) as refused:
        if not with_batch:
            raise
        batch = firing.current()
        batch.read_back = True  # even if a caller catches what is raised here
        raise firing.RowsReadBack(f"an order was refused after it wrote: {refused}") from refused


def _held(brand: Brand, subject: Subject, service: str, period: str) -> bool:
    """Whether the subject holds a job of `service` for `period` already (SPEC S17): as a
    firing batch read it for all its mints at once (`HELD`, taken once: a second order of it
    in the batch reads again), else read now."""
    batch = in_progress.current()
    if batch is not None and batch.brand.pk == brand.pk:
        found = batch.take_read(HELD, (subject.pk, service, period))
        if found is not None:
            return found
    return Job.objects.filter(brand=brand, subject=subject, service=service,
                              period=period).exists()


HELD = "period held"  # what a batch read of whether a subject's period is held (`_held`)


def prepare_orders(batch: firing.Firing, orders: list[tuple[str, str, str]]) -> None:
    """Read at once what the orders a firing batch will make need before they open a job
    (issue 32: a batch of mints), given as (subject id, service, period): their subjects
    locked against an erasure (`lock_unerased`), and which periods are held already
    (`_held`). Two statements for the batch, not two an order; each kept for the first order
    of it."""
    if not orders:
        return
    lock_subjects({subject for subject, _, _ in orders}, batch)
    held = set(Job.objects.filter(
        brand=batch.brand, subject_id__in={subject for subject, _, _ in orders},
        service__in={service for _, service, _ in orders},
        period__in={period for _, _, period in orders}).values_list(
        "subject_id", "service", "period"))
    for wanted in orders:
        batch.keep_read(HELD, wanted, wanted in held, job=wanted[0])


# What else opens with a job, and ends with it: registered by the kinds that keep a job's own
# time (timekeeping.jobs), so the clocks import none of them.
OPEN_HOOKS: list = []
END_HOOKS: list = []


def on_open(function):
    OPEN_HOOKS.append(function)
    return function


def on_end(function):
    END_HOOKS.append(function)
    return function


def offered(brand: Brand, service: str, subject: Subject) -> tuple[Manifest, ServiceSpec]:
    """The brand's current manifest version and its `service`, for `subject`: refused,
    naming the field, when there is no manifest, no such service, or a subject of another
    kind, or an erased subject. Ordering a job and subscribing to a plan both start here."""
    refuse_erased(subject)
    version = _current_version(brand)
    if version is None:
        raise OrderRefused("service", "the brand has no manifest yet")
    spec = services_of(version.bundle).get(service)
    if spec is None:
        raise OrderRefused("service", f"{service!r} is not a service of the brand's manifest")
    if spec.subject_kind and subject.kind != spec.subject_kind:
        raise OrderRefused("subject", f"{service!r} is for a {spec.subject_kind}, "
                                      f"not a {subject.kind}")
    return version, spec


def _current_version(brand: Brand) -> Manifest | None:
    """The brand's current manifest version: read once per firing batch (a batch of mints
    orders many jobs of one brand; nothing in a batch loads a manifest)."""
    return in_progress.read_once(brand.pk, "manifest", lambda: Manifest.objects.filter(
        brand=brand).order_by("-version").first())


def check_live(brand: Brand, subject: Subject, spec: ServiceSpec, *, kept_plan: str = "") -> str:
    """Live (a subject on the real clock), only the keys the plan has (S26): the brand's, or
    the plan running work kept (`kept_plan`, S24) when that is higher; on a test clock every
    key runs. Answers the plan the new work keeps."""
    plan = tiers.kept(kept_plan, brand.plan)
    if subject.test_clock_id is not None:
        return plan
    try:
        tiers.check_live(plan, spec)
    except tiers.PlanLacksKey as lacking:
        raise OrderRefused("service", f"{tiers.PlanLacksKey.code}: {lacking}",
                           code=tiers.PlanLacksKey.code,
                           said=f"your plan ({lacking.plan.title()}) does not include it: it "
                                f"needs the {lacking.needs.title()} plan") from None
    return plan


def _check_size(spec: ServiceSpec, given: dict) -> None:
    """Refuse, naming the field and the limit, an order larger than one request's work
    (`timekeeping.specs.limits`): more items than ITEMS_PER_JOB in a list a clock opens a date
    for each of, or more dates and reminders than WORK_MAX in all."""
    work, largest = 0, "service"
    for clock_spec in spec.clocks.values():
        items = given.get(clock_spec.each, []) if clock_spec.each else [""]
        count = len(items) if isinstance(items, list | dict | str) else 1
        if clock_spec.each and count > limits.ITEMS_PER_JOB:
            raise OrderRefused(f"input.{clock_spec.each}",
                               f"at most {limits.ITEMS_PER_JOB} items; this has {count:,}")
        work += count * (1 + len(clock_spec.rungs))
        if clock_spec.each and count > 1:
            largest = f"input.{clock_spec.each}"
    if work > limits.WORK_MAX:
        raise OrderRefused(largest, f"an order opens at most {limits.WORK_MAX} dates and "
                                    f"reminders (items times one more than each date's "
                                    f"reminders); this one would open {work:,}")


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
    for field in sorted({spec.each for spec in spec.clocks.values() if spec.each}):
        if (problem := _items_problem(given.get(field, []))) is not None:
            raise OrderRefused(f"input.{field}", problem)


ITEM_LENGTH = 64  # Occurrence.item


def _items_problem(items) -> str | None:
    """What is wrong, in words, with the items a clock opens a date for each of (an item
    names one date of the clock, so it is short text and said once), or None."""
    if not isinstance(items, list):
        return "the items are a list of text, such as [\"US\", \"US-CA\"]"
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, (str, int)) or isinstance(item, bool):
            return f"each item is text; {json.dumps(item)[:40]} is not"
        text = str(item)
        if len(text) > ITEM_LENGTH:
            return f"an item is at most {ITEM_LENGTH} characters; {text[:20]!r}… is longer than " \
                   f"{ITEM_LENGTH} characters"
        if text in seen:
            return f"each item is named once; the list names {text!r} twice"
        seen.add(text)
    return None


def _input_dates(spec: ServiceSpec) -> set[str]:
    """The input fields the Service's due rules read as dates."""
    found = set()
    for clock_spec in spec.clocks.values():
        for rule in (clock_spec.due, *clock_spec.moves.values()):
            for each in (rule, *(rule.get("items") or {}).values()):
                if isinstance(each.get("input"), str):
                    found.add(each["input"])
    return found


def _open_clocks(job: Job, service: ServiceSpec, now: datetime) -> dict[str, list[Occurrence]]:
    """Open a new job's clocks and their dates, in a constant number of statements: the
    clocks, then their dates, each written together (`made`: with its firing batch's, inside
    one; their timers are gathered).
    A clock whose date follows another clock opens after the clocks it follows, measured from
    their dates as opened here (`Opening`). The dates opened, by clock name."""
    specs = sorted(service.clocks.values(), key=lambda c: "clock" in c.due)
    rows = [Clock.fresh(brand=job.brand, test_clock=job.test_clock, subject=job.subject,
                        job=job, name=spec.name, title=spec.title.replace("{period}", job.period),
                        owner=spec.owner, hard=spec.hard, lives_on_subject=spec.lives_on_subject,
                        bundle=job.bundle, opened=now) for spec in specs]
    made.insert(rows)
    opening = Opening()
    for row, spec in zip(rows, specs, strict=True):
        for item in items_of(job, spec):
            occurrence = new_occurrence(row, spec, item, seq=0, opening=opening)
            if occurrence is not None:
                opening.dates.setdefault(row.name, []).append(occurrence)
    dates = [(row, spec, occurrence) for row, spec in zip(rows, specs, strict=True)
             for occurrence in opening.dates.get(row.name, [])]
    made.insert([occurrence for _, _, occurrence in dates])
    for _, spec, occurrence in dates:
        arm(occurrence, spec, fresh=True)  # a clock made just now
    return opening.dates


class Opening:
    """What a job being opened holds before its dates are written: the dates opened so far
    (by clock name, in order), which a date measured from another reads; and the brand's
    postponements, read once."""

    def __init__(self) -> None:
        self.dates: dict[str, list[Occurrence]] = {}
        self.notices: list[Postponement] | None = None

    def postponements(self, row: Clock) -> list[Postponement]:
        """Read once per firing batch (a batch of mints orders many jobs of one brand; a
        postponement made inside one says so, `in_progress.forget`), else once per job."""
        if self.notices is None:
            calendar, test_clock = row.brand.calendar_id, row.test_clock_id or ""
            self.notices = in_progress.read_once(
                row.brand_id, f"postponements {calendar} {test_clock}",
                lambda: list(Postponement.objects.filter(calendar_id=calendar,
                                                         test_clock=test_clock)))
        return self.notices


def items_of(job: Job, spec: ClockSpec) -> list[str]:
    if not spec.each:
        return [""]
    found = job.input.get(spec.each, job.subject.input.get(spec.each, []))
    return [str(item) for item in found]


def open_occurrence(row: Clock, spec: ClockSpec, item: str, seq: int, *,
                    fresh: bool = False) -> Occurrence | None:
    occurrence = new_occurrence(row, spec, item, seq)
    if occurrence is None:
        return None
    occurrence.save()
    arm(occurrence, spec, fresh=fresh)
    return occurrence


def new_occurrence(row: Clock, spec: ClockSpec, item: str, seq: int, *,
                   opening: Opening | None = None) -> Occurrence | None:
    """A date of the clock, not yet written: from its due rule, rolled, postponed. None, on
    the record, when the rule gives no date (refused when opening the job finds one outside
    the dates kept). `opening`: the job is being opened (`_open_clocks`)."""
    try:
        rule_due = due_by_rule(row, spec, spec.due, item, seq, opening=opening)
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
    occurrence = Occurrence.fresh(
        clock=row, item=item, seq=seq, rule_due=rule_due, due=rule_due, brand_id=row.brand_id,
        test_clock_id=row.test_clock_id, hard=row.hard, miss_cost=price.monthly if price else 0,
        miss_currency=price.currency if price else "")
    keep_on(occurrence, rule_due, by="")  # sets the date kept and late_from
    _apply_postponements(occurrence, opening)
    return occurrence


def due_by_rule(row: Clock, spec: ClockSpec, rule: dict, item: str, seq: int, *,
                opening: Opening | None = None) -> date | None:
    job = row.job
    service = services_of(row.bundle)[job.service]
    context = dues.DueContext(
        period_end=service.period.end_of(job.period, job.input),
        job_input={**job.subject.input, **job.input},
        item=item, job=job, other_clock=lambda name, other_item: _other_due(
            job, name, other_item, opening),
        other_kept=lambda name, other_item: _other_kept(row, name, other_item, opening),
        period=job.period)
    found = dues.evaluate(rule, context)
    if found is not None and seq and spec.every:
        found = found + parse_every(spec.every) * seq  # counted from the first: no drift
    return found


def _other_due(job: Job, name: str, item: str, opening: Opening | None) -> date | None:
    if opening is not None:  # the job is being opened: its dates are the ones opened so far
        opened = opening.dates.get(name, [])
        occurrence = next((each for each in opened if each.item == item), None) or next(
            iter(sorted(opened, key=lambda each: (each.due, each.item, each.seq))), None)
        return occurrence.due if occurrence else None
    of_clock = Occurrence.objects.filter(brand_id=job.brand_id, clock__job=job, clock__name=name)
    occurrence = of_clock.filter(item=item).first() or of_clock.first()
    return occurrence.due if occurrence else None


def _other_kept(row: Clock, name: str, item: str, opening: Opening | None = None
                ) -> tuple[date | None, date] | None:
    """When another clock's item of the job was kept (the day, in the subject's zone; None
    while it is not) and the date its due rule first gave; None when the job has no such
    date."""
    if opening is not None:  # the job is being opened: none of its dates is kept yet
        occurrence = next((each for each in opening.dates.get(name, [])
                           if each.item == item), None)
        return (None, occurrence.rule_due) if occurrence is not None else None
    occurrence = Occurrence.objects.filter(
        brand_id=row.brand_id, clock__job_id=row.job_id, clock__name=name,
        item=item).order_by("-seq").first()
    if occurrence is None:
        return None
    kept = day_in_zone(occurrence.settled, calendar_for(row.subject).zone_name) \
        if occurrence.status == Occurrence.Status.SATISFIED else None
    return kept, occurrence.rule_due


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


def keep_on(occurrence: Occurrence, day: date, *, by: str) -> None:
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


def _apply_postponements(occurrence: Occurrence, opening: Opening | None = None) -> None:
    calendar_id = occurrence.clock.brand.calendar_id
    if calendar_id is None:
        return
    if opening is not None:  # the brand's postponements, read once for the job's dates
        due = occurrence.due
        covering = [notice for notice in opening.postponements(occurrence.clock)
                    if notice.from_date <= due <= notice.through]
    else:
        covering = Postponement.objects.filter(calendar_id=calendar_id,
                                               test_clock=occurrence.clock.test_clock_id or "",
                                               from_date__lte=occurrence.due,
                                               through__gte=occurrence.due)
    for notice in covering:
        if matches(occurrence.clock.subject, notice.where):
            before = occurrence.due
            occurrence.moved_from, occurrence.moved_by = before, "calendar"
            occurrence.due, occurrence.rolled_from, occurrence.roll_reasons = notice.to, None, []
            occurrence.late_from = calendar_for(occurrence.clock.subject).late_from(notice.to)
            record_line(occurrence, "clock.moved", {"by": "calendar", "from": before,
                                                "to": notice.to, "notice": notice.notice})


def matches(subject: Subject, where: dict) -> bool:
    for field, wanted in (where or {}).items():
        have = getattr(subject, field, None) if field in ("kind", "key", "zone", "name") \
            else subject.input.get(field)
        if isinstance(wanted, list) and have not in wanted:
            return False
        if not isinstance(wanted, list) and have != wanted:
            return False
    return True
