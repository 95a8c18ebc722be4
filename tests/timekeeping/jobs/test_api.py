"""A job's own time through the API: its work read back, a job ended, a task taken and
extended by a person (a key is no member), and a party's link served and answered (T1)."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from timekeeping import clocks, manifests
from timekeeping.access import keys
from timekeeping.basics import wallclock
from timekeeping.models import Delivery, Member, Subject, Task

from .test_work import manifest

START = datetime(2028, 3, 10, 15, tzinfo=UTC)


@pytest.fixture
def desk(brand, actors):
    actors["owner"].email = "owner@northwind.test"
    actors["owner"].save()
    manifests.load(brand, manifest(
        deliver={"organizer": {"title": "the organizer", "ask": "owner", "expires": "3d"},
                 "prepare": {"task": True, "hold": "1d", "after": ["organizer"]}},
        price={"within": "30d", "late": "20%"}))
    subject = Subject.objects.create(brand=brand, kind="client", key="1", name="Harbor",
                                     zone="America/New_York", contact_email="g@harbor.test")
    with wallclock.fixed(START):
        job = clocks.order(brand=brand, service="work", subject=subject,
                           input={"due": "2028-06-30"})
    token = re.search(r"/ask/([\w-]+)/", Delivery.objects.get(
        payload__to=["g@harbor.test"]).payload["body"])[1]
    Member.objects.create(brand=brand, user=actors["staff"], role="manager")
    staff = Client()
    staff.force_login(actors["staff"])
    stranger = Client()
    stranger.force_login(actors["outsider"])
    secret = keys.make(brand=brand, name="sync", by=actors["owner"], now=START).secret
    return {"job": job, "token": token, "staff": staff, "stranger": stranger,
            "key": {"HTTP_AUTHORIZATION": f"Bearer {secret}"}}


def test_a_link_serves_its_expiry_and_its_answer_opens_the_next_step_as_a_task(desk):
    link = f"/api/links/{desk['token']}"
    with wallclock.fixed(START):
        served = Client().get(link).json()
    assert served["works"] is True and served["expires"] == "2028-03-13T14:00:00Z"
    with wallclock.fixed(START + timedelta(hours=1)):
        answered = Client().post(link)
    assert answered.status_code == 200 and answered.json()["state"] == "answered"
    with wallclock.fixed(START + timedelta(hours=2)):
        work = desk["staff"].get(f"/api/jobs/{desk['job'].pk}/work").json()
    assert [task["step"] for task in work["tasks"]] == ["prepare"]
    assert work["deadlines"][0]["running_since"] == "2028-03-10T16:00:00Z"
    assert work["asks"][0]["works"] is False  # answered: the link no longer answers


def test_an_expired_link_answers_410_with_its_moment(desk):
    with wallclock.fixed(datetime(2028, 3, 13, 14, tzinfo=UTC)):
        gone = Client().post(f"/api/links/{desk['token']}")
    assert gone.status_code == 410
    assert gone.json()["code"] == "link_expired"
    assert gone.json()["expired"] == "2028-03-13T14:00:00Z"
    assert Client().get("/api/links/NoSuchLink00000000000000").status_code == 404


def test_a_person_takes_and_extends_a_task_once_and_a_key_is_no_member(desk):
    with wallclock.fixed(START):
        Client().post(f"/api/links/{desk['token']}")
        task = Task.objects.get(job=desk["job"])
        taken = desk["staff"].post(f"/api/tasks/{task.pk}/take")
        extended = desk["staff"].post(f"/api/tasks/{task.pk}/extend")
        again = desk["staff"].post(f"/api/tasks/{task.pk}/extend")
        keyed = Client().post(f"/api/tasks/{task.pk}/take", **desk["key"])
        strange = desk["stranger"].post(f"/api/tasks/{task.pk}/take")
    assert taken.status_code == 200 and taken.json()["state"] == "held"
    assert extended.json()["held_until"] == "2028-03-12T14:00:00Z"  # 10:00 EDT: days, not 24h
    assert again.status_code == 409 and again.json()["code"] == "hold_extended_once"
    assert keyed.status_code == 403
    assert strange.status_code == 404


def test_ending_a_job_twice_is_a_conflict_naming_the_job(desk):
    with wallclock.fixed(START):
        ended = Client().post(f"/api/jobs/{desk['job'].pk}/end", **desk["key"])
        twice = Client().post(f"/api/jobs/{desk['job'].pk}/end", **desk["key"])
    assert ended.status_code == 200 and ended.json()["state"] == "ended"
    assert twice.status_code == 409 and "job" in twice.json()


def test_ending_a_job_with_facts_the_subject_keeps_for_the_next_period(brand, actors):
    from timekeeping.models import Record

    document = manifest(clocks={"file": {"title": "file it", "due": {"input": "due"},
                                         "owner": "brand"},
                                "expiry": {"title": "the credit expires",
                                           "due": {"input": "credit_expiry"},
                                           "owner": "brand", "lives_on": "subject"}})
    document["services"]["work"]["subject"]["keeps"] = ["credit_expiry"]
    manifests.load(brand, document)
    subject = Subject.objects.create(brand=brand, kind="client", key="k", name="Keeper")
    with wallclock.fixed(START):
        job = clocks.order(brand=brand, service="work", subject=subject,
                           input={"due": "2028-06-30", "credit_expiry": "2031-12-31"})
        secret = keys.make(brand=brand, name="k", by=actors["owner"], now=START).secret
        ended = Client().post(f"/api/jobs/{job.pk}/end", {"facts": {"carry": 13800}},
                              content_type="application/json",
                              HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert ended.status_code == 200
    subject.refresh_from_db()
    assert subject.input == {"credit_expiry": "2031-12-31"}  # kept; `carry` is not in keeps
    assert Record.objects.get(kind="subject.kept").data == {"fields": ["credit_expiry"]}
    with wallclock.fixed(START):  # the next period's job reads the kept fact
        following = clocks.order(brand=brand, service="work", subject=subject, period="next",
                                 input={"due": "2029-06-29"})
    expiry = following.clocks.get(name="expiry").occurrences.get()
    assert expiry.due.isoformat() == "2031-12-31"
