"""The portal's world: a tax brand whose customer (the buyer) keeps one subject's dates, a
subject of the same brand they are no customer of, and a subject of another brand."""

import copy
import json
from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from timekeeping import clocks, manifests
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Brand, Customer, Job, Subject

TAX = json.loads(TAX_MANIFEST.read_text())
INPUT = {"jurisdictions": ["US", "US-CA"], "earliest_credit_expiry": "2046-12-31"}


@dataclass
class Portal:
    brand: Brand
    subject: Subject
    job: Job
    client: Client
    others: Subject  # the same brand's, not the customer's
    strangers: Subject  # another brand's

    def clock(self, name: str):
        return self.job.clocks.get(name=name)


def taxpayer(brand: Brand, key: str, name: str, **fields) -> Subject:
    subject = Subject.objects.create(brand=brand, kind="taxpayer", key=key, name=name,
                                     **fields)
    clocks.order(brand=brand, service="annual-return", subject=subject, period="2027",
                 input=INPUT)
    return subject


@pytest.fixture
def portal(brand, actors) -> Portal:
    actors["owner"].email = "owner@example.test"
    actors["owner"].save()
    manifests.load(brand, copy.deepcopy(TAX))
    brand.refresh_from_db()
    subject = taxpayer(brand, "11-1111111", "Fernhill Tools", zone="America/Los_Angeles",
                       contact_email="books@fernhill.example", owner_name="Ada Fernhill")
    others = taxpayer(brand, "22-2222222", "Someone Else")
    other_brand = Brand.objects.create(name="Elsewhere", slug="elsewhere",
                                       owner=actors["outsider"])
    manifests.load(other_brand, copy.deepcopy(TAX))
    strangers = taxpayer(other_brand, "33-3333333", "A Stranger")
    Customer.objects.create(brand=brand, user=actors["buyer"]).subjects.add(
        subject, through_defaults={"brand": brand})
    client = Client()
    client.force_login(actors["buyer"])
    return Portal(brand, subject, Job.objects.get(subject=subject), client, others, strangers)


@pytest.fixture
def second_customer(portal):
    """A customer of the other subject of the same brand."""
    user = get_user_model().objects.create_user("second", password="pw-second")
    Customer.objects.create(brand=portal.brand, user=user).subjects.add(
        portal.others, through_defaults={"brand": portal.brand})
    client = Client()
    client.force_login(user)
    return client
