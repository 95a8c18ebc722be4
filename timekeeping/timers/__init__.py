"""The firing machinery every kind of time uses (docs/architecture.md): the registry of timer
kinds (`kinds`, which knows no kind), arming and ending timers (`arming`), firing a batch
(`firing`), the record (`records`), leases, faults, the outbox, and delays with their
operations. It imports no concept above it; each concept registers its own kinds.
"""


def register() -> None:
    """How a firing batch writes the timers armed with it, the delay kind and the built-in
    operations delays call (called by `apps.ready`)."""
    from timekeeping.timers import arming, delay_kind, delays, firing, kinds, operations

    firing.writes_later(arming.write_later)

    kinds.register("delay", place=kinds.Place.DEADLINE,
                   describe=delay_kind.describe)(delay_kind.fire)
    delays.operation("timekeeping.note")(operations.note)
    delays.operation("timekeeping.noop")(operations.noop)
