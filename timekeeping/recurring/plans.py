"""Subscriptions to a plan: cycles (place 1), allowances (T2) and schedules that mint jobs
(place 2) (S18, S19).

    subscribe(subject=…, service=…, anchor=None, by=…)   the subscription, its timers armed
    allowances(subscription, at=…)                       used, left and when they reset
    cancel_at_cycle_end(subscription, by=…)
    end_now(subscription, by=…, why=…)                   ended at once (its subject erased)
    resume(subscription, by=…)                           undo the cancel before the cycle ends

A subscription renews on its cycle dates counted from its anchor (`periods.cycle_date`, so
an anchor on the 31st renews on each month's last day and never drifts), at the calendar's
`rings_at` in the subject's zone. Each renewal starts a cycle, posts the cycle's charge as
owed in the ledger, and brings the plan's allowances afresh: an allowance is counted per
cycle, the cycle read from the anchor and the day of use, so nothing resets them.

Each schedule mints a job of its `order` service for each period of `each`, on the day `at`
says of the period, at `rings_at`. The first period minted is the earliest whose mint day is
on or after the anchor. When a mint fires late, `catch_up` says what the gap mints: `open`
(or its older name `all`) opens every period owed, oldest first; `last` only the latest; `none`
nothing that is more than a day late. The periods skipped are named on one record and heard,
and a refused order too (S23, `mint_lapses`). `when` mints only for a subject whose input has
those values. A mint inside the plan's allowance is $0 and counted.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from django.db import connection, transaction

from calendars import periods
from calendars.moments import day_in_zone
from money import ledger
from timekeeping import clocks
from timekeeping.basics import shown
from timekeeping.clocks import dues
from timekeeping.models import Allowance, Subject, Subscription, Timer
from timekeeping.moves.tables import safe
from timekeeping.recurring import dunning, mint_lapses
from timekeeping.recurring.spec import plan_of
from timekeeping.specs.current import services_of
from timekeeping.specs.plans import BEFORE_CLOCK, OPENS_EVERY, ScheduleSpec
from timekeeping.timers import arming, records
from timekeeping.timers.firing import now_for

GRACE = timedelta(days=1)  # `catch_up: none`: a mint later than this is part of a gap
MIN_DAYS = {"d": 1, "w": 7, "mo": 28, "y": 365}


def _calendar(subscription: Subscription):
    return clocks.calendar_for(subscription.subject)


def zone_of(subscription: Subscription) -> str:
    """The zone its cycles turn in: the subject's."""
    return _calendar(subscription).zone_name


def _record(subscription: Subscription, kind: str, data: dict, *, at: datetime,
            job: str = "") -> None:
    records.write(kind, brand=subscription.brand, instant=at,
                  test_clock=subscription.test_clock, subject=subscription.subject_id, job=job,
                  data={"subscription": subscription.pk, **data})


def _arm(subscription: Subscription, kind: str, key: str, owed: datetime,
         payload: dict) -> Timer:
    return arming.rearm(brand=subscription.brand, test_clock=subscription.test_clock,
                        kind=kind, key=key, owed=owed, why="re-armed",
                        owner_type="subscription", owner_id=subscription.pk,
                        owner_opened=subscription.opened, bundle=subscription.bundle,
                        payload=payload)


# -- subscribing -----------------------------------------------------------------------------

