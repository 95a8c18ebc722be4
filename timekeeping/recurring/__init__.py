"""Subscriptions (SPEC R*, docs/recurring.md): plans, cycles, charges, dunning, outcomes and
guarantees, and the timer kinds that fire for them (`recurring.kinds`)."""


def register() -> None:
    """The subscriptions' timer kinds, their gate effect and what opens and ends with a job
    (called by `apps.ready`, after `timekeeping.jobs.register`)."""
    from timekeeping import clocks
    from timekeeping.clocks import gate
    from timekeeping.recurring import charges, outcomes
    from timekeeping.recurring.kinds import cycle, money, schedule, window
    from timekeeping.timers import kinds
    from timekeeping.timers.kinds import Place

    for name, place, module in (("cycle", Place.CYCLE, cycle),
                                ("schedule", Place.SCHEDULE, schedule),
                                ("window", Place.WINDOW, window), ("money", Place.MONEY, money)):
        # A mint reads and ends only its subscription's timers (and arms its next mint with
        # the batch): another subscription's mints armed with the batch wait to be written.
        kinds.register(name, place=place, describe=module.describe,
                       prepare=schedule.prepare if module is schedule else None,
                       keeps_to_owner=module is schedule)(module.fire)
    gate.effect(40)(charges.effect_step_taken)
    clocks.on_open(charges.when_opened)
    clocks.on_open(outcomes.when_opened)
    clocks.on_end(charges.when_ended)
