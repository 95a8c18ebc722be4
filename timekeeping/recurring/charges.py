"""A job's charge on time (S12, S21): held when the job opens, released when the work is
accepted, returned when the job lapses or is cancelled. Place 7 of the tick (`window`).

A service with `price.amount` (and no `price.every`: a plan's cycles are charged as they
renew) holds its charge in the ledger when a job opens (`<brand>:customer:<subject>` to the
payer's held account). When the job ends delivered:

- with `price.final_after` ("7d"), the acceptance window opens: with no send-back before it
  closes, the job is accepted and its charge released to `<brand>:earned`; a send-back inside
  it (`send_back`) takes the job back to open, and its next delivery opens a new window;
- without it, the charge is released at once;
- with `price.release` (a step, "file"), when that step commits through the gate, and never
  otherwise: a job that ends without it (a hard date that bars the step passed) returns it.

`price.late` (a percent) comes off the charge when the job's deadline went late: released,
then that part given back to the customer. A job that lapses or is cancelled returns its hold,
and is charged the paid acts (`price.acts`, a step and its price) it had already committed.
Every posting balances; the ledger's hold is taken or given back once, whoever asks twice.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from money import ledger
from timekeeping import clocks
from timekeeping.models import Deadline, Job, Record, Timer
from timekeeping.specs.current import services_of
from timekeeping.specs.jobs import parse_span
from timekeeping.timers import arming, records
from timekeeping.timers.firing import now_for

KIND = "window"


def _plan(job: Job):
    return services_of(job.bundle)[job.service].plan


def _reference(job: Job) -> str:
    return f"{job.pk}:charge"


def _customer(job: Job) -> str:
    return f"{job.brand_id}:customer:{job.subject_id}"


def _record(job: Job, kind: str, data: dict, at: datetime) -> None:
    records.write(kind, brand=job.brand, instant=at, test_clock=job.test_clock,
                  subject=job.subject_id, job=job.pk, data=data)


def when_opened(job: Job, spec, now: datetime) -> None:
    plan = spec.plan
    if plan.is_plan or not plan.amount:
        return
    ledger.hold(brand=job.brand_id, reference=_reference(job), payer=_customer(job),
                amount=plan.amount, currency=plan.currency, until=now, at=now)
    _record(job, "charge.held", {"amount": plan.amount, "currency": plan.currency}, now)


def when_ended(job: Job, state: str, now: datetime) -> None:
    plan = _plan(job)
    if plan.is_plan or not plan.amount:
        return
    delivered = state == Job.State.ENDED
    if not delivered or plan.release:
        # Lapsed or cancelled, or ended without the step that releases it (its commit took the
        # hold already): the hold goes back, once.
        if ledger.give_back(_reference(job), brand=job.brand_id, at=now):
            why = _never_released(job, plan.release) if delivered else f"job {state}"
            _record(job, "charge.returned", {"amount": plan.amount, "why": why}, now)
            if not delivered:
                _charge_acts(job, plan, now)
        return
    window = parse_span(plan.final_after) if plan.final_after else None
    if window is None:
        release(job, now)
        return
    closes = window.after(now, clocks.calendar_for(job.subject).zone_name)
    arming.rearm(brand=job.brand, test_clock=job.test_clock, kind=KIND, key=f"{job.pk}:accept",
                 owed=closes, why="delivered again", owner_type="job", owner_id=job.pk,
                 owner_opened=job.opened, bundle=job.bundle, payload={"job": job.pk})
    _record(job, "window.opened", {"closes": closes, "final_after": plan.final_after}, now)


def _charge_acts(job: Job, plan, now: datetime) -> None:
    """A job that lapsed or was cancelled before delivery: the paid acts already committed
    are charged, once (the hold they came from was given back just before)."""
    acts = {step: plan.acts[step] for step in job.steps_done if step in plan.acts}
    if not acts:
        return
    total = sum(acts.values())
    ledger.post(brand=job.brand_id, kind="acts.charged", reference=f"{job.pk}:acts",
                currency=plan.currency, at=now, lines=[(_customer(job), -total),
                       (f"{job.brand_id}:earned:{plan.currency}", total)])
    _record(job, "acts.charged", {"acts": acts, "amount": total, "currency": plan.currency},
            now)


def _never_released(job: Job, step: str) -> str:
    """Why a charge waiting on `step` went back: the hard date that bars it, if one passed."""
    lapses = Record.objects.filter(brand=job.brand, job=job.pk, kind="clock.lapsed").exclude(
        pk__in=clocks.withdrawn_lapses(job.brand))  # a late notice reopened the date
    barred = next((lapse.data for lapse in lapses if isinstance(lapse.data, dict)
                   and step in (lapse.data.get("bars") or [])), None)
    if barred is not None:
        return (f"its release step '{step}' is barred: the hard date {barred.get('name')} "
                f"{barred.get('due')} passed")
    return f"the job ended without its release step '{step}'"


def effect_step_taken(job: Job, step: str, items: list[str], now: datetime, outcome) -> None:
    """The release step commits: the work is accepted, and the charge released (the check
    allows `release` only on a job's charge)."""
    if _plan(job).release == step:
        release(job, now)


def release(job: Job, at: datetime) -> str:
    """The work is accepted: the charge is earned, less what a late deadline takes off."""
    plan = _plan(job)
    if not ledger.take(_reference(job), brand=job.brand_id, at=at,
                       to=f"{job.brand_id}:earned"):
        return "the charge was settled already"
    off = 0
    late = Deadline.objects.filter(job=job, step="").exclude(late_price="").first()
    if late is not None and Record.objects.filter(brand=job.brand, job=job.pk,
                                                  kind="deadline.late").exists():
        off = plan.amount * int(late.late_price.rstrip("%")) // 100
        ledger.post(brand=job.brand_id, kind="late.discount", reference=_reference(job),
                    currency=plan.currency, at=at,
                    lines=[(f"{job.brand_id}:earned:{plan.currency}", -off),
                           (_customer(job), off)])
    _record(job, "charge.released", {"amount": plan.amount, "off": off,
                                     "currency": plan.currency}, at)
    return f"accepted · {plan.amount - off} {plan.currency} earned" + (
        f" ({off} off: late)" if off else "")


def send_back(job: Job, *, by: str) -> Job:
    """The customer sends the delivered work back inside the acceptance window: the job is
    open again and the window closed; its next delivery opens a new one."""
    with transaction.atomic():
        job = Job.objects.select_for_update(of=("self",)).select_related(
            "brand", "subject", "test_clock").get(pk=job.pk)
        window = arming.clock_timers(job.brand, job.test_clock).filter(
            key=f"{job.pk}:accept", state=Timer.State.ARMED).first()
        now = now_for(job.brand, job.test_clock)
        if job.state != Job.State.ENDED or window is None or now >= window.owed:
            raise clocks.OrderRefused("job", f"job {job.pk} is not in its acceptance window")
        arming.end(window.id, state=Timer.State.CANCELLED, by=f"sent back by {by}")
        Job.objects.filter(pk=job.pk).update(state=Job.State.OPEN, ended=None)
        job.state, job.ended = Job.State.OPEN, None
        _record(job, "job.sent_back", {"by": by}, now)
    return job


def fire(job_id: str, instant: datetime) -> str:
    with transaction.atomic():
        job = Job.objects.select_for_update(of=("self",)).select_related(
            "brand", "subject", "test_clock").get(pk=job_id)
        if job.state != Job.State.ENDED:
            return f"acceptance window · job {job.state}: nothing released"
        said = release(job, instant)
        _record(job, "job.accepted", {"at": instant}, instant)
        return said
