"""Interval schedules (SPEC J1-J11): a grid that never drifts, never doubles, and records
every skip. See docs/schedules.md."""

from timekeeping.schedules.declare import action, get_action, parse_every, schedule

__all__ = ["action", "get_action", "parse_every", "schedule"]
