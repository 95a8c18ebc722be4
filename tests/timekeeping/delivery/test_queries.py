"""The delivery page and its controls cost the same number of queries for 5 tasks and dates as
for 50 (DESIGN: keep queries per page bounded, whatever the data size), and the page shows at
most a hundred of each, saying so when there are more."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from timekeeping.models import Clock, Job, Occurrence, Subject, Task

# The most each may cost, as measured (docs/delivery.md): the page reads its rows in a fixed
# number of queries; a control costs what the engine's step costs, whatever else there is.
MOST = {"page": 13, "take": 25, "extend": 27, "release": 23, "done": 44, "acknowledge": 13}


def copies(delivery, n: int, tag: str) -> tuple[Task, Occurrence]:
    """`n` subjects on spring, each with a copy of the fixture's job, its task (every other one
    held by the manager) and its filing date assigned to the manager; the first copy's task
    (open) and date, for a control to act on."""
    job, task, date = delivery.job, delivery.task, delivery.date
    subjects = Subject.objects.bulk_create([
        Subject(brand=delivery.brand, test_clock=delivery.spring, kind="client",
                key=f"{tag}{i}", name=f"{tag} {i}", zone="America/Chicago",
                bundle=delivery.subject.bundle) for i in range(n)])
    jobs = Job.objects.bulk_create([
        Job(brand=delivery.brand, test_clock=delivery.spring, subject=subject,
            service=job.service, input=job.input, bundle=job.bundle, opened=job.opened)
        for subject in subjects])
    rows = Clock.objects.bulk_create([
        Clock(brand=delivery.brand, test_clock=delivery.spring, subject=copy.subject, job=copy,
              name=date.clock.name, title=date.clock.title, owner=date.clock.owner,
              bundle=date.clock.bundle, opened=date.clock.opened) for copy in jobs])
    Occurrence.objects.bulk_create([
        Occurrence(clock=row, brand=delivery.brand, test_clock=delivery.spring,
                   rule_due=date.rule_due, due=date.due, late_from=date.late_from,
                   assignee=delivery.manager) for row in rows])
    held = {"state": Task.State.HELD, "holder": delivery.manager, "held_since": task.opened,
            "held_until": task.opened + task.hold, "holds": 1}
    Task.objects.bulk_create([
        Task(brand=delivery.brand, test_clock=delivery.spring, job=copy, subject=copy.subject,
             step=task.step, title=task.title, due=task.due + timedelta(hours=i),
             hold=task.hold, opened=task.opened, **(held if i % 2 else {}))
        for i, copy in enumerate(jobs)])
    return Task.objects.get(job=jobs[0]), Occurrence.objects.get(clock__job=jobs[0])


def cost(client, method: str, path: str) -> int:
    client.get("/delivery/")  # warm: a manifest's compiled services are cached
    with CaptureQueriesContext(connection) as asked:
        answer = getattr(client, method)(path, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200, (path, answer.status_code)
    return len(asked)


@pytest.mark.parametrize("what", ["page", "take", "acknowledge"])
def test_the_page_and_a_control_cost_the_same_for_5_and_50(delivery, what):
    counts = {}
    for n in (5, 50):
        task, date = copies(delivery, 4 if n == 5 else 45, f"c{n}-")
        path, method = {"page": ("/delivery/", "get"),
                        "take": (f"/delivery/tasks/{task.pk}/take", "post"),
                        "acknowledge": (f"/delivery/dates/{date.pk}/acknowledge", "post")}[what]
        counts[n] = cost(delivery.client("staff"), method, path)
        found = delivery.client("staff").get("/delivery/").context
        assert len(found["tasks"].rows) + len(found["practice_tasks"]) == n
    assert counts[5] == counts[50], counts
    print(f"{what}: {counts[5]} queries for 5 tasks and dates, {counts[50]} for 50")


def test_each_stays_within_its_queries(delivery, django_assert_max_num_queries):
    task, date = copies(delivery, 20, "c")
    client = delivery.client("staff")
    client.get("/delivery/")
    with django_assert_max_num_queries(MOST["page"]):
        assert client.get("/delivery/").status_code == 200
    for verb in ("take", "extend", "release", "take", "done"):
        with django_assert_max_num_queries(MOST[verb], info=verb):
            answer = client.post(f"/delivery/tasks/{task.pk}/{verb}", HTTP_HX_REQUEST="true")
        assert answer.status_code == 200 and 'class="said ok"' in answer.content.decode()
    with django_assert_max_num_queries(MOST["acknowledge"]):
        client.post(f"/delivery/dates/{date.pk}/acknowledge", HTTP_HX_REQUEST="true")


def test_it_shows_a_hundred_of_each_and_says_there_are_more(delivery):
    copies(delivery, 100, "c")
    answer = delivery.client("staff").get("/delivery/")
    text = answer.content.decode()
    found = answer.context
    assert len(found["tasks"].rows) + len(found["practice_tasks"]) == 100
    assert len(found["dates"].rows) + len(found["practice_dates"]) == 100
    assert text.count('<tr id="task-') == text.count('<tr id="date-') == 100
    assert "Only the first 100 tasks are shown" in text
    assert "Only the first 100 dates are shown" in text
