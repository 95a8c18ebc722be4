"""Running schedules on their grid (SPEC J2-J8).

Each tick, for the schedules of one scope (code and purge schedules; each brand's manifest
schedules on its real clock; a test clock's copies when it advances):

1. sync: a state row per declared schedule, keyed by the name it was first declared with
   (a renamed schedule with the same action keeps its row). A new schedule's first run is due
   one interval after the first tick that sees it. A changed interval takes effect from
   whichever comes first: the kept due time, or one new interval after the tick.
2. for each due schedule (or one asked to run by hand), one conditional UPDATE on its row: due
   time unchanged, not paused, no live lease. It takes the lease (the tick's remaining budget
   plus a minute, at most 16 minutes) and moves the due time to the first grid time after the
   tick, so missed ticks become one run. A paused schedule, or one still held by a run, gets
   its due time moved the same way and a skip recorded with the reason. A parked one is
   left alone: no run, no skip, not even by hand (`schedules.parking`).
3. the runs go side by side, each in a thread with its own connection and transaction, with
   the clock fixed at the tick's time; a run is limited to 15 minutes and the tick's budget
   (`deadline_exceeded`). A failure is recorded and backs the schedule off: its next due
   time moves past a wait that doubles with each failure in a row, and after the brand's
   `park_after` it is parked (`schedules.parking`, issue 31); a success resets the count.
4. afterwards (`expire_leases`): a run whose lease ran out while it still shows running was
   lost with its process, and ends `failed` with `lease_expired`, a failure as above.
"""

from __future__ import annotations

import threading
import time
from contextlib import nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from django.db import connection, connections, transaction
from django.db.models import F, OuterRef, Q, Subquery

from timekeeping.basics import wallclock
from timekeeping.models import Brand, Manifest, Schedule, ScheduleRun, TestClock
from timekeeping.schedules import parking, purge
from timekeeping.schedules.declare import (
    Declared,
    code_schedules,
    get_action,
    manifest_schedules,
    next_due_after,
    next_wall,
)
from timekeeping.timers import leases, records

MAX_LEASE = timedelta(minutes=16)
RUN_LIMIT = timedelta(minutes=15)
LEASE_MARGIN = timedelta(minutes=1)


@dataclass(frozen=True)
class RunContext:
    """What a running action may ask: `timekeeping.schedules.engine.context()`."""

    schedule: str
    brand: Brand | None
    test_clock: TestClock | None
    due: datetime
    tick: datetime


_context: ContextVar[RunContext | None] = ContextVar("keeping_time_schedule_run", default=None)


def context() -> RunContext | None:
    return _context.get()


# -- the scopes and what they declare --------------------------------------------------------

def scope_key(brand: Brand | None, test_clock: TestClock | None) -> str:
    return f"{brand.pk if brand else '-'}:{test_clock.pk if test_clock else '-'}"


@lru_cache(maxsize=128)
def _declared_in_bundle(bundle: str) -> tuple[Declared, ...]:
    document = Manifest.objects.filter(bundle=bundle).values_list("document", flat=True).first()
    return tuple(manifest_schedules(document or {}))


def brands_with_schedules() -> list[tuple[Brand, str]]:
    latest = Manifest.objects.filter(brand=OuterRef("pk")).order_by("-version").values("bundle")
    found = Brand.objects.annotate(bundle=Subquery(latest[:1])).filter(bundle__isnull=False)
    return [(brand, brand.bundle) for brand in found if _declared_in_bundle(brand.bundle)]


def declared_for(brand: Brand | None, bundle: str | None = None) -> list[Declared]:
    if brand is None:
        return code_schedules() + purge.schedules()
    if bundle is None:
        latest = Manifest.objects.filter(brand=brand).order_by("-version").first()
        bundle = latest.bundle if latest else None
    return list(_declared_in_bundle(bundle)) if bundle else []


