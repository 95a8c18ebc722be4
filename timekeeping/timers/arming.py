"""Arming and ending timers, and saying why one has or has not fired (SPEC S3)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from functools import reduce
from operator import or_

from django.db.models import Q, QuerySet

from timekeeping.basics import compiled, wallclock
from timekeeping.basics.spans import span_text
from timekeeping.models import Brand, TestClock, Timer
from timekeeping.timers import firing, gathered, kinds, made, records
from timekeeping.timers.stored import (
    end_open,
    end_under_keys,
    looked_up_in_one,
    store,
    store_unheld,
    supersede_and_store,
    write_new,
)


def clock_timers(brand: Brand, test_clock: TestClock | None) -> QuerySet[Timer]:
    """The timers of one brand clock: the real one, or a test clock."""
    if test_clock is None:
        return Timer.objects.filter(brand=brand, test_clock__isnull=True)
    return Timer.objects.filter(brand=brand, test_clock=test_clock)


def same_instant(one: datetime, other: datetime) -> bool:
    """Whether two aware instants are the same, whatever their zones: compared in UTC, as an
    instant in an hour that happens twice (PEP 495) never equals one of another zone."""
    return one.astimezone(UTC) == other.astimezone(UTC)


class _SameClock:
    def __repr__(self) -> str:
        return "SAME_CLOCK"


# The default clock for arming: inside a firing, the firing's own clock (a test clock's world
# stays on that test clock); outside one, the brand's real clock.
SAME_CLOCK: TestClock | None = _SameClock()  # type: ignore[assignment]


def arm(
    *, brand: Brand, kind: str, key: str, owed: datetime,
    test_clock: TestClock | None = SAME_CLOCK,
    owner_type: str = "", owner_id: str = "", owner_opened: datetime | None = None,
    payload: dict | None = None, bundle: str = "", held_by: str = "",
) -> Timer:
    """Arm a timer, or find the one already armed under `key` on this brand clock.

    Idempotent by key (a unique constraint), so arming twice never makes two. Inside a
    firing the new timer is noted as armed by it, and fires in the next pass if owed by then.
    With `held_by`, it is made held (a deadline whose job already waits on a party)."""
    if owed.tzinfo is None:
        raise ValueError("owed: give an aware instant")
    batch = firing.current()
    if test_clock is SAME_CLOCK:
        test_clock = batch.test_clock if batch is not None else None
    if test_clock is not None and test_clock.brand_id != brand.pk:
        raise ValueError(f"test_clock: {test_clock.pk} is not a clock of brand {brand.pk}")
    kinds.get(kind)  # an unknown kind is refused before anything is written
    gathering = gathered.current()
    if gathering is not None and gathering.holds(owner_id):  # its owner is new: none yet
        return gathering.live.get(key) or gathering.add(_new(
            brand=brand, kind=kind, key=key, owed=owed, test_clock=test_clock,
            owner_type=owner_type, owner_id=owner_id, owner_opened=owner_opened,
            payload=payload, bundle=bundle, held_by=held_by), held_by=held_by)
    existing = (clock_timers(brand, test_clock).filter(key=key)
                .exclude(state=Timer.State.SUPERSEDED).order_by("-armed_at").first())
    if existing is not None:
        return existing
    return _insert(brand=brand, kind=kind, key=key, owed=owed, test_clock=test_clock,
                   owner_type=owner_type, owner_id=owner_id, owner_opened=owner_opened,
                   payload=payload, bundle=bundle, held_by=held_by)


def arm_later(
    *, brand: Brand, kind: str, key: str, owed: datetime, test_clock: TestClock | None,
    owner_type: str = "", owner_id: str = "", owner_opened: datetime | None = None,
    payload: dict | None = None, bundle: str = "",
) -> None:
    """`arm`, written with the firing batch it is armed in (issue 32: an `ack daily` rung
    arms the next day's ask, three statements a rung one at a time). The batch writes it
    before a handler that could read or end it sends its first statement on the timers'
    table (`Firing.write_later`, `_before_the_timers`), so to every other handler it is as
    if armed at once. Outside a firing, on another clock, or owed by the batch's instant (the
    next pass fires it), it is armed at once."""
    fields = {"owner_type": owner_type, "owner_id": owner_id, "owner_opened": owner_opened,
              "payload": payload, "bundle": bundle}
    if not _later(brand, test_clock, owed, owner_id, superseding=None, kind=kind, key=key,
                  fields=fields):
        arm(brand=brand, kind=kind, key=key, owed=owed, test_clock=test_clock, **fields)


def rearm_later(
    *, brand: Brand, kind: str, key: str, owed: datetime, why: str,
    test_clock: TestClock | None, **fields,
) -> None:
    """`rearm`, written with the firing batch it is armed in, as `arm_later` (a mint arms
    its subscription's next one: three statements a mint one at a time)."""
    if not _later(brand, test_clock, owed, fields.get("owner_id", ""), superseding=why,
                  kind=kind, key=key, fields=fields):
        rearm(brand=brand, kind=kind, key=key, owed=owed, why=why, test_clock=test_clock,
              **fields)


def _later(brand: Brand, test_clock: TestClock | None, owed: datetime, owner_id: str, *,
           superseding: str | None, kind: str, key: str, fields: dict) -> bool:
    """Hand the timer to the firing batch to write (`Firing.arm_later`), if it may be."""
    batch = firing.current()
    gathering = gathered.current()
    if (batch is None or owed.tzinfo is None or owed <= batch.instant
            or getattr(test_clock, "pk", None) != getattr(batch.test_clock, "pk", None)
            or brand.pk != batch.brand.pk or (gathering is not None
                                              and gathering.holds(owner_id))):
        return False
    kinds.get(kind)  # an unknown kind is refused before anything is written
    batch.arm_later(_new(brand=brand, kind=kind, key=key, owed=owed, test_clock=test_clock,
                         **fields), superseding=superseding)
    return True


# The timers under keys a batch armed with it, but those superseded: read before every
# handler that could touch them (`Firing.write_later`, issue 32), compiled once.
UNDER_KEYS = compiled.Read(lambda brand, test_clock, keys: Timer.objects.filter(
    brand_id=brand, test_clock_id=test_clock, key__in=keys).exclude(
    state=Timer.State.SUPERSEDED).values_list("id", "key", "owed", "state"))


def write_later(batch: firing.Firing, later: dict[str, tuple[Timer, str | None]]) -> set[str]:
    """Write the timers a firing batch armed with it (`arm_later`, `rearm_later`; the batch
    calls this, `Firing.write_later`), in three statements however many (four when one
    supersedes): each key as `arm` does (not armed again under a key that holds a timer not
    superseded: live, fired or ended), or, given why it supersedes, as `rearm` does (a live
    one owed then kept, one owed at another time superseded, one that rang for that very
    instant left rung). Of two processes arming one key, one row results. The ids written.
    When every one is armed as `arm` does, on PostgreSQL: one statement (`store_unheld`)."""
    if all(why is None for _, why in later.values()) and looked_up_in_one():
        return store_unheld([timer for timer, _ in later.values()])
    found = UNDER_KEYS(brand=batch.brand.pk, test_clock=getattr(batch.test_clock, "pk", None),
                       keys=list(later))
    taken, ended = set(), {}
    for pk, key, owed, state in found:
        timer, why = later[key]
        if why is None or (same_instant(owed, timer.owed) and state in LIVE_OR_RUNG):
            taken.add(key)
        elif state in (Timer.State.ARMED, Timer.State.HELD):
            ended[pk] = why
    for why in set(ended.values()):
        ids = [pk for pk, said in ended.items() if said == why]
        end_many(ids, state=Timer.State.SUPERSEDED, by=why[:200])
        for pk in ids:  # noted on the batch, which is not the current one between firings
            batch.note_ended(pk)
    return store([timer for key, (timer, _) in later.items() if key not in taken])


# What `rearm` keeps under a key wanted at the same instant: its live timer, or one that rang.
LIVE_OR_RUNG = (Timer.State.ARMED, Timer.State.HELD, Timer.State.FIRED)


def _new(
    *, brand: Brand, kind: str, key: str, owed: datetime, test_clock: TestClock | None,
    owner_type: str = "", owner_id: str = "", owner_opened: datetime | None = None,
    payload: dict | None = None, bundle: str = "", held_by: str = "",
) -> Timer:
    """A timer not yet written, armed now (the firing's instant inside one) by the firing."""
    place = kinds.get(kind).place
    batch = firing.current()
    now = batch.instant if batch else wallclock.now(brand=brand, test_clock=test_clock)
    return Timer.fresh(
        brand=brand, test_clock=test_clock, key=key, kind=kind, place=int(place), owed=owed,
        owner_type=owner_type, owner_id=owner_id, owner_opened=owner_opened or now,
        payload=payload or {}, bundle=bundle, armed_at=now,
        armed_by=batch.current.id if batch and batch.current else "",
        state=Timer.State.HELD if held_by else Timer.State.ARMED, ended_by=held_by[:200],
    )


def _insert(
    *, brand: Brand, kind: str, key: str, owed: datetime, test_clock: TestClock | None,
    owner_type: str = "", owner_id: str = "", owner_opened: datetime | None = None,
    payload: dict | None = None, bundle: str = "", held_by: str = "",
) -> Timer:
    timer = _new(brand=brand, kind=kind, key=key, owed=owed, test_clock=test_clock,
                 owner_type=owner_type, owner_id=owner_id, owner_opened=owner_opened,
                 payload=payload, bundle=bundle, held_by=held_by)
    batch = firing.current()
    # Of two processes arming one key, one row results: the other's is read.
    if not store([timer]):
        return clock_timers(brand, test_clock).filter(
            key=key, state__in=[Timer.State.ARMED, Timer.State.HELD]).first() or timer
    if batch is not None:
        if held_by:
            batch.note_held(timer, held_by)
        else:
            batch.note_armed(timer)
    return timer


# The key's live timer and one that already rang for that very instant: what `rearm` reads
# (a deadline's late mark moved, an ask's expiry), compiled once (issue 32).
KEY_LIVE_OR_RUNG = compiled.Read(lambda brand, test_clock, key, owed: Timer.objects.filter(
    brand_id=brand, test_clock_id=test_clock, key=key).filter(
    Q(state__in=[Timer.State.ARMED, Timer.State.HELD]) | Q(state=Timer.State.FIRED, owed=owed)),
    model=Timer)


def rearm(
    *, brand: Brand, kind: str, key: str, owed: datetime, why: str,
    test_clock: TestClock | None = SAME_CLOCK, **fields,
) -> Timer:
    """Arm `key` for `owed`, superseding the live timer under that key if it is owed at
    another time (a moved date). A fired timer under the key stays as it is: the key rings
    again for its new date."""
    batch = firing.current()
    if test_clock is SAME_CLOCK:
        test_clock = batch.test_clock if batch is not None else None
    gathering = gathered.current()
    if gathering is not None and gathering.holds(fields.get("owner_id", "")):
        live = gathering.live.get(key)
        if live is not None:
            if same_instant(live.owed, owed):
                return live
            gathering.end(live, state=Timer.State.SUPERSEDED, by=why)
        return gathering.add(_new(brand=brand, kind=kind, key=key, owed=owed,
                                  test_clock=test_clock, **fields))
    found = KEY_LIVE_OR_RUNG(brand=brand.pk, test_clock=getattr(test_clock, "pk", None),
                             key=key, owed=owed)
    live = next((timer for timer in found if timer.state != Timer.State.FIRED), None)
    fired = next((timer for timer in found if timer.state == Timer.State.FIRED), None)
    if live is not None:
        if same_instant(live.owed, owed):
            return live
        end(live.id, state=Timer.State.SUPERSEDED, by=why)
    if fired is not None:
        return fired  # already rang for this very instant
    return _insert(brand=brand, kind=kind, key=key, owed=owed, test_clock=test_clock, **fields)


# The live timers under keys, and those that rang under each for its own instant: what
# `rearm_keys` reads, compiled once (one shape for each number of keys).
KEYS_LIVE_OR_RUNG = compiled.Read(lambda brand, test_clock, keys, owed: Timer.objects.filter(
    brand_id=brand, test_clock_id=test_clock).filter(
    Q(key__in=keys, state__in=[Timer.State.ARMED, Timer.State.HELD]) | _rang(keys, owed)
    ).values_list("id", "key", "owed", "state"))


def _rang(keys: list, owed: list) -> Q:
    """Each key's timer that rang for that key's own instant."""
    return reduce(or_, (Q(key=key, owed=instant, state=Timer.State.FIRED)
                        for key, instant in zip(keys, owed, strict=True)))


def rearm_keys(
    *, brand: Brand, kind: str, wanted: dict[str, tuple[datetime, dict]], why: str,
    test_clock: TestClock | None = SAME_CLOCK, **fields,
) -> None:
    """`rearm` for several keys at once (an ask's reminder and expiry): each armed for its
    owed (key to (owed, payload)), a live timer under it owed at another time superseded, one
    owed then kept, a key that rang for that very instant not armed again. One statement
    whatever their number on PostgreSQL, as `rearm_many`'s (an update that says what it
    superseded and an insert that looks up each key, together), three elsewhere (issue 32:
    three a key one at a time); none for an owner gathered."""
    if any(owed.tzinfo is None for owed, _ in wanted.values()):
        raise ValueError("owed: give aware instants")
    batch = firing.current()
    if test_clock is SAME_CLOCK:
        test_clock = batch.test_clock if batch is not None else None
    gathering = gathered.current()
    if gathering is not None and gathering.holds(fields.get("owner_id", "")):
        for key, (owed, payload) in wanted.items():
            rearm(brand=brand, kind=kind, key=key, owed=owed, why=why, test_clock=test_clock,
                  payload=payload, **fields)
        return
    if looked_up_in_one():
        made = [_new(brand=brand, kind=kind, key=key, owed=owed, test_clock=test_clock,
                     payload=payload, **fields) for key, (owed, payload) in wanted.items()]
        _rearmed_in_one(batch, brand, test_clock, None, wanted, why, made)
        return
    keys = list(wanted)
    found = KEYS_LIVE_OR_RUNG(brand=brand.pk, test_clock=getattr(test_clock, "pk", None),
                              keys=keys, owed=[wanted[key][0] for key in keys])
    live = [(pk, key, owed) for pk, key, owed, state in found if state != Timer.State.FIRED]
    kept = {key for _, key, owed in live if same_instant(owed, wanted[key][0])}
    rang = {key for _, key, _, state in found if state == Timer.State.FIRED}
    end_many([pk for pk, key, _ in live if key not in kept], state=Timer.State.SUPERSEDED,
             by=why)
    made = [_new(brand=brand, kind=kind, key=key, owed=owed, test_clock=test_clock,
                 payload=payload, **fields)
            for key, (owed, payload) in wanted.items() if key not in kept and key not in rang]
    _note_written(batch, made, store(made))


def _note_written(batch: firing.Firing | None, made: list[Timer], written: set[str]) -> None:
    """Each of `made` that was written, noted armed on the batch."""
    if batch is not None:
        for timer in made:
            if timer.pk in written:
                batch.note_armed(timer)


def _rearmed_in_one(batch: firing.Firing | None, brand: Brand, test_clock: TestClock | None,
                    owner_id: str | None, wanted: dict[str, tuple[datetime, dict]], why: str,
                    made: list[Timer]) -> None:
    """`stored.supersede_and_store` for `rearm_many` (an owner) and `rearm_keys` (None), with
    what the batch held back that may ride in it: what it ended and wrote, noted on the batch."""
    held = batch.due_to_ride(owner_id, wanted) if batch is not None else []
    ended, written = supersede_and_store(brand.pk, getattr(test_clock, "pk", None), owner_id,
                                         {key: owed for key, (owed, _) in wanted.items()}, why,
                                         made, held)
    _ended(ended)
    _note_written(batch, made, written)
    if held:
        batch.note_due_written(held, written)


def rearm_many(
    *, brand: Brand, kind: str, wanted: dict[str, tuple[datetime, dict]], why: str,
    owner_id: str, test_clock: TestClock | None = SAME_CLOCK, fresh: bool = False, **fields,
) -> None:
    """`rearm` for a set of keys of one owner, in a constant number of statements whatever
    their number (issue 32): `wanted` maps each key to (owed, payload), in the order they are
    armed. The owner's other live timers, under keys it no longer wants, are superseded; a
    live timer owed at another time is superseded and armed anew; one already owed then is
    left; a key that already rang for that very instant is not armed again. `fresh`: the
    owner was made in this transaction (a date of a job being ordered), so no timer can be
    under its keys yet and none is looked for: one statement. Else one on PostgreSQL (an
    update that answers what it superseded and an insert that looks up each key, together:
    `stored.supersede_and_store`), three elsewhere (a read first)."""
    batch = firing.current()
    if test_clock is SAME_CLOCK:
        test_clock = batch.test_clock if batch is not None else None
    if any(owed.tzinfo is None for owed, _ in wanted.values()):
        raise ValueError("owed: give aware instants")
    place = kinds.get(kind).place
    kept, rang = set(), set()
    gathering = gathered.current()
    if gathering is not None and (fresh or gathering.holds(owner_id)):
        fresh = True  # its timers are gathered: the ones it armed before, here
        gathering.fresh.add(owner_id)
        for timer in [t for t in gathering.live.values() if t.owner_id == owner_id]:
            if timer.key in wanted and same_instant(wanted[timer.key][0], timer.owed):
                kept.add(timer.key)
            else:
                gathering.end(timer, state=Timer.State.SUPERSEDED, by=why)
    in_one = not fresh and looked_up_in_one()
    if not (in_one or fresh):
        kept, rang = _supersede_unwanted(brand, test_clock, owner_id, wanted, why)
    now = batch.instant if batch else wallclock.now(brand=brand, test_clock=test_clock)
    fields["owner_opened"] = fields.get("owner_opened") or now
    made = [Timer.fresh(brand=brand, test_clock=test_clock, key=key, kind=kind,
                        place=int(place), owed=owed, owner_id=owner_id, payload=payload,
                        armed_at=now, armed_by=batch.current.id if batch and batch.current
                        else "", **fields)
            for key, (owed, payload) in wanted.items()
            if key not in kept and (key, owed.astimezone(UTC)) not in rang]
    if gathering is not None and fresh:
        for timer in made:
            gathering.add(timer)
        return
    if in_one:  # what it no longer wants superseded, the rest looked up as it is written
        _rearmed_in_one(batch, brand, test_clock, owner_id, wanted, why, made)
        return
    if not made:
        return
    # Of two processes arming one key, one row results.
    _note_written(batch, made, store(made))


# An owner's live timers, and the live or rung timers under the keys it wants: what it arms
# again is read against them (`rearm_many`, every date moved), compiled once and prepared:
# found by the owner's index and the key's, whatever the brand (issue 32, `bench/plans.py`).
OWNERS_TIMERS = compiled.Read(lambda brand, test_clock, owner, keys: Timer.objects.filter(
    brand_id=brand, test_clock_id=test_clock).filter(
    Q(state__in=[Timer.State.ARMED, Timer.State.HELD]) & (Q(owner_id=owner) | Q(key__in=keys))
    | Q(state=Timer.State.FIRED, key__in=keys)).values_list("id", "key", "owed", "state"),
    prepared=True)


def _supersede_unwanted(brand: Brand, test_clock: TestClock | None, owner_id: str,
                        wanted: dict[str, tuple[datetime, dict]], why: str
                        ) -> tuple[set[str], set[tuple[str, datetime]]]:
    """Supersede the owner's live timers it no longer wants as they are (`rearm_many`):
    the keys whose live timer is kept, and the (key, owed) that already rang. One read (the
    owner's live timers, and those of its keys that rang) and one update."""
    found = OWNERS_TIMERS(brand=brand.pk, test_clock=getattr(test_clock, "pk", None),
                          owner=owner_id, keys=list(wanted))
    live = [(pk, key, owed) for pk, key, owed, state in found if state != Timer.State.FIRED]
    kept = {key for _, key, owed in live if key in wanted and same_instant(wanted[key][0], owed)}
    end_many([pk for pk, key, _ in live if key not in kept], state=Timer.State.SUPERSEDED,
             by=why)
    # In UTC: an instant of the hour that happens twice never equals one of another zone.
    return kept, {(key, owed.astimezone(UTC)) for _, key, owed, state in found
                  if state == Timer.State.FIRED and key not in kept}


def _ended(timer_ids: list[str]) -> None:
    """Timers just ended by id in one statement, noted on the firing batch if inside one."""
    batch = firing.current()
    if batch is not None:
        for timer_id in timer_ids:
            batch.note_ended(timer_id)


def end_many(timer_ids: list[str], *, state: Timer.State, by: str) -> int:
    """`end` for timers just read as open, in one statement: how many still were. Inside a
    firing each is noted ended (one another process ended meanwhile is ended all the same)."""
    if not timer_ids:
        return 0
    gathering, ended = gathered.current(), 0
    if gathering is not None:  # gathered timers end where they are, before they are written
        pending = {timer.pk for timer in gathering.timers}
        ended = sum(end(timer_id, state=state, by=by) for timer_id in timer_ids
                    if timer_id in pending)
        timer_ids = [timer_id for timer_id in timer_ids if timer_id not in pending]
        if not timer_ids:
            return ended
    updated = end_open(timer_ids, state, by)
    _ended(timer_ids)
    return updated + ended


def end(timer_id: str, *, state: Timer.State, by: str) -> bool:
    """End an armed (or held) timer as superseded or cancelled. True if it was still open."""
    gathering, pending = _gathered(timer_id)
    if pending is not None:
        if pending.key not in gathering.live:
            return False
        gathering.end(pending, state=state, by=by)
        return True
    updated = end_open([timer_id], state, by)  # one statement made once (`stored`)
    batch = firing.current()
    if updated and batch is not None:
        batch.note_ended(timer_id)
    return updated == 1


def hold(timer_id: str, *, by: str) -> bool:
    """Hold an armed timer: the tick passes it by until it is released. Inside a firing, the
    trace lists it held under the firing that held it."""
    gathering, pending = _gathered(timer_id)
    if pending is not None:
        if pending.state != Timer.State.ARMED:
            return False
        gathering.end(pending, state=Timer.State.HELD, by=by)
        gathering.held[pending.pk] = by
        return True
    held = Timer.objects.filter(id=timer_id, state=Timer.State.ARMED).update(
        state=Timer.State.HELD, ended_by=by[:200]) == 1
    batch = firing.current()
    if held and batch is not None:
        batch.note_ended(timer_id)
        batch.note_held(Timer.objects.get(pk=timer_id), by)
    return held


def release(timer_id: str) -> bool:
    # A parked timer released (a frozen plan's mint, unfrozen) is tried again as if retried.
    return Timer.objects.filter(id=timer_id, state=Timer.State.HELD).update(
        state=Timer.State.ARMED, ended_by="", parked=None, next_attempt=None
    ) == 1


@contextmanager
def gathering() -> Iterator[gathered.Gathered]:
    """Gather what an operation that opens new work arms and records, and write it when the
    operation ends: its timers in one INSERT (inside a firing of their brand clock, handed to
    the batch, which writes those of all its orders at once: `Firing.arm_fresh`), its records
    in one more (issue 32). Timers are gathered for the owners it made (`Gathered.fresh`: a job
    just ordered, its dates), whose keys cannot be taken yet; `live`, `end` and `hold` see
    them. Use inside the operation's transaction; what an error stops is not written. Nested,
    the outermost writes. Inside a batch that takes them, the rows it makes go to the batch
    too (`made`)."""
    outer = gathered.current()
    if outer is not None:
        yield outer
        return
    collected = gathered.Gathered(rows=[] if made.taken() else None)
    if collected.rows is not None:  # a statement reading them back, watched for
        firing.current().watch_rows()
    token = gathered.enter(collected)
    try:
        yield collected
    finally:
        gathered.leave(token)
    _write_gathered(collected)


def _write_gathered(collected: gathered.Gathered) -> None:
    if collected.rows:  # written with the batch (`made`)
        firing.current().hold_rows(collected.rows)
    if collected.timers:
        # Each key names an owner made in this transaction: no other process can hold it.
        # Inside a firing of their brand clock, they are written with the batch.
        batch = firing.current()
        if batch is not None and _of_clock(batch, collected.timers):
            batch.arm_fresh(collected.timers)
        else:
            write_new(collected.timers)
        if batch is not None:  # an order inside a firing: its trace lists what it armed
            for timer in collected.timers:
                if timer.pk in collected.held:
                    batch.note_held(timer, collected.held[timer.pk])
                else:
                    batch.note_armed(timer)
                if timer.state not in (Timer.State.ARMED, Timer.State.HELD):
                    batch.note_ended(timer.pk)
    records.write_rows(collected.records)


def _of_clock(batch: firing.Firing, timers: list[Timer]) -> bool:
    """Whether every timer is of the batch's brand clock (its brand, its test clock)."""
    test_clock = getattr(batch.test_clock, "pk", None)
    return all(timer.brand_id == batch.brand.pk and timer.test_clock_id == test_clock
               for timer in timers)


def _gathered(timer_id: str) -> tuple[gathered.Gathered | None, Timer | None]:
    gathering = gathered.current()
    if gathering is None:
        return None, None
    return gathering, next((t for t in gathering.timers if t.pk == timer_id), None)


def live(brand: Brand, test_clock: TestClock | None, key: str, *, owner_id: str = ""
         ) -> Timer | None:
    """The armed or held timer under `key` on a brand clock, or None (gathered ones too)."""
    gathering = gathered.current()
    if gathering is not None and gathering.holds(owner_id):
        return gathering.live.get(key)
    return clock_timers(brand, test_clock).filter(
        key=key, state__in=[Timer.State.ARMED, Timer.State.HELD]).first()


def end_keys(brand: Brand, test_clock: TestClock | None, keys: list[str], *,
             state: Timer.State, by: str, owner_id: str = "") -> None:
    """End the armed or held timers under `keys` (gathered ones too)."""
    gathering = gathered.current()
    if gathering is not None and gathering.holds(owner_id):
        for timer in [gathering.live[key] for key in keys if key in gathering.live]:
            gathering.end(timer, state=state, by=by)
        return
    if not keys:
        return
    if looked_up_in_one():  # read and ended in one statement
        _ended(end_under_keys(brand.pk, getattr(test_clock, "pk", None), keys, state, by))
        return
    end_many(OPEN_UNDER_KEYS(brand=brand.pk, test_clock=getattr(test_clock, "pk", None),
                             keys=keys), state=state, by=by)


# The armed or held timers under keys, by id: what `end_keys` ends (a job's end cancels its
# deadlines', asks' and signals' timers by key), compiled once.
OPEN_UNDER_KEYS = compiled.Read(lambda brand, test_clock, keys: Timer.objects.filter(
    brand_id=brand, test_clock_id=test_clock, key__in=keys,
    state__in=[Timer.State.ARMED, Timer.State.HELD]).values_list("id", flat=True))


def explain(timer: Timer) -> str:
    """One sentence: why this timer has or has not fired."""
    on = f"test clock {timer.test_clock_id}" if timer.test_clock_id else "the real clock"
    now = wallclock.now(brand=timer.brand, test_clock=timer.test_clock)
    owed = _at(timer.owed)
    if timer.state == Timer.State.FIRED:
        return (f"{timer.id} fired at {_at(timer.fired)}, owed {owed}, late by "
                f"{span_text(timer.late_by or timedelta(0))}.")
    if timer.state == Timer.State.ARMED:
        if timer.owed > now:
            ahead = span_text(timer.owed - now)
            return (f"{timer.id} is armed and owed {owed}, {ahead} from now on {on}; the first "
                    "tick at or after then fires it.")
        failed = ""
        if timer.attempts:
            failed = (f" Its handler failed {timer.attempts} time(s), last with: "
                      f"{timer.last_error.strip().splitlines()[-1] if timer.last_error else '?'}.")
        if timer.next_attempt is not None and timer.next_attempt > now:
            return (f"{timer.id} is armed and has been owed since {owed} on {on}; it failed, so "
                    f"the tick tries it again at {_at(timer.next_attempt)}.{failed}")
        return (f"{timer.id} is armed and has been owed since {owed} on {on}; the next tick of "
                f"that clock fires it.{failed}")
    verbs = {
        Timer.State.SUPERSEDED: "was superseded by", Timer.State.HELD: "is held by",
        Timer.State.CANCELLED: "was cancelled by", Timer.State.DROPPED: "was dropped:",
    }
    verb = verbs[Timer.State(timer.state)]
    return f"{timer.id} {verb} {timer.ended_by or 'someone'} (owed {owed})."


def _at(instant: datetime | None) -> str:
    if instant is None:
        return "—"
    return instant.strftime("%Y-%m-%d %H:%M:%SZ")
