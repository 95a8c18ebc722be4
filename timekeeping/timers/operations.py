"""Built-in operations for delays: registered by `timekeeping.timers.register`."""

from timekeeping.timers import records


def note(*, input, now, brand) -> str:
    """Write a record of kind `note` with the input (for demos and checks)."""
    records.write("note", brand=brand, instant=now, data={"input": input})
    return "noted"


def noop(*, input, now, brand) -> str:
    """Do nothing: for measuring the tick itself."""
    return ""
