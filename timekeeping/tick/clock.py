"""One real brand clock's tick: its lease taken, its killed runs marked abandoned, its run
opened, its timers fired by the engine, its run closed and its lease given back (step 1 of
`timekeeping.tick`); and the pieces a group of clocks shares (`timekeeping.tick.groups.groups`)."""

from __future__ import annotations

import time
from datetime import datetime, timedelta

from django.db import connection, transaction

from timekeeping.basics import wallclock
from timekeeping.models import Brand, Fault, TestClock, TickRun, Timer
from timekeeping.tick import housekeeping
from timekeeping.tick.engine import BATCH_SIZE, CLOSING_FIELDS, Engine
from timekeeping.tick.results import ClockTick, TickResult, Tracer
from timekeeping.timers import leases, parking
from timekeeping.timers.faults import Faults

LEASE_MARGIN = timedelta(minutes=1)


def tick_clock(brand: Brand, *, instant: datetime, deadline: float, holder: str,
               batch_size: int = BATCH_SIZE, trace: Tracer | None = None) -> ClockTick | None:
    """One tick of a brand's real clock; None when another process holds its lease."""
    now = wallclock.wall_now()
    engine = Engine(brand, None, holder=holder, deadline=deadline, batch_size=batch_size,
                    trace=trace)
    # Taking the lease, marking a killed tick's runs abandoned and opening this run commit
    # together, and so do closing the run and giving the lease back: two commits of
    # bookkeeping a clock, around the firing's own (bench/brands.py).
    with transaction.atomic():
        bookkeeping()
        if not leases.take(Brand, brand.pk, holder=holder, now=now,
                           until=lease_end(now, deadline)):
            return None
        abandon_runs([brand.pk], now=now)
        engine.start(instant)
    return fire_and_close(engine, instant)


def fire_and_close(engine: Engine, instant: datetime, first_pass: int = 1) -> ClockTick:
    """Fire a clock whose lease this process holds and whose run is open, close its run and
    give its lease back."""
    brand, holder = engine.brand, engine.run.holder
    given_back = False
    try:
        with wallclock.fixed(instant):
            engine.fire_at(instant, first_pass)
        with transaction.atomic():
            bookkeeping()
            ticked = engine.finish(instant)
            leases.give_back(Brand, brand.pk, holder=holder)
            given_back = True
        return ticked
    except Exception as error:
        engine.fail(error)
        raise
    finally:
        if not given_back:
            leases.give_back(Brand, brand.pk, holder=holder)


def close_runs(runs: list[TickRun]) -> None:
    """Write the closing figures of many runs in one statement. On PostgreSQL an UPDATE from
    arrays (one parameter per column; Django's bulk_update builds a CASE per run and field,
    which cost a group of 2,000 small clocks more than their firing); elsewhere bulk_update."""
    if not runs:
        return
    if connection.vendor != "postgresql":
        TickRun.objects.bulk_update(runs, fields=CLOSING_FIELDS)
        return
    table = connection.ops.quote_name(TickRun._meta.db_table)
    columns = [TickRun._meta.get_field(name).column for name in CLOSING_FIELDS]
    types = {"instant": "timestamptz", "finished": "timestamptz", "runaway": "boolean",
             "unfinished": "boolean"}
    sets = ", ".join(f"{connection.ops.quote_name(column)} = v.{connection.ops.quote_name(column)}"
                     for column in columns)
    arrays = ", ".join(f"unnest(%s::{types.get(name, 'integer')}[]) AS "
                       f"{connection.ops.quote_name(column)}"
                       for name, column in zip(CLOSING_FIELDS, columns, strict=True))
    key, brand = connection.ops.quote_name("id"), connection.ops.quote_name("brand_id")
    with connection.cursor() as cursor:
        # Each run found by its brand and id: on a database sharded by brand, the brands
        # named and the join on the brand send each run's row to its brand's shard.
        brands = sorted({run.brand_id for run in runs})
        cursor.execute(
            f"UPDATE {table} SET {sets} FROM (SELECT unnest(%s::text[]) AS id, "
            f"unnest(%s::text[]) AS brand_id, {arrays}) AS v "
            f"WHERE {table}.{brand} IN ({', '.join(['%s'] * len(brands))}) "
            f"AND {table}.{brand} = v.brand_id AND {table}.{key} = v.id",
            [[run.id for run in runs], [run.brand_id for run in runs],
             *([getattr(run, name) for run in runs] for name in CLOSING_FIELDS), *brands])


def lease_end(now: datetime, deadline: float) -> datetime:
    return now + timedelta(seconds=max(0.0, deadline - time.monotonic())) + LEASE_MARGIN


def guarded_clock(faults: Faults, result: TickResult, brand: Brand, work, *args,
                  **kwargs) -> None:
    """Work on one brand clock in its own guard: its tick goes on the result, or its skip
    (None: another process holds its lease)."""
    with faults.guard(Fault.Phase.TIMERS, where=brand.pk, brand=brand):
        ticked = work(*args, **kwargs)
        if ticked is None:
            result.skipped.add(brand.pk)
        else:
            result.add(ticked)


def bookkeeping() -> None:
    """The transaction only keeps the tick's books (a lease, a run): on PostgreSQL its commit
    does not wait for the disk. Lost in a crash, a lease is free again and a run unfinished,
    which the next tick marks abandoned; what fired is committed by the firing's own,
    durable, transaction, which also flushes these."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")


def abandon_runs(brand_ids: list[str], *, now: datetime,
                 test_clock: TestClock | None = None) -> int:
    """Runs of these clocks left unfinished by a tick that was killed. Called by the holder
    of the clocks' leases, so no live tick is running them."""
    return TickRun.objects.filter(brand_id__in=brand_ids, test_clock=test_clock,
                                  finished__isnull=True).update(finished=now,
                                                                error=housekeeping.ABANDONED)


def real_owed(instant: datetime, **brand):
    """Armed timers of the real clocks owed by `instant`, of the brand(s) named first (the
    partial index `timer_armed_real` serves the brand, then the owed time), leaving out those
    backing off after a failure until their next attempt (`timers.parking`)."""
    return Timer.objects.filter(**brand, test_clock__isnull=True, state=Timer.State.ARMED,
                                owed__lte=instant).filter(parking.come(instant))
