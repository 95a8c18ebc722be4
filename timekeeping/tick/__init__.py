"""The tick: every owed timer fired once, in a fixed order (SPEC S4, DESIGN decision 4).

For each brand clock with armed timers owed by the tick's instant:

1. Take the clock's lease with one conditional UPDATE whose row count is checked, so a
   second tick process skips the clock and the clock's order holds. Exactly once does not
   rest on the lease: each batch locks its timers (FOR UPDATE SKIP LOCKED) and fires only
   those still armed, so even a tick that outlived its lease cannot fire a timer twice.
2. A pass selects the armed timers owed by the instant in tie order (owed, place, when the
   owner opened, key byte by byte) and fires them in batches of 1,000: one transaction per
   batch, the handlers first, then bulk writes (timers, records, deliveries). A handler that
   raises rolls the batch back, and the batch is redone with one savepoint per timer, so the
   failure is recorded (`timer.failed`) and undoes nothing else; the timer stays armed and is
   tried again at the next tick.
3. Timers armed during a pass and owed by the instant fire in the next pass; the passes repeat
   to a fixpoint. Past 32 passes the tick stops that clock, records `tick.runaway`, and puts an
   alarm for the brand's owner in the outbox.
4. The tick keeps a time budget (50 s by default); what it does not reach, the next tick does.
   A killed tick loses nothing: a firing and its effects commit together or not at all.

5. Each brand clock, each connection's minute of timed moves and each later phase runs in
   its own guard (`timekeeping.timers.faults`): a failure is recorded once per place, its brand's
   owner told once, and the rest of the tick goes on. Only a database that is gone stops it.

A `TickRun` row keeps what each tick of each clock did. Test clocks are ticked only by their
walks (`timekeeping.tick.test_clocks`), which walk each owed instant with this engine, in the
tick's walks phase.

The package, by concern:

- `phases`: one tick (`run_once`), its phases in order, each a named function; `preview`.
- `clock`: one real brand clock's tick (lease, run, firing, closing); runs abandoned.
- `groups`: small brand clocks ticked together (`Group`), the large ones alone.
- `engine`: the `Engine` that fires one clock's timers, pass after pass, batch by batch.
- `results`: what a tick did (`TickResult`, `ClockTick`, `Sample`, `Tracer`).
- `test_clocks`: test clocks' walks, slice by slice.
- `trace`: a tick's trace rows, written and shown.
- `loop`: `tick --loop` and the demo's ticker.
- `housekeeping`: old rows deleted, stale runs marked abandoned (at most hourly).
- `partitions`: records by month on PostgreSQL.
- `observe`: /health/, /health/tick and /metrics.

The heartbeat (when the last tick passed, how late timers fired) is kept below the tick, in
`timekeeping.timers.heartbeat`.
"""
