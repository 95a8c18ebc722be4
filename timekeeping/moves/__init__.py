"""Timed moves (SPEC A*, docs/timed-moves.md): rows of a brand's tables that move on by
themselves when a moment passes, checked from the manifest's `tables` section and run by the
tick's moves phase."""


def register() -> None:
    """What the package wires, called by `TimekeepingConfig.ready`: a test clock deleted (in
    the admin, or with its brand) takes its rehearsal's rows with it (`rehearse.remove`)."""
    from django.db.models.signals import pre_delete

    from timekeeping.models import TestClock

    pre_delete.connect(_test_clock_deleted, sender=TestClock,
                       dispatch_uid="timekeeping.moves.rehearsal_ends")


def _test_clock_deleted(sender, instance, **kwargs) -> None:
    from timekeeping.moves import rehearse

    rehearse.remove(instance)
