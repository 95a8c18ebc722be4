"""Jobs (SPEC J*, docs/jobs.md): a service ordered for a subject, with its asks, grants, tasks,
deadlines, signals and repairs, and the timer kinds that fire for them (`jobs.kinds`)."""


def register() -> None:
    """The jobs' timer kinds, what the gate asks of them, what opens and ends with a job, and
    the `jobs.order` operation (called by `apps.ready`)."""
    from timekeeping import clocks
    from timekeeping.clocks import gate
    from timekeeping.jobs import deadlines, grants, lifecycle, operations, repairs
    from timekeeping.jobs.kinds import ask, clock, deadline, grant, signal, task
    from timekeeping.timers import delays, firing, kinds
    from timekeeping.timers.kinds import Place

    # A batch's dates read at once; its notices and acks arm the next day's with the batch.
    kinds.register("clock", place=Place.CLOCK, describe=clock.describe,
                   prepare=clock.prepare, quiet=clock.quiet)(clock.fire)
    # A deadline's marks change the deadline alone: what a batch read of its dates stands;
    # what it read of the deadlines that follow them does not (`deadlines_stand`).
    firing.telling("deadline.at_risk", "deadline.late")
    firing.standing(deadlines.KEPT, deadlines.deadlines_stand, hears_telling=True)
    # An ask's, a task's and a deadline's marks: the batch's rows read at once.
    for name, place, module, prepare in (
            ("ask", Place.ASK, ask, ask.prepare), ("grant", Place.ASK, grant, None),
            ("task", Place.TASK, task, task.prepare),
            ("deadline", Place.DEADLINE, deadline, deadline.prepare),
            ("signal", Place.DEADLINE, signal, None)):
        kinds.register(name, place=place, describe=module.describe,
                       prepare=prepare)(module.fire)
    gate.check(50)(grants.check_needs_grant)
    gate.effect(15)(repairs.effect_resubmitted)
    gate.effect(30)(lifecycle.effect_committed)
    clocks.on_open(lifecycle.when_opened)
    clocks.on_end(lifecycle.when_ended)
    delays.operation("jobs.order")(operations.order_job)
