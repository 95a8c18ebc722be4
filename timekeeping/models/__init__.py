from timekeeping.models.brand import Brand, TestClock
from timekeeping.models.record import Record

__all__ = ["Brand", "Record", "TestClock"]