def sync(declared: list[Declared], *, brand: Brand | None, test_clock: TestClock | None,
         now: datetime) -> list[Schedule]:
    """Bring the scope's state rows in line with what is declared; return the active ones."""
    scope = scope_key(brand, test_clock)
    rows = {row.key: row for row in Schedule.objects.filter(key__startswith=f"{scope}:")}
    by_name = {row.name: row for row in rows.values()}
    wanted: set[str] = set()
    names = {item.name for item in declared}
    for item in declared:
        row = by_name.get(item.name) or _renamed(rows.values(), item, wanted, names)
        if row is None:
            # Two ticks seeing a new schedule at once: the row's unique key lets one create
            # it, and the other finds it (get_or_create retries the read on the conflict).
            row, created = Schedule.objects.get_or_create(
                key=f"{scope}:{item.name}",
                defaults={"name": item.name, "brand": brand, "test_clock": test_clock,
                          "action": item.action, "every_s": item.every_s, "at": item.at,
                          "declared_in": item.declared_in, "last_tick": now,
                          "next_due": _first_due(item, now)})
            if not created:
                _update(row, item, now)
        else:
            _update(row, item, now)
        wanted.add(row.key)
    Schedule.objects.filter(key__startswith=f"{scope}:", active=True).exclude(
        key__in=wanted).update(active=False)
    return list(Schedule.objects.filter(key__in=wanted))


def _renamed(rows, item: Declared, taken: set[str], names: set[str]) -> Schedule | None:
    # A schedule no longer declared under its old name, running the same action: renamed.
    for row in rows:
        if row.key not in taken and row.action == item.action and row.name not in names:
            return row
    return None


def _first_due(item: Declared, now: datetime) -> datetime:
    """A new schedule's first due time: one interval after the tick that sees it, or its
    first wall time after that tick."""
    return next_wall(item.at, now) if item.at else now + timedelta(seconds=item.every_s)


def _update(row: Schedule, item: Declared, now: datetime) -> None:
    changes = {}
    if row.at != item.at:
        # A changed wall time, or a change between an interval and a wall time: from the
        # first due time the new declaration gives after this tick.
        changes.update(at=item.at, every_s=item.every_s, next_due=_first_due(item, now))
    elif row.every_s != item.every_s:
        # J2: from whichever comes first, the kept due time or one new interval from now.
        changes["every_s"] = item.every_s
        changes["next_due"] = min(row.next_due, now + timedelta(seconds=item.every_s))
    for field in ("name", "action", "declared_in"):
        if getattr(row, field) != getattr(item, field):
            changes[field] = getattr(item, field)
    if not row.active:
        changes["active"] = True
    if changes:
        Schedule.objects.filter(pk=row.pk).update(**changes)
        for field, value in changes.items():
            setattr(row, field, value)


# -- claiming due schedules ------------------------------------------------------------------

@dataclass
class Claim:
    schedule: Schedule
    run: ScheduleRun


def claim_due(rows: list[Schedule], *, now: datetime, holder: str,
              lease_until: datetime) -> tuple[list[Claim], list[ScheduleRun]]:
    """Take the lease of each due schedule, or record why it was skipped. A parked schedule
    is no one's to run until it is retried or given up (`schedules.parking`)."""
    claims, skips = [], []
    for row in rows:
        if row.parked is not None:
            continue
        if row.run_requested:
            claim = _claim_by_hand(row, now=now, holder=holder, lease_until=lease_until)
            if claim is not None:
                claims.append(claim)
                continue
        if row.next_due is None or row.next_due > now:
            continue
        outcome = _claim_on_grid(row, now=now, holder=holder, lease_until=lease_until)
        if isinstance(outcome, Claim):
            claims.append(outcome)
        elif outcome is not None:
            skips.append(outcome)
    return claims, skips


