"""One tick (`run_once`): its phases in their order, each while the budget lasts and in its own
guard; and `preview`, what a tick would fire."""

from __future__ import annotations

import time
from datetime import datetime, timedelta
from functools import partial

from django.db import transaction
from django.db.models import Count, Exists, OuterRef

from timekeeping.basics import wallclock
from timekeeping.digests import send as digests
from timekeeping.models import Brand, Fault
from timekeeping.moves import job as moves
from timekeeping.moves import parking as connection_parking
from timekeeping.schedules import engine as schedules
from timekeeping.tick import housekeeping, test_clocks
from timekeeping.tick.clock import guarded_clock, real_owed, tick_clock
from timekeeping.tick.engine import BATCH_SIZE
from timekeeping.tick.groups import Group, groups
from timekeeping.tick.results import Sample, TickResult, Tracer
from timekeeping.timers import leases, outbox
from timekeeping.timers.faults import Faults
from timekeeping.timers.heartbeat import beat
from timekeeping.webhooks import stopped

DEFAULT_BUDGET = timedelta(seconds=50)
# The tick lists the clocks owing timers this many brands at a time.
CLOCK_PAGE = 2000


def owed_clocks(instant: datetime, brand_ids: list[str] | None = None, *, after: str = "",
                limit: int | None = None) -> list[Brand]:
    """Brands whose real clock has armed timers owed by `instant`, in brand order (those
    after `after`, at most `limit`), each with `owed`, how many. Two queries: the brands, by
    an index probe per brand on the armed timers' partial index (a probe stops at the first
    owed timer and learns to skip the entries of timers fired since, so an empty tick stays
    cheap however many are armed or were just fired); then, for those brands only, their
    owed timers counted."""
    owed = real_owed(instant, brand=OuterRef("pk"))
    brands = Brand.objects.filter(Exists(owed)).select_related("owner").order_by("pk")
    if brand_ids is not None:
        brands = brands.filter(pk__in=brand_ids)
    if after:
        brands = brands.filter(pk__gt=after)
    found = list(brands[:limit] if limit is not None else brands)
    if not found:
        return found
    counts = dict(real_owed(instant, brand_id__in=[brand.pk for brand in found])
                  .order_by().values("brand_id").annotate(n=Count("id"))
                  .values_list("brand_id", "n"))
    for brand in found:
        brand.owed = counts.get(brand.pk, 0)
    return found


def run_once(*, now: datetime | None = None, budget: timedelta = DEFAULT_BUDGET,
             brand_ids: list[str] | None = None, sweep: bool = True,
             batch_size: int = BATCH_SIZE, phases: bool = True,
             trace: Tracer | None = None) -> TickResult:
    """One tick (D2, J9), each phase while the budget lasts, each brand clock, connection and
    phase in its own guard (`timekeeping.timers.faults`):

    1. timers (`fire_owed`): every real brand clock with timers owed, a page of CLOCK_PAGE
       brands at a time, the small ones in groups (`Group`), then the large ones one by one;
    2. schedules (`run_schedules`): the due ones and those asked for by hand, side by side;
    3. timed moves (`move_rows`): each connection's minute;
    4. test clocks' walks (`walk_test_clocks`, `timekeeping.tick.test_clocks`), in
       slices;
    5. digests (`send_digests`): each person's digest due, written to the outbox once per period
       (`timekeeping.digests.send`);
    6. the outbox sweep (`sweep_outbox`);
    7. runs whose lease expired, and housekeeping (`keep_house`, at most hourly);
    8. the heartbeat (`timekeeping.timers.heartbeat.beat`).

    It holds one batch of timers at a time (issue 16): the result keeps counts and bounded
    samples, and with `trace`, each batch's trace rows are handed to it as they are made.
    """
    instant = now or wallclock.wall_now()
    deadline = time.monotonic() + budget.total_seconds()
    holder = leases.holder_name()
    result = TickResult(instant=instant)
    faults = Faults(instant)
    fire_owed(faults, result, instant=instant, deadline=deadline, holder=holder,
              brand_ids=brand_ids, batch_size=batch_size, trace=trace)
    if phases and time.monotonic() < deadline:
        run_schedules(faults, result, instant=instant, deadline=deadline, holder=holder)
    if phases and time.monotonic() < deadline:
        move_rows(faults, result, instant=instant, deadline=deadline, holder=holder)
    if phases and time.monotonic() < deadline:
        result.walks = walk_test_clocks(faults, deadline=deadline, holder=holder,
                                        batch_size=batch_size)
    if phases and time.monotonic() < deadline:
        result.digests = send_digests(faults, instant, deadline)
    if sweep and time.monotonic() < deadline:
        sweep_outbox(faults, result, deadline)
    if phases and time.monotonic() < deadline:
        keep_house(faults, result, instant=instant, holder=holder)
    if phases:
        before = beat(instant, result.lateness)
        with faults.guard(Fault.Phase.HOUSEKEEPING, where="tick stopped"):
            stopped.tell(before, instant)
    result.faults = faults.raised
    return result


