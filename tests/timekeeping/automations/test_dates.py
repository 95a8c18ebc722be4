"""Automations that hear a job's time (issue 30, A7): a date missed opens a task of the same job,
and an ask whose link expires emails the customer, both through the tick on the real clock in
New York, in the firing's transaction; another brand's dates set nothing off."""

import copy
import json
from datetime import UTC, datetime

import pytest
from django.test import Client

from timekeeping import clocks, manifests
from timekeeping.basics import wallclock
from timekeeping.clocks import history
from timekeeping.console import why
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Brand, Delivery, Record, Subject, Task
from timekeeping.tick import phases

TAX = json.loads(TAX_MANIFEST.read_text())
OPENED = datetime(2028, 2, 1, 14, tzinfo=UTC)
MISSED = datetime(2028, 4, 20, 14, tzinfo=UTC)  # 10:00 in New York: the tax due 18 April lapsed
EXPIRED = datetime(2028, 8, 1, 14, tzinfo=UTC)  # the organizer's 180 days are over
RULES = [{"when": {"missed": "pay", "service": "annual-return"}, "do": {"task": "prepare"}},
         {"when": {"ask_expired": "organizer"},
          "do": {"email": {"to": "customer", "who": "the taxpayer",
                           "subject": "{job}: we still need the {name}",
                           "body": "Your link works again until {until}."}}}]


def practice(brand, rules=RULES):
    document = copy.deepcopy(TAX)
    document["automations"] = rules
    manifests.load(brand, document)
    with wallclock.fixed(OPENED):
        subject = Subject.objects.create(brand=brand, kind="taxpayer", key="11-1111111",
                                         name="Fernhill Tools", zone="America/New_York",
                                         contact_email="books@fernhill.test")
        return clocks.order(brand=brand, service="annual-return", subject=subject,
                            period="2027", input={"jurisdictions": ["US"]})


def tick(at):
    with wallclock.fixed(at):
        return phases.run_once(now=at, sweep=False)


@pytest.mark.django_db
def test_a_missed_date_opens_the_task_of_the_same_job(brand):
    job = practice(brand)
    assert not Task.objects.filter(job=job).exists()
    tick(MISSED)
    task = Task.objects.get(job=job)
    assert (task.step, task.title, task.state, task.opened) == (
        "prepare", "prepare the return", "open", MISSED)
    [ran] = Record.objects.filter(brand=brand, kind="automation.ran")
    assert ran.job == job.pk and ran.data["rule"] == 1
    assert ran.data["did"] == "opened the task to prepare the return"
    assert Record.objects.get(pk=ran.data["heard"]).kind == "clock.lapsed"
    said = "Heard by rule 1: opened the task to prepare the return."
    assert said in why.why(brand, job.pk)
    owner = Client()
    owner.force_login(brand.owner)
    page = owner.get(f"/console/{brand.pk}/subjects/{job.subject_id}/")
    assert page.status_code == 200 and said in page.content.decode()
    assert said not in [line.text for line in history.history(job.subject, customer=True)]


@pytest.mark.django_db
def test_an_expired_ask_emails_the_customer(brand):
    job = practice(brand)
    tick(EXPIRED)
    [ran] = Record.objects.filter(brand=brand, kind="automation.ran", data__rule=2)
    assert ran.data["did"] == "emailed the taxpayer"
    [mail] = [d for d in Delivery.objects.filter(brand=brand, channel=Delivery.Channel.EMAIL)
              if d.payload["subject"].endswith("we still need the organizer")]
    assert mail.payload["to"] == ["books@fernhill.test"]
    assert mail.payload["subject"] == "Fernhill Tools' 2027 annual return: we still need the " \
                                      "organizer"
    assert mail.payload["body"].startswith("Your link works again until ")
    assert "{until}" not in mail.payload["body"]
    assert Record.objects.get(pk=ran.data["heard"]).job == job.pk


@pytest.mark.django_db
def test_another_brands_missed_date_sets_nothing_off(brand):
    practice(brand)
    other = Brand.objects.create(name="Elsewhere", slug="elsewhere")
    theirs = practice(other, rules=[])
    tick(MISSED)
    assert Task.objects.filter(job=theirs).count() == 0
    assert Record.objects.filter(brand=other, kind="clock.lapsed").exists()
    assert not Record.objects.filter(brand=other, kind="automation.ran").exists()
    assert Record.objects.filter(brand=brand, kind="automation.ran").count() == 1