def _claim_on_grid(row: Schedule, *, now: datetime, holder: str, lease_until: datetime):
    due = row.next_due
    # A wall-time schedule's next due is its first wall time after this tick: late, it runs
    # once (told the time it was due), never a backlog and never not at all.
    moved = next_due_after(at=row.at, every_s=row.every_s, due=due, after=now)
    # Not parked, read again in each statement: a failure of the run another tick finished
    # meanwhile may have parked it since `row` was read.
    same = Schedule.objects.filter(pk=row.pk, next_due=due, parked__isnull=True)
    free = Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    # The lease: one conditional statement; of two ticks at once, one runs the schedule.
    if same.filter(free, paused=False).update(lease_holder=holder, lease_until=lease_until,
                                              next_due=moved, last_tick=now) == 1:
        run = ScheduleRun.objects.create(schedule=row, due=due, tick=now, started=now,
                                         outcome=ScheduleRun.Outcome.RUNNING, holder=holder)
        return Claim(row, run)
    for reason, condition in (("paused", Q(paused=True)), ("running", ~free)):
        if same.filter(condition).update(next_due=moved, last_tick=now) == 1:
            return ScheduleRun.objects.create(schedule=row, due=due, tick=now,
                                              outcome=ScheduleRun.Outcome.SKIPPED,
                                              reason=reason)
    return None  # another tick took this due time


def _claim_by_hand(row: Schedule, *, now: datetime, holder: str,
                   lease_until: datetime) -> Claim | None:
    free = Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    if Schedule.objects.filter(free, pk=row.pk, run_requested=True,
                               parked__isnull=True).update(
            run_requested=False, lease_holder=holder, lease_until=lease_until,
            last_tick=now) != 1:
        return None
    run = ScheduleRun.objects.create(schedule=row, due=now, tick=now, started=now,
                                     outcome=ScheduleRun.Outcome.RUNNING, holder=holder,
                                     by_hand=True)
    return Claim(row, run)


# -- running -----------------------------------------------------------------------------------

def perform(claim: Claim, *, tick: datetime) -> None:
    """Run one claimed schedule in this thread, with the clock fixed at the tick's time."""
    row, run = claim.schedule, claim.run
    token = None
    try:
        # Inside the try: reading the brand or test clock (from the default database, when
        # the state lives in SCHEDULES_STORE) can fail too, and the run must still end.
        token = _context.set(RunContext(row.name, row.brand, row.test_clock, run.due, tick))
        # The run has its own connection (its thread's) and the clock fixed at the tick's
        # time. The action opens its own transactions: a sweep commits row by row (T3).
        # Inside a test clock's instant (one transaction), a savepoint of its own, so a
        # failing action undoes only itself.
        inside = connection.in_atomic_block
        with wallclock.fixed(tick), transaction.atomic() if inside else nullcontext():
            result = get_action(row.action)()
        if _finish(run, ScheduleRun.Outcome.SUCCEEDED, items=result if isinstance(
                result, int) and not isinstance(result, bool) else 0):
            parking.succeeded(row)
            _recovered(row, run)
    except Exception as error:  # noqa: BLE001 - a failed run is recorded, and backs off
        _failed(row, run, f"{type(error).__name__}: {error}", error)
    finally:
        if token is not None:
            _context.reset(token)
        leases.give_back(Schedule, row.pk, holder=run.holder)


def _failed(row: Schedule, run: ScheduleRun, reason: str,
            error: BaseException | None = None) -> None:
    """End a run still running as failed, and back its schedule off (`schedules.parking`,
    which writes `schedule.failed` for a brand's). A run ended already counts nothing."""
    if _finish(run, ScheduleRun.Outcome.FAILED, reason=reason):
        parking.failed(row, run=run, reason=reason, error=error)


def _recovered(row: Schedule, run: ScheduleRun) -> None:
    """A brand's schedule that ran again after a failure is on its record (the event
    `schedule.recovered`); a product-wide one is the operator's."""
    if row.brand_id is None:
        return
    before = (ScheduleRun.objects.filter(schedule_id=row.pk, tick__lt=run.tick)
              .exclude(outcome=ScheduleRun.Outcome.SKIPPED).order_by("-tick")
              .values_list("outcome", flat=True).first())
    if before == ScheduleRun.Outcome.FAILED:
        records.write("schedule.recovered", brand=row.brand, instant=run.tick,
                      test_clock=row.test_clock,
                      data={"schedule": row.name, "run": run.pk, "reason": ""})


