"""A batch of firings on one brand clock at one instant, and what they leave behind.

Handlers run inside the batch's transaction. What they write through this module (records,
deliveries) is buffered and written in bulk with the batch, so a batch of a thousand timers
costs a handful of round trips. Timers they arm are inserted at once (arming must answer with
the timer), and those owed by the batch's instant are noted so the tick fires them in the next
pass (SPEC S4: chains).

A batch is all the tick holds of its firings (issue 16): its trace rows are made only when a
trace is asked for (`traced`), and handed on when the batch is written.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import connections, router
from django.db.models import AutoField

from timekeeping.basics import inserted, riding
from timekeeping.models import Brand, Delivery, TestClock, TickRun, Timer
from timekeeping.timers import gathered, in_progress, kinds, records, stored
from timekeeping.timers.in_progress import current as current
from timekeeping.timers.in_progress import now_for as now_for

# Kinds of record that change nothing a batch reads at once for its timers (`Firing.keep_read`:
# dates, with their clocks, jobs and subjects, and jobs): a date's notice, a deadline's mark.
# What was read stands after one is made. Added by the wiring (`clocks.register`, `jobs`').
TELLING: set[str] = set()


def telling(*kinds_of_record: str) -> None:
    """Say that records of these kinds change nothing a batch read (`Firing.take_read`)."""
    TELLING.update(kinds_of_record)


# Reads a batch keeps through records of their job that do not tell, each asked of every such
# record made since it was kept when it is taken (`Firing.take_read`): whether what was read
# still shows the rows as they are. By what the read is; added by the wiring (`clocks`',
# `jobs`'). Those in HEARS_TELLING are asked of the records that tell too.
STANDING: dict[str, Callable[[object, records.Entry], bool]] = {}
HEARS_TELLING: set[str] = set()


def standing(what: str, stands: Callable[[object, records.Entry], bool], *,
             hears_telling: bool = False) -> None:
    """Say that a read kept as `what` stands through a record of its job for which
    `stands(value, record)` is true (a date moved through the very row read); with
    `hears_telling`, a record that tells too (a deadline's mark changes the deadline read)."""
    STANDING[what] = stands
    if hears_telling:
        HEARS_TELLING.add(what)


def _leaves(timer: Timer, owners: set[str]) -> bool:
    """Whether the timer's handler leaves alone the timers armed with the batch, of `owners`:
    its kind says it only tells (`quiet`), or that it reads and ends only its own owner's
    timers (`keeps_to_owner`) and its owner is none of theirs. Else they are written first."""
    kind = kinds.get(timer.kind)
    if kind.quiet is not None and kind.quiet(timer):
        return True
    return kind.keeps_to_owner and timer.owner_id not in owners


# How many fresh timers a batch keeps before it writes them (`Firing.arm_fresh`): a batch of
# a thousand mints arms some 17,000, which kept whole were a tick's peak memory.
FRESH_KEPT = 2_000


# How the timers armed with a batch are written (`arming.write_later`: the rule of `arm` and
# `rearm`, which this module, below arming, cannot import): set by the wiring
# (`timekeeping.timers.register`).
_write_later: Callable[[Firing, dict[str, tuple[Timer, str | None]]], set[str]] | None = None


def writes_later(write: Callable[[Firing, dict[str, tuple[Timer, str | None]]], set[str]]
                 ) -> None:
    """Say how a batch writes the timers armed with it (`arming.write_later`)."""
    global _write_later  # noqa: PLW0603 - set once, by the wiring
    _write_later = write


# Ids a batch reserves at once from a table's sequence for the new rows its orders make
# (`Firing.reserve_ids`): a batch of mints makes six dates an order.
IDS_RESERVED = 200

# How many new rows of its orders a batch keeps before it writes them (`Firing.hold_rows`): a
# batch of a thousand mints makes some 14,000, which kept whole would set a tick's peak memory
# (3,000 mints in one process peaked 1.2 MB higher keeping 2,000 than keeping 500, no faster).
ROWS_KEPT = 500


class RowsReadBack(Exception):
    """A statement of the batch may have missed the new rows it held (`made`): the batch is
    redone a timer at a time, each order writing its rows as it makes them."""


class Drop(Exception):
    """Raised by a handler that decides not to run its timer (a delay past its bound)."""


class Hold(Exception):
    """Raised by a handler whose timer must wait (a run rung whose step needs a grant that
    has ended): the timer is held, not fired, until what holds it releases it."""


@dataclass
class TraceRow:
    pass_no: int
    timer: Timer
    fired: datetime | None
    what: str
    outcome: str = "fired"  # fired, dropped, failed
    armed: list[Timer] = field(default_factory=list)
    held: list[tuple[Timer, str]] = field(default_factory=list)


class Firing:
    def __init__(
        self, *, brand: Brand, test_clock: TestClock | None, instant: datetime, run: TickRun,
        pass_no: int, first_seq: int, traced: bool = False,
    ):
        self.brand = brand
        self.test_clock = test_clock
        self.instant = instant
        self.run = run
        self.pass_no = pass_no
        self.seq = first_seq
        self.traced = traced
        self.records: list[records.Entry] = []
        self.records_of_job: dict[str, list[int]] = {}  # each job's places in `records`
        self.deliveries: list[Delivery] = []
        self.fired: list[Timer] = []
        self.late_s: list[float] = []  # how late each of `fired` fired, in seconds
        self.dropped: list[tuple[Timer, str]] = []
        self.owed_now: set[str] = set()  # armed by this batch and owed by its instant
        self.rows: list[TraceRow] = []  # only when traced
        # Listed under the firing that armed or held them, when traced; else only counted (a
        # batch of mints arms some 17,000 timers: kept, they were a tick's peak memory).
        self.armed_log: list[Timer] = []
        self.held_log: list[tuple[Timer, str]] = []
        self.armed_count = 0
        self.held_count = 0
        self.holding: list[tuple[Timer, str]] = []  # fired timers that were held instead
        self.current: Timer | None = None
        self.memo: dict = {}  # what hearers of its records read once per batch
        # What kinds read at once for the batch's timers (`prepare`), by (what, id), each taken
        # once; whose job each is (forgotten when it changes); the records' length when kept.
        self.read: dict[tuple[str, object], object] = {}
        self.read_of_job: dict[str, set[tuple[str, object]]] = {}
        self.job_of_read, self.kept_at = {}, {}
        self.taken: list[tuple[tuple[str, object], object, str]] = []  # by the handler running
        # Timers of this batch that a handler before them superseded, cancelled or held: they
        # stay as that handler left them, unfired (a catch-up tick over a moved date).
        self.ended: set[str] = set()
        # Timers armed to be written with the batch (`arming.arm_later`, `rearm_later`), by
        # key, each with why it supersedes a live one (None: it does not, as `arm`): written
        # before the first statement on the timers' table of a handler that might read or end
        # them (`_before_the_timers`), and when the batch is written.
        self.later: dict[str, tuple[Timer, str | None]] = {}
        # Timers of owners made in the batch's transaction (the work an order inside it opened,
        # `arming.gathering`): no other process can hold their keys, so they are written as
        # they are, in one statement, when the timers armed later are.
        self.fresh: list[Timer] = []
        self.later_owners: set[str] = set()
        # While a handler that may touch them runs, the timers armed before it and the fresh
        # ones, written before its first statement on the timers' table (`_holding_back`).
        self.due: tuple[dict[str, tuple[Timer, str | None]], list[Timer]] | None = None
        self.owners: Counter[str] = Counter()  # how many of the batch's timers each owner has
        # The new rows its orders made (`made`), by model in the order first held: written
        # before a statement that names one of their tables, and with the batch. Only when
        # the engine lets it (`take_rows`), at the savepoints open then (`depth`).
        self.rows_held: dict[type, list] = {}
        self.takes_rows = False
        self.using, self.depth = "", 0
        self.read_back = False  # a statement may have missed them: the batch is redone
        self._ids: dict[type, list[int]] = {}  # reserved from each table's sequence
        self._watching = self._writing = False

    # -- firing --------------------------------------------------------------------------

    def prepare(self, timers: list[Timer]) -> None:
        """Let each kind read at once what its timers of this batch need (issue 32)."""
        self.owners = Counter(timer.owner_id for timer in timers)
        by_kind: dict[str, list[Timer]] = {}
        for timer in timers:
            by_kind.setdefault(timer.kind, []).append(timer)
        for name, theirs in by_kind.items():
            prepare = kinds.get(name).prepare
            if prepare is not None:
                prepare(theirs, self)

    def keep_read(self, what: str, pk: object, value: object, *, job: str,
                  since: int | None = None) -> None:
        """Keep what a kind read for a timer of the batch, belonging to `job`: as read when
        the batch's records were `since` long (`mark`; now, if not given)."""
        self.read[(what, pk)] = value
        self.read_of_job.setdefault(job, set()).add((what, pk))
        self.job_of_read[(what, pk)] = job
        self.kept_at[(what, pk)] = len(self.records) if since is None else since

    def mark(self) -> int:
        """Where the batch's records stand now, for `keep_read`'s `since`."""
        return len(self.records)

    def take_read(self, what: str, pk: object):
        """What was read for this batch, once, or None: read before the batch began, it is
        forgotten as soon as a record of its job is made (every change to a job's dates,
        steps or state is on the record; only a record that tells, `TELLING`, leaves it), so
        a handler never acts on what an earlier one changed; a read `STANDING` says stands
        through a record is kept through it, and asked when taken. What a handler that only
        tells (its kind's `quiet`) took is given back when it is done (`_give_back`)."""
        read = (what, pk)
        value = self.peek_read(what, pk)
        if self.read.pop(read, None) is None:
            return None
        job = self.job_of_read[read]
        if value is None:  # kept no longer
            self.read_of_job[job].discard(read)
            return None
        self.taken.append((read, value, job))
        return value

    def peek_read(self, what: str, pk: object):
        """What `take_read` would give now, left kept for the handler that takes it."""
        read = (what, pk)
        value = self.read.get(read)
        if value is None or what not in STANDING:
            return value
        stands, hears = STANDING[what], what in HEARS_TELLING
        return value if all((entry.kind in TELLING and not hears) or stands(value, entry)
                            for entry in self.records_since(self.job_of_read[read],
                                                            self.kept_at[read])) else None

    def records_since(self, job: str, mark: int) -> Iterator[records.Entry]:
        """The records of `job` the batch made since its records were `mark` long (`mark`),
        found among the job's own (`records_of_job`), not among all the batch's."""
        places = self.records_of_job.get(job, [])
        return (self.records[at] for at in places[bisect_left(places, mark):])

    def _give_back(self, timer: Timer) -> None:
        """What a handler that only tells took from the batch's reads stands for the timers
        after it (a date's ask and its `run` rung, owed at one instant, read it once), unless
        its job changed since (a record of it that does not tell)."""
        taken, self.taken = self.taken, []
        quiet = kinds.get(timer.kind).quiet
        if quiet is None or not quiet(timer):
            return
        for read, value, job in taken:
            if read in self.read_of_job.get(job, ()):
                self.read[read] = value

    def fire(self, timer: Timer) -> None:
        """Run the timer's handler; on success the timer is fired and a record written. A
        timer an earlier handler of the batch ended or held is passed by."""
        if timer.id in self.ended:
            return
        self.redo_if_read_back()
        if timer.key in self.later:
            self.write_later()
        self.current = timer
        token = in_progress.enter(self)
        if self.rows_held:
            self.watch_rows()
        try:
            with self._before_the_timers(timer):
                what = kinds.get(timer.kind).fire(timer, self) or ""
        except (Drop, Hold) as stopped:  # not fired: dropped for good, or held until released
            outcome, kept = (("dropped", self.dropped) if isinstance(stopped, Drop)
                             else ("held", self.holding))
            kept.append((timer, str(stopped)))
            self.record(f"timer.{outcome}", timer=timer.id, data={"why": str(stopped)})
            if self.traced:
                self.rows.append(TraceRow(self.pass_no, timer, self.instant, what=str(stopped),
                                          outcome=outcome))
            return
        finally:
            in_progress.leave(token)
            self.current = None
            self._give_back(timer)
            if self._watching:
                self._unwatch_rows()
        self.seq += 1
        late_s = (self.instant - timer.owed).total_seconds()
        self.fired.append(timer)
        self.late_s.append(late_s)
        if self.traced:
            self.rows.append(TraceRow(self.pass_no, timer, self.instant, what=what))
        data = {"kind": timer.kind, "key": timer.key, "place": timer.place,
                "owed": timer.owed.isoformat(), "late_by_s": late_s, "owner": timer.owner_id,
                "pass": self.pass_no, "run": self.run.id, "seq": self.seq, "what": what}
        self.record("timer.fired", timer=timer.id, data=data, encoded=records.encode_fired(data))

    # -- what handlers call ----------------------------------------------------------------

    def record(self, kind: str, *, timer: str = "", subject: str = "", job: str = "",
               data: dict | None = None, encoded: str = "") -> None:
        entry = records.Entry(kind, timer=timer, subject=subject, job=job, data=data or {},
                              encoded=encoded)
        if job:
            if kind not in TELLING:  # the job changed, or may have: read it again
                kept = self.read_of_job.get(job, set())
                for read in [read for read in kept if read[0] not in STANDING]:
                    kept.discard(read)
                    self.read.pop(read, None)
            self.records_of_job.setdefault(job, []).append(len(self.records))
        self.records.append(entry)
        records.heard(self.brand, self.test_clock, self.instant, entry)

    def arm_later(self, timer: Timer, *, superseding: str | None = None) -> None:
        """Arm `timer` (not yet written, owed after the batch's instant) with the batch: the
        first armed under a key stands. With `superseding`, as `arming.rearm`: a live timer
        under its key owed at another time is superseded (and `superseding` says why)."""
        if timer.owed <= self.instant:
            raise ValueError("arm_later: a timer owed by the batch's instant is armed at once")
        if self.due is not None and timer.key in self.due[0]:
            self._write_due()  # as if written before the handler: the first armed stands
        if timer.key not in self.later:
            self.later[timer.key] = (timer, superseding)
            self.later_owners.add(timer.owner_id)
            if self.traced:  # listed where it was armed, as if written then (`write_later`)
                self.armed_log.append(timer)

    def arm_fresh(self, timers: list[Timer]) -> None:
        """Write with the batch the timers of owners made in its transaction (an order's,
        gathered: `arming.gathering`), before a handler that might read or end them sends
        its first statement on the timers' table (`_before_the_timers`): one statement for
        the batch's orders, not one each (issue 32: a batch of mints)."""
        self.fresh.extend(timers)  # of new owners: no handler keeping to its own is theirs
        if len(self.fresh) >= FRESH_KEPT:  # a batch's peak memory: written, not kept
            self._write_fresh()

    def _write_fresh(self) -> None:
        fresh, self.fresh = self.fresh, []
        stored.write_new(fresh)

    def write_later(self) -> None:
        """Write the timers armed with the batch (`arming.write_later`), as if each had been
        armed when its handler armed it, and the fresh ones (`arm_fresh`) as they are."""
        later, fresh = self.later, self.fresh
        self.later, self.fresh, self.later_owners = {}, [], set()
        self._write(later, fresh)

    def _before_the_timers(self, timer: Timer):
        """While `timer`'s handler runs: the timers armed with the batch before it, if it
        may read or end them (`_leaves`), written before its first statement on the timers'
        table, and not before (issue 32: a `run` rung whose step moves no date sends none, so
        the next day's asks armed before it wait for the batch's one write). What it arms
        itself waits, as before, for the next handler that may touch it."""
        if not (self.later or self.fresh) or _leaves(timer, self.later_owners):
            return nullcontext()
        return self._holding_back()

    @contextmanager
    def _holding_back(self):
        """Hold back what is armed now (`due`) while the handler runs, watching its statements
        (`_written_first`); what it did not need written waits, with what it armed, for the
        next write."""
        self.due = (self.later, self.fresh)
        self.later, self.fresh, self.later_owners = {}, [], set()
        try:
            with connections[router.db_for_write(Timer)].execute_wrapper(self._written_first):
                yield
        finally:
            if self.due is not None:
                (later, fresh), self.due = self.due, None
                self.later, self.fresh = {**later, **self.later}, fresh + self.fresh
                self.later_owners |= {timer.owner_id for timer, _ in later.values()}

    def _written_first(self, execute, sql, params, many, context):
        """An execute wrapper (`_holding_back`): a statement on the timers' table, or one
        whose text cannot be read, is sent after the timers due are written."""
        if self.due is not None and _names(sql, (Timer,)):
            self._write_due()
        return execute(sql, params, many, context)

    def _write_due(self) -> None:
        (later, fresh), self.due = self.due, None
        self._write(later, fresh)

    def _write(self, later: dict[str, tuple[Timer, str | None]], fresh: list[Timer]) -> None:
        """The fresh timers as they are, then those armed later as `arming.write_later`
        writes them."""
        stored.write_new(fresh)
        if later:
            self.note_due_written([timer for timer, _ in later.values()],
                                  _write_later(self, later))

    def due_to_ride(self, owner: str | None, keys) -> list[Timer]:
        """The timers held back for the handler running (`_holding_back`), handed to the
        statement that arms `owner`'s `keys` again (`stored.supersede_and_store`) to write
        as `arm` would have just before it (issue 32: the next day's ask, armed by a date's
        `ack daily` rung, was written alone before its `run` rung moved the date). Only when
        each is armed as `arm` arms it, none is fresh and none is under one of `keys`: else
        none, and they are written first, as before. `note_due_written` when written."""
        if self.due is None or owner is None:
            return []
        later, fresh = self.due
        if fresh or not later or any(why is not None for _, why in later.values()) \
                or not later.keys().isdisjoint(keys):
            return []
        self.due = None
        return [timer for timer, _ in later.values()]

    def note_due_written(self, timers: list[Timer], written: set[str]) -> None:
        """Timers armed with the batch, of which `written` were written."""
        mine = {timer.pk for timer in timers}
        self.armed_count += len(written & mine)  # each owed after the instant: not this pass's
        unwritten = mine - written
        if self.traced and unwritten:  # the trace lists only those written
            self.armed_log = [timer for timer in self.armed_log if timer.pk not in unwritten]

    # -- the new rows of orders, written with the batch (`made`) ------------------------------

    def take_rows(self) -> None:
        """Let the orders of this batch hand it their new rows (`made`): the engine's batch
        on PostgreSQL, whose sequences give their ids; at the savepoints open now."""
        self.using = router.db_for_write(Timer)
        connection = connections[self.using]
        self.takes_rows = connection.vendor == "postgresql"
        self.depth = riding.savepoints(connection)

    def takes_rows_now(self) -> bool:
        """Whether the batch takes new rows made now: none was read back, and no savepoint
        was opened since it began (one rolled back would take them with it)."""
        return (self.takes_rows and not self.read_back
                and riding.savepoints(connections[self.using]) == self.depth)

    def reserve_ids(self, rows) -> None:
        """An id from its table's sequence for each row of a model with automatic ids that
        has none, as its insert would give it; reserved a block at a time."""
        model = type(rows[0])
        wanted = [row for row in rows if row.pk is None]
        if not wanted or not isinstance(model._meta.pk, AutoField):
            return
        pool = self._ids.setdefault(model, [])
        if len(pool) < len(wanted):
            pool[:0] = inserted.next_ids(model, max(IDS_RESERVED, len(wanted) - len(pool)))
        for row in wanted:
            row.pk = pool.pop()  # the smallest first: the pool is kept largest first

    def watch_rows(self) -> None:
        """Watch the handler's statements for the new rows (`_rows_first`)."""
        if not self._watching:
            connections[self.using].execute_wrappers.append(self._rows_first)
            self._watching = True

    def _unwatch_rows(self) -> None:
        connections[self.using].execute_wrappers.remove(self._rows_first)
        self._watching = False

    def hold_rows(self, rows: list) -> None:
        """The new rows of an order that ended whole, written with the batch; at once, if
        the batch holds so many (`ROWS_KEPT`)."""
        for row in rows:
            self.rows_held.setdefault(type(row), []).append(row)
        if sum(map(len, self.rows_held.values())) >= ROWS_KEPT and self.takes_rows_now():
            self.write_rows()

    def _rows_first(self, execute, sql, params, many, context):
        """An execute wrapper (`watch_rows`): a statement naming a table of the new rows
        held, or whose text cannot be read, is sent after they are written; one naming a
        table of the rows an order still open made, or sent inside a savepoint opened since
        the batch began, has the batch redone (`made`)."""
        if not self._writing and not self.read_back:
            collected = gathered.current()
            if collected is not None and collected.rows and _names(
                    sql, {type(row) for row in collected.rows}):
                self.read_back = True
            elif self.rows_held and _names(sql, self.rows_held):
                if self.takes_rows_now():
                    self.write_rows()
                else:
                    self.read_back = True
        return execute(sql, params, many, context)

    def redo_if_read_back(self) -> None:
        """Raise `RowsReadBack` if a statement may have missed the new rows held (`made`)."""
        if self.read_back:
            raise RowsReadBack("a statement may have missed the new rows the batch held")

    def write_rows(self) -> None:
        """Write the new rows held, one statement a table; held until they are written."""
        if not self.rows_held:
            return
        self._writing = True
        try:
            for rows in self.rows_held.values():
                inserted.insert(rows)
        finally:
            self._writing = False
        self.rows_held = {}

    def deliver(self, delivery: Delivery) -> None:
        self.deliveries.append(delivery)

    def note_armed(self, timer: Timer) -> None:
        if timer.owed <= self.instant:  # the next pass's; a later one is a later tick's
            self.owed_now.add(timer.id)
        self.armed_count += 1
        if self.traced:
            self.armed_log.append(timer)

    def note_ended(self, timer_id: str) -> None:
        self.ended.add(timer_id)

    def note_held(self, timer: Timer, why: str) -> None:
        """A timer this firing held (or armed held): the trace lists it under the firing."""
        timer.armed_by = self.current.id if self.current else ""
        self.held_count += 1
        if self.traced:
            self.held_log.append((timer, why))

    # -- writing the batch -------------------------------------------------------------------

    def attach_armed(self) -> None:
        if not self.traced:
            return
        by_parent: dict[str, list[Timer]] = {}
        for timer in self.armed_log:
            by_parent.setdefault(timer.armed_by, []).append(timer)
        held: dict[str, list[tuple[Timer, str]]] = {}
        for timer, why in self.held_log:
            held.setdefault(timer.armed_by, []).append((timer, why))
        for row in self.rows:
            row.armed = by_parent.get(row.timer.id, [])
            row.held = held.get(row.timer.id, [])

    def note_late(self) -> None:
        """Timers of the real clock fired later than the tick's stale threshold (the tick was
        stopped, or behind): one `timer.late` record for the batch, an event."""
        if self.test_clock is not None:
            return
        stale = settings.TICK_STALE_SECONDS
        late = [(timer, late_s) for timer, late_s in zip(self.fired, self.late_s, strict=True)
                if late_s > stale]
        if not late:
            return
        # Heard as the batch's other records are: what its hearers read once for the batch
        # stands (a brand's webhook endpoints: read again here, once a batch, before).
        token = in_progress.enter(self)
        try:
            self.record("timer.late", timer=late[0][0].id, data={
                "timers": len(late), "owed_from": min(timer.owed for timer, _ in late),
                "latest_by_s": max(late_s for _, late_s in late)})
        finally:
            in_progress.leave(token)

    def flush(self) -> None:
        """Write the batch: fired and dropped timers, records, deliveries (bulk writes)."""
        flush_all([self])


def flush_all(batches: list[Firing]) -> None:
    """Write batches fired at one instant, on one brand clock or on many (a tick fires a group
    of small clocks together): one UPDATE for the fired timers, one write of the records, one
    of the deliveries, whatever the number of clocks."""
    if not batches:
        return
    for batch in batches:
        batch.redo_if_read_back()
        batch.write_rows()
        batch.write_later()
    instant = batches[0].instant
    fired = [timer.id for batch in batches for timer in batch.fired]
    if fired:
        stored.mark_fired(fired, instant)
    for batch in batches:
        for timer, why in batch.dropped:
            Timer.objects.filter(id=timer.id).update(state=Timer.State.DROPPED, ended_by=why)
        for timer, why in batch.holding:
            Timer.objects.filter(id=timer.id, state=Timer.State.ARMED).update(
                state=Timer.State.HELD, ended_by=why[:200])
    for batch in batches:
        batch.note_late()
    records.write_clocks([(batch.brand, batch.test_clock, batch.records) for batch in batches],
                         instant=instant)
    deliveries = [delivery for batch in batches for delivery in batch.deliveries]
    if deliveries:
        inserted.insert(deliveries, skip_taken=True)
    for batch in batches:
        batch.attach_armed()


def _names(sql, models) -> bool:
    """Whether a statement names the table of one of `models` (one whose text cannot be
    read might)."""
    return not isinstance(sql, str) or any(model._meta.db_table in sql for model in models)
