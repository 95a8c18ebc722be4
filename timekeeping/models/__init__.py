from timekeeping.models.archive import ArchivePart, BrandArchive
from timekeeping.models.brand import PARK_AFTER, Brand, TestClock, Walk, WalkLine, brands_kept_by
from timekeeping.models.digest import Digest
from timekeeping.models.dismissal import Dismissal
from timekeeping.models.fault import Fault
from timekeeping.models.keys import ApiKey
from timekeeping.models.moves import (
    BrandTable,
    Connection,
    Rehearsal,
    RowAudit,
    SampleRow,
    SetAside,
)
from timekeeping.models.once import SpentToken
from timekeeping.models.outbox import Delivery
from timekeeping.models.people import Customer, CustomerSubject, Invitation, Member
from timekeeping.models.record import Record
from timekeeping.models.recurring import Allowance, Outcome, Subscription
from timekeeping.models.schedule import Heartbeat, Schedule, ScheduleRun
from timekeeping.models.service import Clock, Job, Manifest, Occurrence, Subject
from timekeeping.models.timer import TickRun, Timer
from timekeeping.models.webhooks import ReceivedWebhook, WebhookAttempt, WebhookEndpoint
from timekeeping.models.work import Ask, Deadline, Grant, Standby, Task

__all__ = [
    "Allowance", "ApiKey", "ArchivePart", "Ask", "Brand", "BrandArchive", "BrandTable", "Clock",
    "Connection", "Customer",
    "CustomerSubject",
    "Deadline", "Delivery", "Digest", "Dismissal", "Fault", "Grant", "Heartbeat", "Invitation",
    "Job", "Manifest",
    "SpentToken",
    "PARK_AFTER",
    "Member", "Occurrence", "Outcome", "Record", "Rehearsal", "RowAudit", "SampleRow", "Schedule",
    "ReceivedWebhook", "ScheduleRun", "SetAside", "Standby", "Subject", "Subscription", "Task",
    "TestClock",
    "TickRun", "Timer", "Walk", "WalkLine", "WebhookAttempt", "WebhookEndpoint",
    "brands_kept_by",
]
