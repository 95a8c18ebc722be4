"""Two tick processes at once over a job's own time (PostgreSQL, real processes): every ask's
expiry, every hold's warning and end, every deadline's marks fire once, and what each firing
does is on the record once."""

from collections import Counter
from datetime import UTC, datetime

import pytest
from django.contrib.auth import get_user_model

from tests.processes import needs_postgres, start_manage
from timekeeping import clocks, manifests
from timekeeping.basics import wallclock
from timekeeping.jobs import tasks
from timekeeping.models import Brand, Member, Record, Subject, Task, Timer

from .test_work import manifest

pytestmark = [needs_postgres, pytest.mark.django_db(transaction=True)]

T0 = datetime(2026, 1, 5, 14, tzinfo=UTC)  # long past: everything below is owed
BRANDS, JOBS = 10, 6


def _world() -> None:
    users = get_user_model().objects
    for b in range(BRANDS):
        owner = users.create_user(f"owner{b}", email=f"owner{b}@example.test")
        brand = Brand.objects.create(name=f"Brand {b}", slug=f"brand-{b}", owner=owner)
        document = manifest(deliver={"organizer": {"ask": "owner", "expires": "1d"}})
        document["services"]["prep"] = manifest(
            deliver={"prepare": {"task": True, "hold": "1d"}},
            price={"within": "2d"})["services"]["work"]
        manifests.load(brand, document)
        member = Member.objects.create(brand=brand, user=users.create_user(f"m{b}"),
                                       role="manager")
        with wallclock.fixed(T0):
            for n in range(JOBS):
                subject = Subject.objects.create(brand=brand, kind="client", key=str(n),
                                                 name=f"S{n}", contact_email="c@example.test")
                for service in ("work", "prep"):
                    clocks.order(brand=brand, service=service, subject=subject,
                                 input={"due": "2026-06-30"})
            for task in Task.objects.filter(brand=brand):
                tasks.take(task, member)


def test_two_ticks_at_once_fire_asks_holds_and_deadlines_each_once():
    _world()
    owed = set(Timer.objects.filter(state="armed", kind__in=["ask", "task", "deadline"])
               .values_list("id", flat=True))
    assert len(owed) == BRANDS * JOBS * 5  # an expiry; a warning and an end; two marks
    ticks = [start_manage("tick"), start_manage("tick")]
    outputs = [process.communicate(timeout=300) for process in ticks]
    assert [process.returncode for process in ticks] == [0, 0], outputs
    fired = Counter(Record.objects.filter(kind="timer.fired", timer__in=owed)
                    .values_list("timer", flat=True))
    assert set(fired) == owed and set(fired.values()) == {1}
    said = Counter(Record.objects.filter(kind__in=[
        "ask.expired", "task.warned", "task.opened_again", "deadline.at_risk",
        "deadline.late"]).values_list("kind", flat=True))
    assert said == dict.fromkeys(["ask.expired", "task.warned", "task.opened_again",
                                  "deadline.at_risk", "deadline.late"], BRANDS * JOBS)
    assert not Task.objects.filter(state="held").exists()
