"""Interval schedules (SPEC J1-J11): a grid that never drifts, never doubles, and records
every skip. See docs/schedules.md."""

from timekeeping.schedules.declare import action, get_action, parse_every, schedule

__all__ = ["action", "get_action", "parse_every", "register", "schedule"]


def register() -> None:
    """The built-in actions: the demo's heartbeat and one purge per model that declares one
    (called by `apps.ready`)."""
    from timekeeping.schedules import actions, purge

    action("demo.heartbeat")(actions.heartbeat)
    purge.register_actions()
