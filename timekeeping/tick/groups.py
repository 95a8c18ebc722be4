"""Small brand clocks ticked together (`Group`), so what a clock costs does not grow with the
number of brands; the large ones tick alone (`groups`)."""

from __future__ import annotations

from datetime import datetime

from django.db import router, transaction

from timekeeping.basics import riding, wallclock
from timekeeping.models import Brand, Fault, TickRun, Timer
from timekeeping.tick.clock import (
    abandon_runs,
    bookkeeping,
    close_runs,
    fire_and_close,
    guarded_clock,
    lease_end,
    real_owed,
    tick_clock,
)
from timekeeping.tick.engine import BATCH_SIZE, TIE_ORDER, Engine
from timekeeping.tick.results import ClockTick, TickResult, Tracer
from timekeeping.timers import leases
from timekeeping.timers.faults import Faults, database_gone
from timekeeping.timers.firing import Firing, flush_all

# A clock with at most this many owed timers ticks in a group of small clocks, and a group
# holds at most a batch's worth of timers and this many clocks.
GROUP_OWED = 100
GROUP_CLOCKS = 500


class Group:
    """Small brand clocks ticked together, so what a clock costs does not grow with the
    number of brands (issue 14, "Many brands"): one commit takes all their leases, marks
    their killed runs abandoned and opens their runs; one transaction selects their owed
    timers in clock order (brand, then the tie order) and fires the first pass of every
    clock, writing all of them with one UPDATE and one COPY; one commit closes the runs and
    gives the leases back. A dozen round trips for a group, instead of ten for each clock.

    Each clock keeps its order (its timers fire in tie order, its later passes after its
    first) and still fails alone: when a handler raises or the group's writes fail, the
    group's firing is rolled back and each clock is fired on its own, as a large clock is,
    with a savepoint per timer in the batch that failed. A clock whose first pass armed
    timers owed by the instant fires its next passes on its own. A lease held by another
    process is skipped, and one a process that died here held is taken clock by clock; a
    clock another process fired since the tick listed it is let go without a run.
    """

    def __init__(self, brands: list[Brand], *, instant: datetime, deadline: float,
                 holder: str, faults: Faults, result: TickResult, batch_size: int,
                 trace: Tracer | None = None):
        self.brands = brands
        self.trace = trace
        self.instant = instant
        self.deadline = deadline
        self.holder = holder
        self.faults = faults
        self.result = result
        self.batch_size = batch_size
        self.engines: dict[str, Engine] = {}
        self.orphaned: list[Brand] = []  # leased by a process that died here

    def tick(self) -> None:
        try:
            self._open()
        except Exception:  # noqa: BLE001 - nothing committed: each clock ticks on its own
            if database_gone():
                raise
            self._alone(self.brands)
            return
        self._alone(self.orphaned)
        if not self.engines:
            return
        try:
            again, first_pass = self._first_pass(), 2
        except Exception:  # noqa: BLE001 - rolled back: each clock fires on its own
            if database_gone():
                raise
            again, first_pass = list(self.engines.values()), 1
        closed = [engine for engine in self.engines.values() if engine not in again]
        for engine in again:
            self._guarded(engine.brand, fire_and_close, engine, self.instant, first_pass)
        self._close(closed)

    def _open(self) -> None:
        now = wallclock.wall_now()
        with transaction.atomic():
            bookkeeping()
            taken = leases.take_many(Brand, [brand.pk for brand in self.brands],
                                     holder=self.holder, now=now,
                                     until=lease_end(now, self.deadline))
            # A clock another tick process fired since this one listed it owes nothing now:
            # its lease goes straight back, and it gets no run.
            owing = set(real_owed(self.instant, brand_id__in=list(taken))
                        .values_list("brand_id", flat=True).distinct())
            # A lease not taken is another live process's (skipped: it keeps that clock's
            # order), or one a process that died here left, which is taken clock by clock.
            held = dict(Brand.objects.filter(
                pk__in=[brand.pk for brand in self.brands if brand.pk not in taken],
            ).values_list("pk", "lease_holder")) if len(taken) < len(self.brands) else {}
            orphaned = {pk for pk, holder in held.items() if leases.is_dead_here(holder)}
            let_go = taken - owing
            if let_go:
                leases.give_back_many(Brand, list(let_go), holder=self.holder)
            taken &= owing
            engines = {brand.pk: Engine(brand, None, holder=self.holder,
                                        deadline=self.deadline, batch_size=self.batch_size,
                                        trace=self.trace)
                       for brand in self.brands if brand.pk in taken}
            if engines:
                abandon_runs(list(taken), now=now)
                for engine in engines.values():
                    engine.run.instant = self.instant
                TickRun.objects.bulk_create([engine.run for engine in engines.values()])
        self.engines = engines
        self.orphaned = [brand for brand in self.brands if brand.pk in orphaned]
        self.result.skipped.extend(pk for pk in held if pk not in orphaned)

    def _first_pass(self) -> list[Engine]:
        """Fire the owed timers of every clock of the group, in clock order, in one
        transaction; the clocks whose first pass armed timers owed by the instant."""
        batches: list[tuple[Engine, Firing]] = []
        # What the handlers park (`basics.riding`) rides in their later statements, or is
        # sent as the pass ends.
        with wallclock.fixed(self.instant), transaction.atomic(), \
                riding.parked(router.db_for_write(Timer)):
            owed = list(real_owed(self.instant, brand_id__in=list(self.engines))
                        .order_by("brand_id", *TIE_ORDER).select_for_update(skip_locked=True))
            of_brand: dict[str, list[Timer]] = {}
            for timer in owed:
                of_brand.setdefault(timer.brand_id, []).append(timer)
            for timer in owed:
                engine = self.engines[timer.brand_id]
                if not batches or batches[-1][0] is not engine:
                    if batches:  # the clock before's new rows, before the next clock's reads
                        batches[-1][1].write_rows()
                    batches.append((engine, engine._firing(self.instant, 1)))
                    batches[-1][1].take_rows()  # its orders' new rows (`timers.made`)
                    batches[-1][1].prepare(of_brand[timer.brand_id])
                timer.brand = engine.brand
                batches[-1][1].fire(timer)
            flush_all([batch for _, batch in batches])
            if self.trace is not None:
                for engine, batch in batches:
                    self.trace(engine.run, batch.rows)
        for engine in self.engines.values():
            engine.run.passes = 1
        owed_now: set[str] = set()
        for engine, batch in batches:
            engine._account(batch, owed_now)
        if not owed_now:
            return []
        owed_again = set(Timer.objects.filter(
            id__in=owed_now, state=Timer.State.ARMED, owed__lte=self.instant,
        ).values_list("brand_id", flat=True))
        return [engine for engine in self.engines.values() if engine.brand.pk in owed_again]

    def _close(self, engines: list[Engine]) -> None:
        """Close the runs of the clocks that fired in the group alone and give back every
        lease of the group still held, in one commit."""
        now = wallclock.wall_now()
        try:
            with transaction.atomic():
                bookkeeping()
                for engine in engines:
                    engine.run.instant, engine.run.finished = self.instant, now
                close_runs([engine.run for engine in engines])
                leases.give_back_many(Brand, [engine.brand.pk for engine in engines],
                                      holder=self.holder)
        except Exception:  # noqa: BLE001 - closed clock by clock, each in its own guard
            if database_gone():
                raise
            for engine in engines:
                self._guarded(engine.brand, self._close_alone, engine)
            return
        for engine in engines:
            self.faults.succeeded(Fault.Phase.TIMERS, engine.brand.pk)
            self.result.add(ClockTick(run=engine.run, late_by=engine.late_by))

    def _close_alone(self, engine: Engine) -> ClockTick:
        with transaction.atomic():
            ticked = engine.finish(self.instant)
            leases.give_back(Brand, engine.brand.pk, holder=self.holder)
        return ticked

    def _alone(self, brands: list[Brand]) -> None:
        for brand in brands:
            self._guarded(brand, tick_clock, brand, instant=self.instant,
                          deadline=self.deadline, holder=self.holder,
                          batch_size=self.batch_size, trace=self.trace)

    def _guarded(self, brand: Brand, work, *args, **kwargs) -> None:
        guarded_clock(self.faults, self.result, brand, work, *args, **kwargs)


def groups(brands: list[Brand]) -> tuple[list[list[Brand]], list[Brand]]:
    """The small clocks packed into groups, in brand order, and the large ones, which tick
    alone."""
    packed: list[list[Brand]] = []
    alone: list[Brand] = []
    owed = 0
    for brand in brands:
        if brand.owed > GROUP_OWED:
            alone.append(brand)
            continue
        if not packed or owed + brand.owed > BATCH_SIZE or len(packed[-1]) >= GROUP_CLOCKS:
            packed.append([])
            owed = 0
        packed[-1].append(brand)
        owed += brand.owed
    return packed, alone
