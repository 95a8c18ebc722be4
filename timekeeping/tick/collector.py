"""The tick process's garbage collector (issue 32, the no-op tick against its floor).

A tick process starts with Django, the product and the brands' calendars imported: some
130,000 objects that live as long as the process. Python's collector went through all of
them at each of its full collections, and a batch of a thousand timers makes enough objects
(rows, records, their data) to set one off every few batches: about 5 µs a fired timer, a
twentieth of a no-op timer's cost. `settle` freezes what start-up made (the collector never
looks at it again) and lets the young generation grow to YOUNG objects before it is
collected, so a batch's objects, most of them freed by their counts as it ends, are rarely
looked at twice. Cycles are still collected, only later.
"""

from __future__ import annotations

import gc

YOUNG = 10_000  # Python's default is 700
_settled = False


def settle() -> None:
    """Once a process is set up: freeze what it holds and collect its young less often.
    Once a process (a test run calls the command many times)."""
    global _settled  # noqa: PLW0603 - a process's own setting, made once
    if _settled:
        return
    _settled = True
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG, middle, old)