def _finish(run: ScheduleRun, outcome: str, *, reason: str = "", items: int = 0) -> bool:
    # Only a run still running can finish: one marked deadline_exceeded stays so.
    return ScheduleRun.objects.filter(pk=run.pk, outcome=ScheduleRun.Outcome.RUNNING).update(
        outcome=outcome, reason=reason, items=items, finished=wallclock.wall_now()) == 1


def run_side_by_side(claims: list[Claim], *, tick: datetime, deadline: float) -> None:
    """Each run in its own thread (its own connection); none holds another up."""

    def target(claim: Claim) -> None:
        try:
            perform(claim, tick=tick)
        finally:
            # This thread's connections: the default database's and, with SCHEDULES_STORE,
            # the store's (J6). Left open, each run would leak them.
            connections.close_all()

    threads = []
    for claim in claims:
        thread = threading.Thread(target=target, args=(claim,), daemon=True,
                                  name=f"schedule {claim.schedule.name}")
        thread.start()
        threads.append((claim, thread, time.monotonic()))
    for claim, thread, started in threads:
        limit = min(started + RUN_LIMIT.total_seconds(), deadline)
        thread.join(max(0.0, limit - time.monotonic()))
        if thread.is_alive():
            # Python cannot stop a thread: the run is recorded as over, its lease given back;
            # whatever it does later cannot change the record.
            _failed(claim.schedule, claim.run, "deadline_exceeded")
            leases.give_back(Schedule, claim.schedule.pk, holder=claim.run.holder)


def run_inline(claims: list[Claim], *, tick: datetime) -> None:
    """Runs one after the other in this thread: a test clock's advance, which is for tests."""
    for claim in claims:
        perform(claim, tick=tick)


def lost_runs(now: datetime):
    """Runs lost with their process: still running after their schedule's lease ran out."""
    return ScheduleRun.objects.filter(outcome=ScheduleRun.Outcome.RUNNING).filter(
        Q(schedule__lease_until__lt=now) | Q(schedule__lease_until__isnull=True)
        | ~Q(schedule__lease_holder=F("holder")))


def expire_leases(*, now: datetime) -> int:
    """Ends the lost runs (`lost_runs`) failed, reason lease_expired."""
    count = 0
    for run in lost_runs(now).select_related("schedule"):
        if _finish(run, ScheduleRun.Outcome.FAILED, reason="lease_expired"):
            count += 1
            parking.failed(run.schedule, run=run, reason="lease_expired")
        Schedule.objects.filter(pk=run.schedule_id, lease_holder=run.holder,
                                lease_until__lt=now).update(lease_holder="", lease_until=None)
    return count


def lease_until(now: datetime, deadline: float) -> datetime:
    remaining = timedelta(seconds=max(0.0, deadline - time.monotonic()))
    return now + min(remaining + LEASE_MARGIN, MAX_LEASE)


# -- a tick's schedule phase ------------------------------------------------------------------

@dataclass
class PhaseResult:
    runs: list[ScheduleRun]
    skips: list[ScheduleRun]


def run_due(*, now: datetime, deadline: float, holder: str) -> PhaseResult:
    """The schedules phase of a real tick: every scope on the real clock."""
    claims: list[Claim] = []
    skips: list[ScheduleRun] = []
    scopes = [(None, declared_for(None))] + [
        (brand, declared_for(brand, bundle)) for brand, bundle in brands_with_schedules()]
    until = lease_until(now, deadline)
    for brand, declared in scopes:
        rows = sync(declared, brand=brand, test_clock=None, now=now)
        found, skipped = claim_due(rows, now=now, holder=holder, lease_until=until)
        claims += found
        skips += skipped
    run_side_by_side(claims, tick=now, deadline=deadline)
    finished = ScheduleRun.objects.select_related("schedule").in_bulk([c.run.pk for c in claims])
    return PhaseResult([finished[c.run.pk] for c in claims], skips)


def shortest_interval() -> int | None:
    found = Schedule.objects.filter(active=True, test_clock__isnull=True,
                                    every_s__gt=0).order_by(
        "every_s").values_list("every_s", flat=True).first()
    return found