@transaction.atomic
def subscribe(*, subject: Subject, service: str, anchor: date | None = None,
              by: str = "") -> Subscription:
    """Subscribe `subject` to the plan `service` from `anchor` (today, in the subject's zone,
    when not given). Refused, naming the field, for a service that is no plan, a subject of
    another kind, or a subject already on the plan."""
    brand = subject.brand
    version, spec = clocks.offered(brand, service, subject)
    clocks.lock_unerased(subject)  # an erasure at the same time: one waits for the other
    if not spec.plan.is_plan:
        raise clocks.OrderRefused("service", f"{service!r} is no plan: it has no "
                                             "'price.every'")
    plan = clocks.check_live(brand, subject, spec)
    if Subscription.objects.filter(subject=subject, service=service,
                                   state=Subscription.State.ACTIVE).exists():
        raise clocks.OrderRefused("service", f"{subject.pk} is on {service!r} already")
    now = now_for(brand, subject.test_clock)
    cal = clocks.calendar_for(subject)
    anchor = anchor or day_in_zone(now, cal.zone_name)
    subscription = Subscription.objects.create(
        brand=brand, test_clock=subject.test_clock, subject=subject, service=service,
        bundle=version.bundle, plan=plan, anchor=anchor, opened=now)
    _record(subscription, "subscription.opened", {"service": service, "anchor": anchor,
                                                  "by": by}, at=now)
    _charge(subscription, 1, now)
    dunning.arm(subscription, 1, now)
    _arm_renewal(subscription, 2)
    for schedule in spec.plan.schedules.values():
        _arm_mint(subscription, schedule, _first_period(subscription, schedule))
    return subscription


def _first_period(subscription: Subscription, schedule: ScheduleSpec) -> periods.Period:
    """The earliest period whose mint day is on or after the anchor."""
    found = periods.period_of(subscription.anchor, schedule.each)
    while _mint_day(subscription, schedule, found.previous()) >= subscription.anchor:
        found = found.previous()
    while _mint_day(subscription, schedule, found) < subscription.anchor:
        found = found.next()
    return found


def _mint_day(subscription: Subscription, schedule: ScheduleSpec,
              period: periods.Period) -> date:
    """The day a period is minted: `at` of the period ("1mo after end"), or N days before a
    clock of the minted service ("10d before pay"), its due read for that period and the
    subject as the job would read it. A date the subject cannot give yet falls back to the
    period's end."""
    before = BEFORE_CLOCK.fullmatch(schedule.at)
    if before is None:
        return periods.at(period, schedule.at)
    service = services_of(subscription.bundle)[schedule.order]
    clock_spec = service.clocks[before["clock"]]
    subject_input = subscription.subject.input
    if {"function", "clock"} & set(dues.rule_for_item(clock_spec.due, "", period.label)):
        return period.end  # a rule that needs the job itself: read once the job exists
    due = dues.evaluate(clock_spec.due, dues.DueContext(
        period_end=service.period.end_of(period.label, subject_input),
        job_input=subject_input, item="", period=period.label))
    if due is None:
        return period.end
    return due - timedelta(days=int(before["days"]))


def _mint_at(subscription: Subscription, schedule: ScheduleSpec,
             period: periods.Period) -> datetime:
    return _calendar(subscription).rings(_mint_day(subscription, schedule, period))


def _arm_mint(subscription: Subscription, schedule: ScheduleSpec,
              period: periods.Period) -> None:
    """Arm the period's mint; inside a firing, written with its batch (`rearm_later`)."""
    arming.rearm_later(
        brand=subscription.brand, test_clock=subscription.test_clock, kind="schedule",
        key=f"{subscription.pk}:{schedule.name}:{period.label}",
        owed=_mint_at(subscription, schedule, period), why="re-armed",
        owner_type="subscription", owner_id=subscription.pk, owner_opened=subscription.opened,
        bundle=subscription.bundle,
        payload={"subscription": subscription.pk, "schedule": schedule.name,
                 "period": period.label, "order": schedule.order})


def renews_on(subscription: Subscription, cycle: int) -> date:
    """The first day of `cycle` (cycle 1 starts on the anchor)."""
    return periods.cycle_date(subscription.anchor, plan_of(subscription).every, cycle - 1)


def _arm_renewal(subscription: Subscription, cycle: int) -> Timer:
    return _arm(subscription, "cycle", f"{subscription.pk}:cycle:{cycle}",
                _calendar(subscription).rings(renews_on(subscription, cycle)),
                {"subscription": subscription.pk, "cycle": cycle})


