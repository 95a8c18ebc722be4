"""Operations that fail on purpose, for the tick's fault-injection tests (and the child
processes they start, which import this module before ticking)."""

from timekeeping.timers import records
from timekeeping.timers.delays import operation


@operation("faulty.bad_record")
def bad_record(*, input, now, brand):
    """A handler whose record cannot be stored: a set is not JSON."""
    records.write("note", brand=brand, instant=now, data={"tags": {"a", "b"}})
    return "wrote"


@operation("faulty.boom")
def boom(*, input, now, brand):
    raise RuntimeError("the handler broke")