def fire_owed(faults: Faults, result: TickResult, *, instant: datetime, deadline: float,
              holder: str, brand_ids: list[str] | None, batch_size: int,
              trace: Tracer | None) -> None:
    """The timers phase: every real brand clock with timers owed, a page of CLOCK_PAGE brands
    at a time, the small ones in groups (`Group`), then the large ones one by one, each until
    its fair share of the time left (docs/scale.md, "Fair shares")."""
    after = ""
    while True:
        page = owed_clocks(instant, brand_ids, after=after, limit=CLOCK_PAGE)
        small, large = groups(page)
        for group in small:
            if time.monotonic() > deadline:
                result.unreached.extend(brand.pk for brand in group)
                continue
            Group(group, instant=instant, deadline=deadline, holder=holder, faults=faults,
                  result=result, batch_size=batch_size, trace=trace).tick()
        for index, brand in enumerate(large):
            now = time.monotonic()
            if now > deadline:
                result.unreached.add(brand.pk)
                continue
            # Brands in turn (issue 31): each large clock fires until its fair share of the
            # time left, so one brand's backlog cannot take the whole budget from the large
            # clocks after it; what a clock leaves of its share goes to those after it.
            share = now + (deadline - now) / (len(large) - index)
            guarded_clock(faults, result, brand, tick_clock, brand, instant=instant,
                          deadline=share, holder=holder, batch_size=batch_size, trace=trace)
        if len(page) < CLOCK_PAGE:
            break
        after = page[-1].pk
        if time.monotonic() > deadline:  # the rest are the next tick's: only counted
            rest = real_owed(instant, brand_id__gt=after).order_by("brand_id")
            if brand_ids is not None:
                rest = rest.filter(brand_id__in=brand_ids)
            result.unreached.extend(rest.values_list("brand_id", flat=True).distinct()
                                    .iterator())
            break


def run_schedules(faults: Faults, result: TickResult, *, instant: datetime, deadline: float,
                  holder: str) -> None:
    """The schedules phase: the due ones and those asked for by hand, side by side."""
    with faults.guard(Fault.Phase.SCHEDULES, where="schedules"):
        done = schedules.run_due(now=instant, deadline=deadline, holder=holder)
        result.schedule_runs, result.schedule_skips = Sample(done.runs), Sample(done.skips)


def move_rows(faults: Faults, result: TickResult, *, instant: datetime, deadline: float,
              holder: str) -> None:
    """The timed moves phase: each connection's minute, each in its own guard; a minute that
    fails backs its connection off, and parks it after too many (`moves.parking`)."""
    for link in moves.due_connections(now=instant):
        if time.monotonic() > deadline:  # its minute is the next tick's
            result.moves_unreached.add(link.pk)
            continue
        with faults.guard(Fault.Phase.MOVES, where=link.pk, brand=link.brand,
                          then=partial(_backed_off, link, instant)):
            result.add_minute(moves.run_connection(link, now=instant, holder=holder))


def _backed_off(link, instant: datetime, error: Exception) -> None:
    connection_parking.failed(link, error=error, instant=instant)


def sweep_outbox(faults: Faults, result: TickResult, deadline: float | None = None) -> None:
    """The outbox sweep: claim after claim while deliveries are due and the budget lasts."""
    with faults.guard(Fault.Phase.OUTBOX, where="outbox"):
        result.sweep = outbox.sweep(deadline=deadline)


def keep_house(faults: Faults, result: TickResult, *, instant: datetime, holder: str) -> None:
    """Runs whose lease expired, and housekeeping (at most hourly)."""
    with faults.guard(Fault.Phase.HOUSEKEEPING, where="housekeeping"):
        schedules.expire_leases(now=instant)
        result.housekeeping = housekeeping.run(now=instant, holder=holder)

def send_digests(faults: Faults, instant: datetime, deadline: float) -> digests.Sent:
    """The digests phase: each digest in its own guard, its brand's owner told of a fault."""
    def guard(digest):
        return faults.guard(Fault.Phase.DIGESTS, where=digest.pk, brand=digest.brand)

    return digests.run_due(now=instant, deadline=deadline, guard=guard)


def walk_test_clocks(faults: Faults, *, deadline: float, holder: str,
                     batch_size: int = BATCH_SIZE):
    """The walks phase: test clocks' advances, each slice in its own guard."""
    def guard(walk):
        return faults.guard(Fault.Phase.WALKS, where=walk.test_clock_id, brand=walk.brand)

    return test_clocks.run_waiting(deadline=deadline, holder=holder, batch_size=batch_size,
                                   guard=guard)


def preview(*, to: datetime, brand_ids: list[str] | None = None,
            trace: Tracer | None = None) -> TickResult:
    """The real clocks' timers at `to`, inside a transaction that is rolled back: what would
    fire. Sends nothing, runs no schedule."""
    with transaction.atomic():
        result = run_once(now=to, brand_ids=brand_ids, sweep=False, phases=False, trace=trace)
        transaction.set_rollback(True)
    return result
