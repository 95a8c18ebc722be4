from timekeeping.models.brand import Brand, TestClock, brands_kept_by
from timekeeping.models.outbox import Delivery
from timekeeping.models.record import Record
from timekeeping.models.timer import TickRun, Timer

__all__ = ["Brand", "Delivery", "Record", "TestClock", "TickRun", "Timer", "brands_kept_by"]
