"""Fault isolation in the tick: one brand's bad data never stops another brand's work.

Each brand clock's timers, each connection's minute of timed moves and each phase of the
tick (schedules, the outbox sweep, housekeeping) runs inside `Faults.guard`. A failure there:

1. is undone back to where the guarded work began (the work's own transactions, or a
   savepoint when the tick itself runs inside a transaction, as a dry run does);
2. opens a `Fault` for that place, or counts on the one already open: only the first
   failure writes a `tick.failed` record on the brand and tells its owner, once, through the
   outbox, so a place that fails every minute does not mail every minute;
3. hands the failure, after the undoing, to the work's own backoff when it has one (a
   connection's minute: `moves.parking.failed`, issue 31), so the next try waits;
4. lets the tick go on with everything else.

The next success at the same place resolves its fault. Only a database that is gone stops
the tick: then the error is raised again, and `manage.py tick` exits non-zero.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import datetime

from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import F

from timekeeping.basics import shown
from timekeeping.models import Brand, Fault
from timekeeping.timers import outbox, records

log = logging.getLogger("timekeeping.tick")


class Faults:
    """The faults of one tick: the open ones are read once, then opened, counted and resolved
    as the guarded work fails or succeeds."""

    def __init__(self, now: datetime):
        self.now = now
        self.raised: list[Fault] = []
        self._open: set[tuple[str, str]] | None = None

    @contextmanager
    def guard(self, phase: str, *, where: str, brand: Brand | None = None,
              then: Callable[[Exception], object] | None = None) -> Iterator[None]:
        """Run the guarded work; a failure is undone, recorded, and handed to `then` (the
        work's own backoff, `moves.parking.failed`), written after the undoing so it stays."""
        try:
            with transaction.atomic() if connection.in_atomic_block else nullcontext():
                yield
        except Exception as error:  # noqa: BLE001 - every failure here is recorded, not raised
            if database_gone():
                raise
            self.raised.append(self._failed(phase, where, brand, error))
            if then is not None:
                self._then(then, error, where)
        else:
            self.succeeded(phase, where)

    @staticmethod
    def _then(then: Callable[[Exception], object], error: Exception, where: str) -> None:
        try:
            with transaction.atomic() if connection.in_atomic_block else nullcontext():
                then(error)
        except Exception:  # noqa: BLE001 - the failure is recorded above; the tick goes on
            log.exception("could not write the failure's backoff at %s", where)

    def _open_places(self) -> set[tuple[str, str]]:
        if self._open is None:
            self._open = set(Fault.objects.filter(resolved__isnull=True)
                             .values_list("phase", "where"))
        return self._open

    def succeeded(self, phase: str, where: str) -> None:
        """Work at this place went well: its open fault, if any, is resolved."""
        if (phase, where) in self._open_places():
            Fault.objects.filter(phase=phase, where=where, resolved__isnull=True).update(
                resolved=self.now)
            self._open_places().discard((phase, where))

    def _failed(self, phase: str, where: str, brand: Brand | None, error: Exception) -> Fault:
        message = records.error_text(error)
        log.error("tick failed at phase=%s where=%s: %s", phase, where, message, exc_info=error)
        self._open_places().add((phase, where))
        still_open = Fault.objects.filter(phase=phase, where=where, resolved__isnull=True)
        if still_open.update(error=message, last_seen=self.now, count=F("count") + 1):
            return still_open.get()
        try:
            with transaction.atomic():
                fault = Fault.objects.create(brand=brand, phase=phase, where=where,
                                             error=message, first_seen=self.now,
                                             last_seen=self.now)
                _tell(fault)
        except IntegrityError:
            # Another tick opened the fault between our UPDATE and INSERT: count on it.
            still_open.update(count=F("count") + 1, last_seen=self.now)
            return still_open.get()
        return fault


def _tell(fault: Fault) -> None:
    """The first failure at a place: on the brand's record, and its owner told once."""
    brand = fault.brand
    if brand is None:
        return  # a phase of the whole tick: the operator reads the log and the admin
    records.write("tick.failed", brand=brand, instant=fault.first_seen,
                  data={"phase": fault.phase, "where": fault.where, "error": fault.error,
                        "fault": fault.id})
    owner = brand.owner
    if owner is not None and owner.email:
        outbox.enqueue_email(
            brand=brand, to=[owner.email], key=f"fault:{fault.id}",
            subject=f"Keeping Time: {fault.get_phase_display()} of {brand.name} failed",
            body=(f"On {shown.moment(fault.first_seen, brand.calendar_rules().zone_name)} "
                  f"Keeping Time could not do the {fault.get_phase_display()} of "
                  f"{brand.name}.\n\nEverything else went on. {_again(fault, brand)} You "
                  "hear from us once, until it works again. What needs attention is on "
                  f"your console:\n\n{settings.SITE_URL}/console/{brand.pk}/\n"),
        )


def _again(fault: Fault, brand: Brand) -> str:
    """When the failed work is tried again: each minute, or, for a connection's timed moves,
    after a wait that grows until it is parked (`moves.parking`, issue 31)."""
    if fault.phase == Fault.Phase.MOVES:
        return ("We try again in a minute, then wait longer after each failure; after "
                f"{brand.park_after} failures in a row we stop trying until you say so.")
    return "We try again every minute."


def database_gone() -> bool:
    """Whether the default database can no longer be reached: then the tick stops."""
    if connection.in_atomic_block:
        return False  # the guard's savepoint was rolled back; the caller's transaction decides
    try:
        connection.close_if_unusable_or_obsolete()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        return True
    return False
