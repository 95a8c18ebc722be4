"""Settling what needs attention (S25, issue 27): each item `attention` lists offers the action
that resolves it, and leaves the list once that is done. The console's control and the API
call `act`.

    ACTIONS[kind]                    the actions an item of that kind offers, in order
    act(brand, kind, row, do, …)     do one; returns what happened, in the owner's words;
                                     raises Refused (the field and the rule) and changes
                                     nothing when it cannot
    dismissed(brand, kind, since=…)  the rows of a kind the brand's people dismissed
    undo_offer(brand, kind, row, by=…, now=…)
                                     the dismissal `by` just made, which they can undo for
                                     UNDO_WINDOW (`act(…, do="undismiss")`), or None

Actions: `dismiss` (with a reason, kept: the item leaves the list, the row stays; a delivery
dismissed is deleted with its dismissal by the tick's housekeeping `DISMISSED_DELIVERY_KEPT`
after, J9; one already sent is refused), `resolve` a
fault (it is closed; it opens again if the work fails again), `retry` a delivery that failed
(sent again at the next tick), `release` a row held back from a timed move (tried again at the
next tick), `run` a schedule that failed (run now, as the schedules page does), `enable` a
webhook endpoint its sender turned off (on again, and what it missed sent: its owner's alone,
`OWNER_ONLY`), `retry_now` a parked timer (armed again: the next tick fires it) or `give_up`
on it (it ends, cancelled, its work not done; issue 31, `timers.parking`), and the same two for
a connection's parked timed moves (tried at the next tick, or paused; `moves.parking`) and for a
parked schedule (run at the next tick, or paused; `schedules.parking`). Items about a
job open its subject's page instead. Each action is written on the brand's record. A dismissal
is undone (`undismiss`: the item is back on the list) within UNDO_WINDOW of it, as a date's
action is (`clocks.undo`).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import IntegrityError, transaction

from timekeeping.clocks.undo import UNDO_WINDOW, UNDO_WINDOW_WORDS
from timekeeping.models import (
    Brand,
    Connection,
    Delivery,
    Dismissal,
    Fault,
    Schedule,
    ScheduleRun,
    SetAside,
    TickRun,
    Timer,
    WebhookEndpoint,
)
from timekeeping.moves import parking as moves_parking
from timekeeping.schedules import operate as schedules
from timekeeping.schedules import parking as schedules_parking
from timekeeping.timers import outbox, parking, records
from timekeeping.webhooks import endpoints as webhook_endpoints

REASON_LONGEST = 300
DISMISSED_DELIVERY_KEPT = timedelta(days=30)
DISMISS = ("dismiss", "Dismiss")
ACTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "fault": (("resolve", "Mark resolved"),),
    "undelivered": (("retry", "Send again"), DISMISS),
    "failed run": (("run", "Run it now"), DISMISS),
    "skipped run": (DISMISS,),
    "late": (DISMISS,),
    "runaway": (DISMISS,),
    "set aside": (("release", "Try it again now"),),
    "webhook off": (("enable", "Turn on and send what it missed"),),
    "parked": (("retry_now", "Retry now"), ("give_up", "Give up")),
    "parked moves": (("retry_now", "Retry now"), ("give_up", "Give up")),
    "parked schedule": (("retry_now", "Retry now"), ("give_up", "Give up")),
}
# Kinds whose actions only the brand's owner takes (a webhook endpoint is the owner's).
OWNER_ONLY = frozenset({"webhook off"})
# The rows an item of each kind stands for, scoped to the brand.
ROWS = {
    "fault": lambda brand: Fault.objects.filter(brand=brand),
    "undelivered": lambda brand: Delivery.objects.filter(brand=brand),
    # Schedule runs may live in another database (J6): by the schedule's brand column.
    "failed run": lambda brand: ScheduleRun.objects.filter(schedule__brand_id=brand.pk),
    "skipped run": lambda brand: ScheduleRun.objects.filter(schedule__brand_id=brand.pk),
    "late": lambda brand: Timer.objects.filter(brand=brand),
    "runaway": lambda brand: TickRun.objects.filter(brand=brand),
    "set aside": lambda brand: SetAside.objects.filter(brand=brand, test_clock__isnull=True),
    "webhook off": lambda brand: WebhookEndpoint.objects.filter(brand=brand),
    "parked": lambda brand: Timer.objects.filter(brand=brand, state=Timer.State.HELD,
                                                 parked__isnull=False),
    "parked moves": lambda brand: Connection.objects.filter(brand=brand, parked__isnull=False),
    # Schedules may live in another database (J6): by their brand column.
    "parked schedule": lambda brand: Schedule.objects.filter(brand_id=brand.pk, active=True,
                                                             parked__isnull=False),
}


class Refused(Exception):
    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field, self.message = field, message


def act(brand: Brand, kind: str, row: str, do: str, *, reason: str = "", by: str,
        now: datetime) -> str:
    if do == "undismiss" and DISMISS in ACTIONS.get(kind, ()):
        return _undismiss(brand, kind, row, by=by, now=now)
    if do not in {action for action, _ in ACTIONS.get(kind, ())}:
        raise Refused("do", "this item offers no such action")
    found = ROWS[kind](brand).filter(pk=row).first() if len(row) <= 64 else None
    if found is None:
        raise Refused("row", "no such item at this brand")
    if do == "dismiss" and kind == "undelivered" and found.state == Delivery.State.SUCCEEDED:
        raise Refused("row", "it was sent, so there is nothing to dismiss")
    if do == "dismiss":
        return _dismiss(brand, kind, row, reason=reason, by=by, now=now)
    if do == "run":
        return _run(brand, found, by=by, now=now)
    if kind in PARKED_ACTIONS:
        return PARKED_ACTIONS[kind][do](found, by=by, now=now)
    said = {"resolve": _resolve, "retry": _retry, "release": _release,
            "enable": _enable}[do](brand, found, now)
    records.write(f"attention.{do}", brand=brand, instant=now,
                  data={"kind": kind, "row": row, "by": by})
    return said


def _dismiss(brand: Brand, kind: str, row: str, *, reason: str, by: str, now: datetime) -> str:
    reason = " ".join(reason.split())
    if not reason:
        raise Refused("reason", "say why it can be dismissed")
    if len(reason) > REASON_LONGEST:
        raise Refused("reason", f"at most {REASON_LONGEST} characters")
    try:
        with transaction.atomic():
            Dismissal.objects.create(brand=brand, kind=kind, row=row, reason=reason, by=by,
                                     at=now)
            records.write("attention.dismissed", brand=brand, instant=now,
                          data={"kind": kind, "row": row, "by": by, "reason": reason})
    except IntegrityError:
        return "It was dismissed already."
    return "Dismissed: it leaves the list, and the reason is kept on the record."


def undo_offer(brand: Brand, kind: str, row: str, *, by: str, now: datetime
               ) -> Dismissal | None:
    """The dismissal `by` made of the row, while they can still undo it."""
    return Dismissal.objects.filter(brand=brand, kind=kind, row=row[:64], by=by,
                                    at__gt=now - UNDO_WINDOW).first()


def _undismiss(brand: Brand, kind: str, row: str, *, by: str, now: datetime) -> str:
    """A dismissal undone: the item is back on the list; the dismissal's line stays on the
    record, and the undoing is its own line."""
    with transaction.atomic():
        # Locked: a second Undo waits, then finds it gone.
        found = Dismissal.objects.select_for_update().filter(brand=brand, kind=kind,
                                                             row=row[:64]).first()
        if found is None:
            raise Refused("row", "it is not dismissed")
        if found.at <= now - UNDO_WINDOW:
            raise Refused("row", f"it was dismissed more than {UNDO_WINDOW_WORDS} ago")
        found.delete()
        records.write("attention.undismissed", brand=brand, instant=now,
                      data={"kind": kind, "row": found.row, "by": by})
    return "Undone: it is back on the list."


def _run(brand: Brand, run: ScheduleRun, *, by: str, now: datetime) -> str:
    """A failed schedule run by hand now; the failure leaves the list, dismissed as run again."""
    schedule = Schedule.objects.filter(brand_id=brand.pk, active=True,
                                       pk=run.schedule_id).first()
    if schedule is None:
        raise Refused("row", "its schedule is no longer in your manifest")
    if not schedules.run_by_hand(schedule):
        raise Refused("row", "its schedule is parked: retry it now or give it up")
    _dismiss(brand, "failed run", run.pk, reason="run again by hand", by=by, now=now)
    return f"{schedule.name} runs at the next tick, beside its grid."


def _retry_now(timer: Timer, *, by: str, now: datetime) -> str:
    """A parked timer tried again: the next tick fires it (`timers.parking`, which records
    it)."""
    try:
        parking.retry_now(timer.pk, by=by, now=now)
    except parking.NotParked:
        return "It is not parked any more: it was retried or given up already."
    return "It is tried again at the next tick. If it fails again, it comes back here."


def _give_up(timer: Timer, *, by: str, now: datetime) -> str:
    """A parked timer ended for good: its work is not done, and that is on the record."""
    try:
        parking.give_up(timer.pk, by=by, now=now)
    except parking.NotParked:
        return "It is not parked any more: it was retried or given up already."
    return "Given up: it will not run, and that is on the record."


def _retry_moves(link: Connection, *, by: str, now: datetime) -> str:
    """Parked timed moves tried again: the next tick runs the connection's minute
    (`moves.parking`, which records it)."""
    try:
        moves_parking.retry_now(link.pk, by=by, now=now)
    except moves_parking.NotParked:
        return "They are not parked any more: they were retried or given up already."
    return ("They are tried again at the next tick. If they fail again, they come back "
            "here.")


def _give_up_moves(link: Connection, *, by: str, now: datetime) -> str:
    """Parked timed moves given up: the connection is paused until someone resumes it."""
    try:
        moves_parking.give_up(link.pk, by=by, now=now)
    except moves_parking.NotParked:
        return "They are not parked any more: they were retried or given up already."
    return ("Given up: the timed moves are paused, and no row moves on its own until you "
            "resume them on the Timed moves page.")


def _retry_schedule(row: Schedule, *, by: str, now: datetime) -> str:
    """A parked schedule run at the next tick (`schedules.parking`, which records it)."""
    try:
        schedules_parking.retry_now(row.pk, by=by, now=now)
    except schedules_parking.NotParked:
        return "It is not parked any more: it was retried or given up already."
    return f"{row.name} runs at the next tick. If it fails again, it comes back here."


def _give_up_schedule(row: Schedule, *, by: str, now: datetime) -> str:
    """A parked schedule given up: paused until someone resumes it."""
    try:
        schedules_parking.give_up(row.pk, by=by, now=now)
    except schedules_parking.NotParked:
        return "It is not parked any more: it was retried or given up already."
    return (f"Given up: {row.name} is paused, and it does not run until you resume it on the "
            "Schedules page.")


PARKED_ACTIONS = {"parked": {"retry_now": _retry_now, "give_up": _give_up},
                  "parked moves": {"retry_now": _retry_moves, "give_up": _give_up_moves},
                  "parked schedule": {"retry_now": _retry_schedule,
                                      "give_up": _give_up_schedule}}


def _resolve(brand: Brand, fault: Fault, now: datetime) -> str:
    Fault.objects.filter(pk=fault.pk, resolved__isnull=True).update(resolved=now)
    return "Marked resolved. If the same work fails again, it comes back here."


def _retry(brand: Brand, delivery: Delivery, now: datetime) -> str:
    if not outbox.retry([delivery.pk], now=now):
        return "It is not waiting to be sent again: it was sent, or is being sent now."
    return "It goes out again at the next tick."


def _release(brand: Brand, row: SetAside, now: datetime) -> str:
    SetAside.objects.filter(pk=row.pk, until__gt=now).update(until=now)
    return "It is tried again at the next tick."


def _enable(brand: Brand, endpoint: WebhookEndpoint, now: datetime) -> str:
    """On again, and what it missed sent (`webhooks.endpoints.enable`, as its page does)."""
    if endpoint.enabled:
        return "It is on already."
    return turned_on(endpoint, webhook_endpoints.enable(endpoint))


def turned_on(endpoint: WebhookEndpoint, sent: int) -> str:
    """An endpoint turned on again, and how many events it missed were sent, in words."""
    missed = ("It had missed nothing." if not sent else "1 event it missed is on the way."
              if sent == 1 else f"{sent} events it missed are on the way.")
    return f"Turned on: new events go to {endpoint} again. {missed}"


def dismissed(brand: Brand, kind: str, *, since: datetime | None = None):
    """The ids of the rows of `kind` dismissed at the brand (since `since`, when given): a
    subquery for rows in the same database, or a list for one that may not be."""
    found = Dismissal.objects.filter(brand=brand, kind=kind)
    return found.filter(at__gte=since).values("row") if since else found.values("row")
