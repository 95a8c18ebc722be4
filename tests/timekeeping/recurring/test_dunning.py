"""Collecting a plan's charge (place 8) and dunning an unpaid renewal: retries on the stated
days, then frozen allowances and held mints, and back when the payment is recorded, on a test
clock in New York across the start of daylight saving."""

import html
from datetime import UTC, datetime

import pytest
from django.test import Client

from money import ledger
from timekeeping.models import Customer, Delivery, Job, Record, Subject, Subscription, Timer
from timekeeping.recurring import plans
from timekeeping.tick import test_clocks

from .test_plans import document


def dunned(catch_up: str = "none") -> dict:
    found = document(catch_up=catch_up)
    found["services"]["plan"]["price"]["dunning"] = ["3d", "7d", "14d"]
    found["services"]["question"] = {"subject": {"kind": "client"}, "steps": {"answer": {}}}
    found["services"]["plan"]["on"]["event"] = {"question.asked": {"order": "question"}}
    return found


@pytest.fixture
def on_plan(brand, actors):
    from timekeeping import manifests
    actors["owner"].email = "owner@example.test"
    actors["owner"].save()
    manifests.load(brand, dunned())
    march = test_clocks.create(brand=brand, name="dunning",
                               frozen_time=datetime(2027, 3, 1, 14, tzinfo=UTC))
    subject = Subject.objects.create(brand=brand, kind="client", key="1", name="Harbor",
                                     zone="America/New_York", test_clock=march,
                                     contact_email="books@harbor.example")
    subscription = plans.subscribe(subject=subject, service="plan")
    api = Client()
    api.force_login(actors["owner"])
    return subscription, march, api


def pay(api, subscription, amount, currency="USD"):
    return api.post(f"/api/subscriptions/{subscription.pk}/payments",
                    {"amount": amount, "currency": currency}, content_type="application/json")


def test_a_paid_renewal_is_collected_and_nothing_is_dunned(on_plan):
    subscription, march, api = on_plan
    assert pay(api, subscription, 9900).status_code == 201
    test_clocks.advance(march, to=datetime(2027, 3, 2, 14, tzinfo=UTC))
    collected = Timer.objects.get(key=f"{subscription.pk}:collect:1:0")
    assert collected.state == Timer.State.FIRED
    assert not Record.objects.filter(kind="renewal.unpaid").exists()
    brand = subscription.brand_id
    assert ledger.balance(f"{brand}:owed:{subscription.subject_id}", brand=brand) == 0
    assert ledger.balance(f"{brand}:received:USD", brand=brand) == 9900


