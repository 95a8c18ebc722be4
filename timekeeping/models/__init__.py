from timekeeping.models.brand import Brand, TestClock, brands_kept_by
from timekeeping.models.outbox import Delivery
from timekeeping.models.record import Record
from timekeeping.models.service import Clock, Job, Manifest, Occurrence, Subject
from timekeeping.models.timer import TickRun, Timer

__all__ = [
    "Brand", "Clock", "Delivery", "Job", "Manifest", "Occurrence", "Record", "Subject",
    "TestClock", "TickRun", "Timer", "brands_kept_by",
]
