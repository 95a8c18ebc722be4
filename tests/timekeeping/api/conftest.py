"""What the reading tests read: brands A and B, each with the tax manifest, a subject and a job
with its clocks and timers; A also a subject and job in a test clock's world, timers that fired
late and on time, records, schedules with runs, a postponement and a second manifest version.
Callers: A's owner, A's viewer, A's key, B's owner, and a superuser."""

import copy
import json
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from timekeeping import clocks, manifests
from timekeeping.access import keys
from timekeeping.basics import wallclock
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import (
    Brand,
    Job,
    Member,
    Schedule,
    ScheduleRun,
    Subject,
    TestClock,
    Timer,
)
from timekeeping.timers import records

TAX = json.loads(TAX_MANIFEST.read_text())
NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
JURISDICTIONS = {"jurisdictions": ["US", "US-CA"]}


@dataclass
class Reading:
    brand: Brand
    other: Brand
    subject: Subject
    job: Job
    test_clock: TestClock
    world_subject: Subject
    world_job: Job
    late: Timer
    on_time: Timer
    schedule: Schedule
    code_schedule: Schedule
    other_schedule: Schedule
    other_job: Job
    secret: str
    clients: dict[str, Client] = field(default_factory=dict)

    def get(self, caller: str, path: str, **query):
        extra = {"HTTP_AUTHORIZATION": f"Bearer {self.secret}"} if caller == "key_a" else {}
        return self.clients[caller].get(path, query, **extra)


def _brand(name: str, owner) -> Brand:
    brand = Brand.objects.create(name=name, slug=name.lower(), owner=owner)
    manifests.load(brand, TAX)
    return brand


def _subject_and_job(brand: Brand, key: str, name: str, test_clock=None) -> tuple:
    subject = Subject.objects.create(brand=brand, kind="taxpayer", key=key, name=name,
                                     input=JURISDICTIONS, test_clock=test_clock)
    job = clocks.order(brand=brand, service="annual-return", subject=subject, period="2027",
                       input=JURISDICTIONS)
    return subject, job


def _fired(brand: Brand, key: str, late_by: timedelta) -> Timer:
    owed = NOW - timedelta(days=1)
    return Timer.objects.create(brand=brand, key=key, kind="delay", place=4, owed=owed,
                                state=Timer.State.FIRED, fired=owed + late_by, late_by=late_by,
                                owner_type="job", owner_id="job_Fired", owner_opened=owed)


def _schedule(brand: Brand | None, name: str) -> Schedule:
    row = Schedule.objects.create(key=f"{brand.pk if brand else '-'}:-:{name}", name=name,
                                  brand=brand, action="timekeeping.schedules.pulses.nothing",
                                  every_s=3600, next_due=NOW + timedelta(hours=1))
    for hours, outcome in ((1, "succeeded"), (2, "failed"), (3, "skipped")):
        ScheduleRun.objects.create(schedule=row, due=NOW - timedelta(hours=hours),
                                   tick=NOW - timedelta(hours=hours), outcome=outcome,
                                   reason="" if outcome == "succeeded" else outcome)
    return row


def _retitled() -> dict:
    document = copy.deepcopy(TAX)
    document["services"]["annual-return"]["clocks"]["pay"]["title"] = "pay the {period} tax in full"
    return document


@pytest.fixture
def reading(db) -> Reading:
    """Made an hour before NOW on a fixed clock, so what it writes comes before NOW
    whatever the day the suite runs."""
    with wallclock.fixed(NOW - timedelta(hours=1)):
        users = get_user_model().objects
        people = {name: users.create_user(name, password="pw")
                  for name in ("owner_a", "viewer_a", "owner_b")}
        people["root"] = users.create_superuser("root", password="pw")
        brand, other = _brand("A", people["owner_a"]), _brand("B", people["owner_b"])
        Member.objects.create(brand=brand, user=people["viewer_a"], role=Member.Role.VIEWER)
        subject, job = _subject_and_job(brand, "11-1111111", "Lumen Labs")
        _, other_job = _subject_and_job(other, "22-2222222", "Other Works")
        test_clock = TestClock.objects.create(brand=brand, name="spring", frozen_time=NOW)
        world_subject, world_job = _subject_and_job(brand, "11-1111111", "Lumen Labs (test)",
                                                    test_clock)
        late, on_time = _fired(brand, "late", timedelta(minutes=5)), _fired(brand, "on-time",
                                                                             timedelta(0))
        _fired(other, "late", timedelta(minutes=5))
        records.write("note.kept", brand=brand, instant=NOW, subject=subject.pk, job=job.pk,
                      timer=late.pk, data={"said": "hello"})
        for each in (brand, other):
            clocks.add_postponement(calendar=each.calendar, from_date=date(2031, 1, 1),
                                    through=date(2031, 1, 2), to=date(2031, 1, 5), where={},
                                    notice=f"storm at {each.name}")
        manifests.load(brand, _retitled())
        found = Reading(brand, other, subject, job, test_clock, world_subject, world_job, late,
                        on_time, _schedule(brand, "nightly"), _schedule(None, "housekeeping"),
                        _schedule(other, "nightly"), other_job,
                        keys.make(brand=brand, name="reader", by=None, now=NOW).secret)
        for name in ("owner_a", "viewer_a", "owner_b", "root", "key_a", "anonymous"):
            found.clients[name] = Client()
            if name in people:
                found.clients[name].force_login(people[name])
    return found