def _charge(subscription: Subscription, cycle: int, at: datetime) -> str:
    """The cycle's charge, posted as owed by the subject to the brand (collected later)."""
    plan = plan_of(subscription)
    if not plan.amount:
        return "no charge"
    brand = subscription.brand_id
    ledger.post(brand=brand, kind="cycle.charge", reference=f"{subscription.pk}:cycle:{cycle}",
                currency=plan.currency, at=at,
                lines=[(f"{brand}:owed:{subscription.subject_id}", plan.amount),
                       (f"{brand}:revenue", -plan.amount)])
    return f"{shown.money(plan.amount, plan.currency)} owed"


def cancel_at_cycle_end(subscription: Subscription, *, by: str) -> Subscription:
    """The subscription ends when its current cycle does: it does not renew again."""
    with transaction.atomic():
        subscription = Subscription.objects.select_for_update(of=("self",)).get(
            pk=subscription.pk)
        subscription.ends_after = subscription.cycle
        subscription.save(update_fields=["ends_after"])
        _record(subscription, "subscription.cancelling", {
            "by": by, "ends": renews_on(subscription, subscription.cycle + 1)},
            at=now_for(subscription.brand, subscription.test_clock))
    return subscription


def end_now(subscription: Subscription, *, by: str, why: str) -> bool:
    """End the subscription at once (its subject was erased): it renews, mints and collects
    no more, its timers cancelled and `subscription.ended` on the record. False when it had
    ended already. A renewal firing at the same moment holds the row (FOR UPDATE): the
    guarded update waits for it, then ends what it left."""
    with transaction.atomic():
        if Subscription.objects.filter(pk=subscription.pk, state=Subscription.State.ACTIVE
                                       ).update(state=Subscription.State.CANCELLED) != 1:
            return False
        for timer in Timer.objects.filter(owner_type="subscription", owner_id=subscription.pk,
                                          state__in=[Timer.State.ARMED, Timer.State.HELD]):
            arming.end(timer.id, state=Timer.State.CANCELLED, by=why)
        _record(subscription, "subscription.ended", {
            "after_cycle": subscription.cycle, "by": by, "why": why},
            at=now_for(subscription.brand, subscription.test_clock))
    return True


def ends_at(subscription: Subscription) -> datetime | None:
    """The instant a subscription cancelled at its cycle's end stops: the renewal it will not
    make (None when it is not cancelled)."""
    if subscription.ends_after is None:
        return None
    return _calendar(subscription).rings(renews_on(subscription, subscription.ends_after + 1))


def resume(subscription: Subscription, *, by: str) -> Subscription:
    """Undo `cancel_at_cycle_end` while the cycle lasts: the subscription renews again as
    before (its renewal and mints stayed armed). Refused, naming `subscription`, when it is
    not cancelled or its last cycle has ended."""
    with transaction.atomic():
        subscription = Subscription.objects.select_for_update(of=("self",)).select_related(
            "brand", "test_clock", "subject").get(pk=subscription.pk)
        now = now_for(subscription.brand, subscription.test_clock)
        ends = ends_at(subscription)
        if subscription.state != Subscription.State.ACTIVE or (ends and now >= ends):
            raise clocks.OrderRefused("subscription", "its last cycle has ended, so there is "
                                                      "nothing to resume: subscribe again")
        if ends is None:
            raise clocks.OrderRefused("subscription", "it is not cancelled, so there is "
                                                      "nothing to resume")
        subscription.ends_after = None
        subscription.save(update_fields=["ends_after"])
        _record(subscription, "subscription.resumed", {
            "by": by, "renews": renews_on(subscription, subscription.cycle + 1)}, at=now)
    return subscription


# -- allowances (T2) --------------------------------------------------------------------------

