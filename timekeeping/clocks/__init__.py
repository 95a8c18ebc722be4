"""Clocks: the dates the world sets, their occurrences, rungs, moves and lapses (SPEC S12-S16).

Opening a job opens each clock its Service declares: one occurrence per item with `each`
(one per period with `every`), whose civil date comes from the due rule, rolled on the
subject's calendar (a `clock.rolled` record with the reasons) and closing at `late_from` in
the subject's zone. Each rung is a timer in place 6 that rings at `rings_at` on its day, N
calendar days before the date kept, even when that day is closed; the date itself is a timer
at `late_from`. A move (a step the clock lists in `moves`, or the calendar's postponement)
changes the date kept and re-arms the rungs under the same keys: the old timers are
superseded, and a rung whose day has already passed fires in place.

The package's modules, each one concern (none imports the package itself; each imports the
siblings it stands on, in this order, so that no import goes back up):
- `basis`: the refusals (OrderRefused, PeriodTaken, an erased subject's `refuse_erased` and
  `lock_unerased`); the calendar and clock a subject's dates
  are read on (`calendar_for`, `now_for`);
- `telling`: a date's records, and the emails to whoever acts on it (the customer, the member
  who answers for it, or the brand's owner);
- `rungs`: arming a date's rungs and its date as timers, and ending them;
- `opening`: ordering a job, opening its clocks and occurrences from their due rules (or
  measured from another date kept), the postponements an opening date meets, and the
  `on_open`/`on_end` hooks;
- `following`: the dates measured from another clock (`{"clock": …}`), moved with it;
- `steps`: what steps and people do to dates: satisfy, mark done, move, lapse, end a job,
  choose, acknowledge, assign;
- `reopening`: a late notice reopening a date that lapsed within its range (`reopen`), and
  the lapses so withdrawn (`withdrawn_lapses`);
- `postponing`: an authority's notice moving dates (`add_postponement`, `postpone`), and a
  calendar edited re-rolling them (`calendar_changed`);
- `gating`: what the gate asks of the clocks (checks and effects), registered by `register`;
- `stewards`: who keeps a subject's `lives_on: subject` dates between its jobs (S16): the
  subject's steward or their owner, passed on when a job opens or ends (hooks `register` adds).
Beside them: `gate` (the gate every step goes through), `dues` (due rules), `exposure`,
`changed`, `emails`, `dates`, `costs`, `subject_calendar`, `history` and `undo`.

This module is the facade the rest of the product calls (`clocks.order(...)`): it re-exports
the public names of those modules, and registers the gate's checks and effects.
"""

from __future__ import annotations

from timekeeping.clocks import gate, gating
from timekeeping.clocks.basis import (
    OrderRefused,
    PeriodTaken,
    calendar_for,
    lock_unerased,
    now_for,
    refuse_erased,
)
from timekeeping.clocks.gating import (
    check_hard_date,
    check_items_known,
    effect_moved,
    effect_satisfied,
)
from timekeeping.clocks.opening import (
    MEASURED,
    check_live,
    items_of,
    measured_from,
    measured_from_it,
    offered,
    on_end,
    on_open,
    order,
    prepare_orders,
)
from timekeeping.clocks.postponing import Rerolled, add_postponement, calendar_changed, postpone
from timekeeping.clocks.reopening import REOPENED, withdrawn_lapses
from timekeeping.clocks.rungs import KIND, arm, end_timers, spec_of
from timekeeping.clocks.steps import (
    acknowledge,
    assign,
    choose,
    date_passed,
    end_job,
    lapse,
    mark_done,
    move,
    open_occurrences,
    satisfy,
)
from timekeeping.clocks.telling import ACK_ASKED, act_link, notice, owner_email

__all__ = [
    "ACK_ASKED", "KIND", "MEASURED", "REOPENED", "OrderRefused", "PeriodTaken", "Rerolled",
    "acknowledge",
    "act_link", "add_postponement", "arm", "assign", "calendar_changed", "calendar_for",
    "check_hard_date", "check_items_known", "check_live", "choose", "date_passed", "effect_moved",
    "effect_satisfied", "end_job", "end_timers", "items_of", "lapse", "lock_unerased", "mark_done",
    "measured_from", "measured_from_it", "move", "notice", "now_for", "offered", "on_end",
    "on_open", "open_occurrences", "order", "owner_email", "postpone", "prepare_orders",
    "refuse_erased",
    "satisfy", "spec_of", "withdrawn_lapses",
]


def register() -> None:
    """What the gate asks of the clocks, and the stewards' hooks on a job's opening and end
    (called by `apps.ready`, before the jobs')."""
    from timekeeping.clocks import kept, stewards
    from timekeeping.timers import firing

    on_open(stewards.when_opened)
    on_end(stewards.when_ended)
    firing.telling("clock.notice", "clock.escalated")  # a date's notices change nothing
    for what in ("occurrence", kept.MOVABLE):  # a job's dates, kept through a move of them
        firing.standing(what, kept.dates_stand)
    gate.check(30)(gating.check_items_known)
    gate.check(40)(gating.check_hard_date)
    gate.effect(10)(gating.effect_satisfied)
    gate.effect(20)(gating.effect_moved)
