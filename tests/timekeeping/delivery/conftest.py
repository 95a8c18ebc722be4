"""The delivery portal's world: a brand in New York whose `work` Service opens a task,
`prepare` (hold 2d, within 10d), on each job, with a manager (staff), a viewer (member) and the
owner as members; a subject on the test clock "spring" (2028-03-01 09:00 EST) whose filing date
is assigned to the manager; and a stranger brand (outsider's) with a task of its own."""

from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest
from django.test import Client

from timekeeping import clocks, manifests
from timekeeping.models import Brand, Job, Member, Occurrence, Subject, Task, TestClock
from timekeeping.tick import test_clocks

START = datetime(2028, 3, 1, 14, tzinfo=UTC)  # 09:00 EST


def manifest() -> dict:
    return {"calendar": {"zone": "America/New_York", "weekends": [], "closes": "23:59",
                         "rings_at": "09:00"},
            "services": {"work": {
                "subject": {"kind": "client"},
                "steps": {"file": {}, "nudge": {}},
                "deliver": {"prepare": {"title": "prepare the return", "task": True,
                                        "hold": "2d", "within": "10d"}},
                "clocks": {"file": {"title": "file it", "due": {"input": "due"},
                                    "owner": "brand", "satisfied_by": ["file"],
                                    "choices": ["file"]}}}}}


@dataclass
class Delivery:
    brand: Brand
    spring: TestClock
    subject: Subject
    job: Job
    task: Task
    date: Occurrence  # the filing date, assigned to the manager
    manager: Member
    viewer: Member
    owner: Member
    stranger: Task  # another brand's
    clients: dict[str, Client] = field(default_factory=dict)

    def client(self, name: str) -> Client:
        return self.clients[name]


def order(brand: Brand, world: TestClock | None, key: str, name: str, due: str = "2028-06-30"):
    subject = Subject.objects.create(brand=brand, test_clock=world, kind="client", key=key,
                                     name=name, zone="America/New_York", owner_name="Grace",
                                     contact_email="g@harbor.test")
    return clocks.order(brand=brand, service="work", subject=subject, input={"due": due})


@pytest.fixture
def delivery(brand, actors) -> Delivery:
    manifests.load(brand, manifest())
    brand.refresh_from_db()
    spring = test_clocks.create(brand=brand, name="spring", frozen_time=START)
    job = order(brand, spring, "1", "Harbor")
    manager = Member.objects.create(brand=brand, user=actors["staff"], role="manager")
    viewer = Member.objects.create(brand=brand, user=actors["member"], role="viewer")
    owner = Member.objects.create(brand=brand, user=actors["owner"], role="owner")
    date = Occurrence.objects.get(clock__job=job)
    clocks.assign(date, manager, by="owner")
    other = Brand.objects.create(name="Elsewhere", slug="elsewhere", owner=actors["outsider"])
    manifests.load(other, manifest())
    Member.objects.create(brand=other, user=actors["outsider"], role="manager")
    theirs = order(other, test_clocks.create(brand=other, name="spring", frozen_time=START), "9",
                   "A Stranger")
    found = Delivery(brand, spring, job.subject, job, Task.objects.get(job=job),
                     Occurrence.objects.get(pk=date.pk), manager, viewer, owner,
                     Task.objects.get(job=theirs))
    for name in ("staff", "member", "owner", "outsider", "buyer"):
        client = Client()
        client.force_login(actors[name])
        found.clients[name] = client
    return found
