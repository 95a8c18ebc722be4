"""Each portal page costs the same number of queries for a customer of 10 subjects as for a
customer of 1,000 (DESIGN: keep queries per page bounded, whatever the data size)."""

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from timekeeping.models import Clock, Customer, Job, Occurrence, Subject


def copies(portal, n: int, tag: str) -> list[Subject]:
    """`n` subjects, each with a copy of the fixture's job, clocks and open dates."""
    job = portal.job
    subjects = Subject.objects.bulk_create([
        Subject(brand=portal.brand, kind="taxpayer", key=f"{tag}{i}", name=f"{tag} {i}",
                zone="America/Chicago", bundle=portal.subject.bundle) for i in range(n)])
    jobs = Job.objects.bulk_create([
        Job(brand=portal.brand, subject=subject, service=job.service, period=job.period,
            input=job.input, bundle=job.bundle, opened=job.opened) for subject in subjects])
    models = list(job.clocks.all())
    made = Clock.objects.bulk_create([
        Clock(brand=portal.brand, subject=copy.subject, job=copy, name=row.name, title=row.title,
              owner=row.owner, hard=row.hard, lives_on_subject=row.lives_on_subject,
              bundle=row.bundle, opened=row.opened) for copy in jobs for row in models])
    dates = {row.name: list(row.occurrences.all()) for row in models}
    Occurrence.objects.bulk_create([
        Occurrence(clock=row, item=o.item, seq=o.seq, rule_due=o.rule_due, due=o.due,
                   late_from=o.late_from, brand_id=row.brand_id, test_clock_id=row.test_clock_id,
                   hard=row.hard, miss_cost=o.miss_cost)
        for row in made for o in dates[row.name]])
    return subjects


def customer(portal, n: int) -> tuple[Client, Subject]:
    subjects = copies(portal, n, f"c{n}-")
    user = get_user_model().objects.create_user(f"customer-of-{n}")
    Customer.objects.create(brand=portal.brand, user=user).subjects.add(
        *subjects, through_defaults={"brand": portal.brand})
    client = Client()
    client.force_login(user)
    return client, subjects[0]


def cost(client: Client, method: str, path: str, **extra) -> int:
    getattr(client, method)(path, **extra)  # warm: a manifest's compiled services are cached
    with CaptureQueriesContext(connection) as asked:
        answer = getattr(client, method)(path, **extra)
    assert answer.status_code in (200, 302), (path, answer.status_code)
    return len(asked)


@pytest.mark.parametrize("page", ["home", "subject", "history", "calendar", "acknowledge"])
def test_a_portal_page_costs_the_same_queries_for_10_and_1000_subjects(portal, page):
    counts = {}
    for n in (10, 1000):
        client, first = customer(portal, n)
        pay = first.clocks.get(name="pay")
        path, method, extra = {
            "home": ("/portal/", "get", {}),
            "subject": (f"/portal/subjects/{first.pk}/", "get", {}),
            "history": (f"/portal/subjects/{first.pk}/?before=2100-01-01T00:00:00Z", "get", {}),
            "calendar": (f"/portal/subjects/{first.pk}/calendar.ics", "get", {}),
            "acknowledge": (f"/portal/clocks/{pay.pk}/acknowledge", "post",
                            {"HTTP_HX_REQUEST": "true"}),
        }[page]
        counts[n] = cost(client, method, path, **extra)
    assert counts[10] == counts[1000], counts
    print(f"{page}: {counts[10]} queries for 10 subjects, {counts[1000]} for 1,000")