def cycle_on(subscription: Subscription, day: date) -> int:
    """The cycle holding `day`, read from the anchor: no timer needs to have fired."""
    every = plan_of(subscription).every
    unit = every.lstrip("0123456789")
    length = int(every[:-len(unit)]) * MIN_DAYS[unit]
    n = max(0, (day - subscription.anchor).days // length + 1)
    while n > 0 and periods.cycle_date(subscription.anchor, every, n) > day:
        n -= 1
    return n + 1


def use(subscription: Subscription, service: str, at: datetime) -> tuple[int, int, int]:
    """Count one use of `service`: (its cycle, used so far in it, included in a cycle)."""
    day = day_in_zone(at, _calendar(subscription).zone_name)
    cycle = cycle_on(subscription, day)
    return cycle, _count_use(subscription, service, cycle), \
        plan_of(subscription).includes.get(service, 0)


def _count_use(subscription: Subscription, service: str, cycle: int) -> int:
    """One more use of `service` in `cycle`, counted in one statement whether or not the
    cycle's row exists yet (an upsert: two uses at once both count): how many now."""
    def quote(name: str) -> str:  # the identifier pattern checked, then the database's quoting
        return connection.ops.quote_name(safe(name))

    table = quote(Allowance._meta.db_table)
    brand, of, service_, cycle_, used = (quote(Allowance._meta.get_field(name).column) for name
                                         in ("brand", "subscription", "service", "cycle", "used"))
    with connection.cursor() as cursor:
        # Names from the model, each checked and quoted; every value a parameter.
        cursor.execute(
            f"INSERT INTO {table} ({brand}, {of}, {service_}, {cycle_}, {used}) "
            f"VALUES (%s, %s, %s, %s, 1) ON CONFLICT ({of}, {service_}, {cycle_}) "
            f"DO UPDATE SET {used} = {table}.{used} + 1 WHERE {table}.{brand} = %s "
            f"RETURNING {used}",
            [subscription.brand_id, subscription.pk, service, cycle, subscription.brand_id])
        return cursor.fetchone()[0]


def allowances(subscription: Subscription, *, at: datetime,
               used_by_cycle: dict[int, dict[str, int]] | None = None) -> list[dict]:
    """Each included service: used and left in the cycle holding `at`, and when it resets.
    `used_by_cycle` (cycle → service → used), when given, is what a page read already for
    many subscriptions at once; without it, the cycle's use is read here."""
    day = day_in_zone(at, _calendar(subscription).zone_name)
    cycle = cycle_on(subscription, day)
    if used_by_cycle is not None:
        used = used_by_cycle.get(cycle, {})
    else:
        used = dict(Allowance.objects.filter(brand_id=subscription.brand_id,
                                             subscription=subscription, cycle=cycle)
                    .values_list("service", "used"))
    resets = renews_on(subscription, cycle + 1)
    return [{"service": service, "included": count, "used": used.get(service, 0),
             "left": max(count - used.get(service, 0), 0), "cycle": cycle, "resets_on": resets}
            for service, count in sorted(plan_of(subscription).includes.items())]


# -- firing -----------------------------------------------------------------------------------

def renew(subscription_id: str, cycle: int, instant: datetime, *,
          owed: datetime | None = None) -> str:
    with transaction.atomic():
        subscription = Subscription.objects.select_for_update(of=("self",)).select_related(
            "subject__brand").get(pk=subscription_id)
        if subscription.state != Subscription.State.ACTIVE or subscription.cycle >= cycle:
            return f"cycle {cycle} · {subscription.state}, cycle {subscription.cycle}: " \
                   "nothing to do"
        if subscription.ends_after is not None and cycle > subscription.ends_after:
            subscription.state = Subscription.State.CANCELLED
            subscription.save(update_fields=["state"])
            _record(subscription, "subscription.ended", {"after_cycle":
                                                         subscription.ends_after}, at=instant)
            for timer in Timer.objects.filter(
                    owner_id=subscription.pk, kind="schedule",
                    state__in=[Timer.State.ARMED, Timer.State.HELD]):
                arming.end(timer.id, state=Timer.State.CANCELLED, by="the subscription ended")
            return f"ended after cycle {subscription.ends_after}"
        subscription.cycle = cycle
        subscription.save(update_fields=["cycle"])
        charged = _charge(subscription, cycle, instant)
        dunning.arm(subscription, cycle, instant)
        plan = plan_of(subscription)
        _record(subscription, "cycle.renewed", {"cycle": cycle, "charge": charged,
                                                "amount": plan.amount, "currency": plan.currency,
                                                "owed": owed or instant}, at=instant)
        _arm_renewal(subscription, cycle + 1)
        return f"renewed, cycle {cycle} · {charged}"


def mint(subscription_id: str, name: str, label: str, timer: Timer, instant: datetime, *,
         locked: Subscription | None = None) -> str:
    """Mint the period's job: first arm the next period's mint (past a catch-up's gap, whose
    skipped periods are named on the record, S23), then open the job unless the schedule's
    `when` does not hold; a refused order is on the record and heard (`mint_lapses`).
    It runs inside its timer's firing, whose transaction (and, redone one by one, its own
    savepoint) makes it whole: it opens no savepoint of its own (a Hold raised in one would
    mark the firing's transaction for rollback). `locked`: the subscription as its batch
    locked and read it (`kinds.schedule.prepare`)."""
    subscription = locked or Subscription.objects.select_for_update(of=("self",)).select_related(
        "subject__brand", "brand").get(pk=subscription_id)
    if subscription.state != Subscription.State.ACTIVE:
        return f"{name} · period {label} · the subscription ended: nothing minted"
    dunning.hold_mint(subscription)
    schedule = plan_of(subscription).schedules[name]
    gap, following = _gap(schedule, subscription, periods.period(schedule.each, label),
                          timer, instant)
    _arm_mint(subscription, schedule, following)
    if gap:
        return mint_lapses.skipped(subscription, schedule, gap, following.label, instant)
    if any(subscription.subject.input.get(key) != value
           for key, value in schedule.when.items()):
        skipped = "its 'when' does not hold for the subject"
        _record(subscription, "schedule.skipped", {"schedule": name, "period": label,
                                                   "why": skipped}, at=instant)
        return f"{name} · period {label} · skipped: {skipped}"
    return _open(subscription, schedule, label, timer, instant)


def _open(subscription: Subscription, schedule: ScheduleSpec, label: str, timer: Timer,
          instant: datetime) -> str:
    """Open the period's job and count it against the allowance. The one place a mint is
    refused: whatever the reason, it is recorded and told (S23)."""
    name = schedule.name
    try:
        job = clocks.order(brand=subscription.brand, service=schedule.order,
                           subject=subscription.subject, period=label,
                           by=f"schedule {name} of {subscription.pk}",
                           kept_plan=subscription.plan)
    except clocks.PeriodTaken:
        return f"{name} · period {label} · already held by a job: nothing minted"
    except clocks.OrderRefused as refused:
        return mint_lapses.refused(subscription, schedule, label, refused, instant)
    cycle, used, included = use(subscription, schedule.order, instant)
    inside = used <= included
    _record(subscription, "schedule.minted", {
        "schedule": name, "period": label, "service": schedule.order, "cycle": cycle,
        "used": used, "included": included, "inside": inside, "owed": timer.owed},
        at=instant, job=job.pk)
    counted = (f"$0.00 · {used} of {included}" if inside else
               f"beyond the allowance ({used}, {included} included)")
    return f"{name} → {job.pk} · period {label} · {counted}"


GAP_LONGEST = 5000  # periods one catch-up walks past: 13 years of days, a bound on the loop


def _gap(schedule: ScheduleSpec, subscription: Subscription, period: periods.Period,
         timer: Timer, instant: datetime) -> tuple[list[str], periods.Period]:
    """The periods, from `period` on, that a late mint's `catch_up` skips, and the period
    whose mint is armed next: `last` skips every period whose next one is owed too (and arms
    the latest, owed, which fires in place); `none` skips every period more than a day late
    (and arms the first that is not). A mint a freeze held is owed, not part of a gap."""
    if schedule.catch_up in OPENS_EVERY or timer.payload.get("released"):
        return [], period.next()
    if schedule.catch_up == "last":
        def skips(found: periods.Period) -> bool:
            return _mint_at(subscription, schedule, found.next()) <= instant
    else:
        def skips(found: periods.Period) -> bool:
            owed = timer.owed if found == period else _mint_at(subscription, schedule, found)
            return instant - owed > GRACE
    gap, found = [], period
    while len(gap) < GAP_LONGEST and skips(found):
        gap.append(found.label)
        found = found.next()
    return gap, found if gap else period.next()


def of_subject(subject: Subject) -> list[dict]:
    """A subject's active plans as pages show them: the subscription, the first day of its
    next cycle, and each allowance's use this cycle (read on the subject's own clock)."""
    found = []
    for subscription in Subscription.objects.filter(
            brand_id=subject.brand_id, subject=subject,
            state=Subscription.State.ACTIVE).select_related("test_clock", "brand"):
        now = now_for(subscription.brand, subscription.test_clock)
        found.append({"subscription": subscription,
                      "renews_on": renews_on(subscription, subscription.cycle + 1),
                      "owed": (dunning.shown_owed(subscription)
                               if dunning.collects(subscription) else ""),
                      "allowances": allowances(subscription, at=now)})
    return found


# -- events that mint (S18, `on.event`) -------------------------------------------------------

KEY_MAX = 32  # a job's period holds it


@transaction.atomic
def receive(*, subject: Subject, event: str, key: str, input: dict | None = None,
            by: str = "") -> list[str]:
    """The subject received `event` (a notice, with its `reply_by`): each of its plans that
    takes the event mints a job of its `order` with the event's input, counted against the
    plan's allowance. `key` names this event (the notice's number): the minted job's period,
    so the same event received twice mints once. Answers the minted jobs' ids."""
    clocks.refuse_erased(subject)
    if not isinstance(key, str) or not 0 < len(key) <= KEY_MAX:
        raise clocks.OrderRefused("key", f"an event's key is text of 1 to {KEY_MAX} characters")
    takers = [subscription for subscription in Subscription.objects.filter(
        subject=subject, state=Subscription.State.ACTIVE).select_related("test_clock")
        if event in plan_of(subscription).events]
    if not takers:
        raise clocks.OrderRefused("event", f"no plan of {subject.pk} takes {event!r}")
    now = now_for(subject.brand, subject.test_clock)
    minted = []
    for subscription in takers:
        if subscription.frozen_since is not None:
            raise clocks.OrderRefused("event", f"{subscription.pk}'s allowances are frozen: "
                                               "its renewal is unpaid; record the payment to "
                                               "release them")
        order = plan_of(subscription).events[event]
        _record(subscription, "event.received", {"event": event, "key": key, "by": by},
                at=now)
        try:
            job = clocks.order(brand=subject.brand, service=order, subject=subject, period=key,
                               input=input or {}, by=f"event {event} ({key})",
                               kept_plan=subscription.plan)
        except clocks.PeriodTaken:
            raise clocks.OrderRefused("key", f"{event} {key!r} was received already: its job "
                                             "is open") from None
        cycle, used, included = use(subscription, order, now)
        _record(subscription, "event.minted", {
            "event": event, "key": key, "service": order, "cycle": cycle, "used": used,
            "included": included, "inside": used <= included}, at=now, job=job.pk)
        minted.append(job.pk)
    return minted