def test_an_unpaid_renewal_is_retried_then_frozen_and_a_payment_releases_it(on_plan, actors):
    subscription, march, api = on_plan
    assert pay(api, subscription, 9900).status_code == 201  # cycle 1 paid
    # Cycle 2 renews on 1 April at 09:00 New York, daylight time now: 13:00Z. Unpaid.
    test_clocks.advance(march, to=datetime(2027, 4, 14, 12, tzinfo=UTC))
    unpaid = Record.objects.filter(kind="renewal.unpaid").order_by("instant")
    assert [(r.instant, r.data["attempt"]) for r in unpaid] == [
        (datetime(2027, 4, 1, 13, tzinfo=UTC), 0),
        (datetime(2027, 4, 4, 13, tzinfo=UTC), 1),
        (datetime(2027, 4, 8, 13, tzinfo=UTC), 2)]
    assert unpaid[0].data["owed"] == "$99.00"
    assert Subscription.objects.get(pk=subscription.pk).frozen_since is None
    # Needs attention says the dunning is under way, in the test clock's own world.
    attention = html.unescape(api.get(f"/console/{subscription.brand_id}/",
                                      {"test": march.pk}).content.decode())  # test mode
    assert ("A plan's renewal (cycle 2) is unpaid: reminder 3 is out, and if the last one goes "
            "unpaid the plan goes on hold") in attention
    assert f"subscription {subscription.pk} · dunning retry 3" in attention  # under Details
    # Its time is of the test clock's world (14 Apr, 12:00Z), not the real clock's.
    assert 'title="Thu 15 Apr 2027, 09:00 EDT">in 25 hours</time>' in attention
    # The April mint was not held: the subscription was not frozen yet.
    assert Job.objects.filter(subject=subscription.subject, period="2027-04").exists()
    # Emails on a test clock reach only the owner, saying it is a practice run.
    told = Delivery.objects.filter(payload__subject__startswith="Practice run: Unpaid")
    assert told.count() == 3 and {d.payload["to"][0] for d in told} == {"owner@example.test"}

    test_clocks.advance(march, to=datetime(2027, 5, 5, 12, tzinfo=UTC))
    frozen = Record.objects.get(kind="subscription.frozen")
    assert frozen.instant == datetime(2027, 4, 15, 13, tzinfo=UTC)  # 14 days after renewal
    # The May mint is held, not lost; the event is refused naming the rule.
    mint = Timer.objects.get(kind="schedule", payload__period="2027-05")
    assert mint.state == Timer.State.HELD
    assert not Job.objects.filter(subject=subscription.subject, period="2027-05").exists()
    event = api.post(f"/api/subjects/{subscription.subject_id}/events",
                     {"event": "question.asked", "key": "Q-1"}, content_type="application/json")
    assert event.status_code == 400 and "frozen" in event.json()["event"][0]
    # The console's needs attention lists the lapse.
    console = api.get(f"/console/{subscription.brand_id}/", {"test": march.pk}).content.decode()
    assert "allowances are paused" in console
    assert "new work waits until it is paid (1 piece of work wait)" in console  # May's
    page = api.get(f"/console/{subscription.brand_id}/subjects/{subscription.subject_id}/",
                   {"test": march.pk})
    said = html.unescape(page.content.decode())
    assert "$198.00 owed" in said and "on hold since Thu 15 Apr 2027" in said
    buyer = Client()
    buyer.force_login(actors["buyer"])
    Customer.objects.create(brand=subscription.brand, user=actors["buyer"]).subjects.add(
        subscription.subject, through_defaults={"brand": subscription.brand})
    mine = buyer.get(f"/portal/subjects/{subscription.subject_id}/").content.decode()
    assert "$198.00 owed" in mine and "on hold since Thu 15 Apr 2027" in mine

    # Cycle 3 renewed on 1 May too: 198.00 owed. A part payment keeps it frozen.
    shown = api.get(f"/api/subscriptions/{subscription.pk}").json()
    assert shown["owed"] == 19800 and shown["paid_through"] == 1 and shown["frozen_since"]
    assert pay(api, subscription, 9900).status_code == 201
    assert Subscription.objects.get(pk=subscription.pk).frozen_since is not None
    # The rest through the console's control, typed as money, the same function as the API.
    control = (f"/console/{subscription.brand_id}/subjects/{subscription.subject_id}/plans/"
               f"{subscription.pk}/pay")
    refused = api.post(control, {"amount": "99.001"}, follow=True).content.decode()
    assert "Not recorded: write the amount received in USD, such as 198.00." in refused
    said = api.post(control, {"amount": "99.00"}, follow=True).content.decode()
    assert "Recorded: $99.00 on the plan; it is paid up." in said
    paid = api.get(f"/api/subscriptions/{subscription.pk}")
    assert paid.json()["frozen_since"] is None
    assert paid.json()["owed"] == 0 and paid.json()["paid_through"] == 3
    # Paid up: no retry is left to look again (cycles 2 and 3's ended with the payment).
    assert not Timer.objects.filter(kind="money", state="armed", payload__attempt__gt=0).exists()
    settled = api.get(f"/console/{subscription.brand_id}/", {"test": march.pk}).content.decode()
    assert "of its dunning" not in settled and "allowances are frozen" not in settled
    # The held mint fires at the next tick and mints, though catch_up none skips a gap.
    test_clocks.advance(march, to=datetime(2027, 5, 5, 12, 1, tzinfo=UTC))
    assert Job.objects.filter(subject=subscription.subject, period="2027-05").exists()
    assert Record.objects.filter(kind="subscription.unfrozen").count() == 1
    again = api.post(f"/api/subjects/{subscription.subject_id}/events",
                     {"event": "question.asked", "key": "Q-1"}, content_type="application/json")
    assert again.status_code == 201, again.json()


@pytest.mark.parametrize(("amount", "currency", "field"), [
    (9901, "USD", "amount"),  # more than is owed
    (0, "USD", "amount"),
    (100, "EUR", "currency"),
    (100, "usd", "currency"),
])
def test_a_payment_is_refused_naming_the_field_and_changes_nothing(on_plan, amount, currency,
                                                                   field):
    subscription, _, api = on_plan
    answer = pay(api, subscription, amount, currency)
    assert answer.status_code == 400 and field in answer.json()
    assert Subscription.objects.get(pk=subscription.pk).paid == 0
    brand = subscription.brand_id
    assert ledger.balance(f"{brand}:received:USD", brand=brand) == 0
