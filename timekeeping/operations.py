"""Built-in operations for delays."""

from timekeeping import records
from timekeeping.delays import operation


@operation("timekeeping.note")
def note(*, input, now, brand) -> str:
    """Write a record of kind `note` with the input (for demos and checks)."""
    records.write("note", brand=brand, instant=now, data={"input": input})
    return "noted"


@operation("timekeeping.noop")
def noop(*, input, now, brand) -> str:
    """Do nothing: for measuring the tick itself."""
    return ""
