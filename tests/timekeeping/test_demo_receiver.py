"""The demo's own webhook receiver (issue 30): it checks a delivery's Standard Webhooks
signature with the `standardwebhooks` library against its endpoint's secrets and keeps what
arrived (the newest 500 of a brand); its page lists what arrived for the brands the signed-in
person owns; both answer 404 unless DEBUG is on. The demo points an endpoint of each of its
brands at it.

A delivery is signed by the real sender: the outbox sweeps it to the loopback `receiver`
fixture, and what that was sent is posted to the demo receiver as it came. The sweep signs
at the real time, as the library checks the timestamp against its own clock."""

import io
import json
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from timekeeping.basics import wallclock
from timekeeping.demo import RECEIVER_AT
from timekeeping.models import Brand, Delivery, ReceivedWebhook, WebhookEndpoint
from timekeeping.timers import outbox, records
from timekeeping.webhooks import endpoints

# A Sunday morning in Auckland (NZDT): the brand's schedule failed overnight.
AT = datetime(2027, 3, 14, 9, 30, tzinfo=ZoneInfo("Pacific/Auckland"))
# Before any post arrives: the receiver keeps what arrives at the wall clock's time.
LONG_AGO = datetime(2025, 1, 1, tzinfo=ZoneInfo("Pacific/Auckland"))


@pytest.fixture
def debug(settings):
    settings.DEBUG = True


@pytest.fixture
def owner(actors):
    client = Client()
    client.force_login(actors["owner"])
    return client


def delivered(brand, receiver, *, secret_of=None):
    """A schedule's failure, sent by the outbox to the loopback receiver: (endpoint, the
    headers and body it was sent)."""
    made = endpoints.make(brand, url=receiver.url, types=["schedule.failed"])
    with wallclock.fixed(AT):
        records.write("schedule.failed", brand=brand, instant=AT,
                      data={"schedule": "nightly-sync", "run": 7,
                            "reason": "The books service did not answer."})
    outbox.sweep(now=AT + timedelta(minutes=1))
    headers, body = receiver.requests[-1]
    return made.endpoint, headers, body


def post(client, endpoint_id, headers, body):
    return client.post(f"/demo/receiver/{endpoint_id}/", data=body,
                       content_type="application/json",
                       headers={name: headers[name] for name in
                                ("webhook-id", "webhook-timestamp", "webhook-signature")})


@pytest.mark.usefixtures("debug")
def test_it_verifies_a_real_signed_delivery_and_keeps_it(brand, receiver, client):
    endpoint, headers, body = delivered(brand, receiver)
    answer = post(client, endpoint.pk, headers, body)
    assert answer.status_code == 200 and answer.json() == {"verified": True, "again": False}
    kept = ReceivedWebhook.objects.get()
    assert (kept.brand_id, kept.endpoint_id, kept.type) == (brand.pk, endpoint.pk,
                                                            "schedule.failed")
    assert kept.webhook_id == headers["webhook-id"] == json.loads(body)["id"]
    assert kept.summary == ("The schedule 'nightly-sync' did not run: The books service did "
                            "not answer.")
    # Sent again with its id, it is marked as one that arrived before.
    assert post(client, endpoint.pk, headers, body).json() == {"verified": True, "again": True}


@pytest.mark.usefixtures("debug")
def test_a_bad_signature_is_400_and_keeps_nothing(brand, receiver, client):
    endpoint, headers, body = delivered(brand, receiver)
    altered = body.replace(b"nightly-sync", b"nightly-sink")
    answer = post(client, endpoint.pk, headers, altered)
    assert answer.status_code == 400
    assert answer.json()["error"] == "The signature did not verify: No matching signature found"
    missing = client.post(f"/demo/receiver/{endpoint.pk}/", data=body,
                          content_type="application/json")
    assert missing.status_code == 400
    # Signed with another endpoint's secret: its own secret does not verify it.
    other = endpoints.make(brand, url=receiver.url, types=["job.opened"]).endpoint
    assert post(client, other.pk, headers, body).status_code == 400
    assert not ReceivedWebhook.objects.exists()


@pytest.mark.usefixtures("debug")
def test_during_a_rotation_it_verifies_with_the_new_secret(brand, receiver, client):
    made = endpoints.make(brand, url=receiver.url)
    endpoints.rotate(made.endpoint)
    endpoints.send_test(made.endpoint)
    outbox.sweep(now=AT)
    headers, body = receiver.requests[-1]
    assert len(headers["webhook-signature"].split(" ")) == 2
    assert post(client, made.endpoint.pk, headers, body).status_code == 200
    assert ReceivedWebhook.objects.get().type == "webhook.test"


@pytest.mark.usefixtures("debug")
def test_it_keeps_the_newest_500_of_a_brand(brand, receiver, client):
    endpoint, headers, body = delivered(brand, receiver)
    ReceivedWebhook.objects.bulk_create([
        ReceivedWebhook(brand=brand, endpoint=endpoint, webhook_id=f"old-{n}", type="date.kept",
                        body="{}", received=LONG_AGO - timedelta(minutes=n))
        for n in range(500)])
    assert post(client, endpoint.pk, headers, body).status_code == 200
    assert ReceivedWebhook.objects.filter(brand=brand).count() == 500
    assert not ReceivedWebhook.objects.filter(webhook_id="old-499").exists()
    assert ReceivedWebhook.objects.filter(webhook_id=headers["webhook-id"]).exists()


@pytest.mark.usefixtures("debug")
def test_its_page_lists_what_arrived_for_the_owners_brands_alone(brand, actors, receiver,
                                                                 client, owner):
    endpoint, headers, body = delivered(brand, receiver)
    post(client, endpoint.pk, headers, body)
    page = owner.get("/demo/receiver/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "The schedule &#x27;nightly-sync&#x27; did not run" in text
    other = Brand.objects.create(name="Other Books", slug="other", owner=actors["outsider"])
    theirs = Client()
    theirs.force_login(actors["outsider"])
    assert other and "nightly-sync" not in theirs.get("/demo/receiver/").content.decode()
    nobody = Client()
    nobody.force_login(get_user_model().objects.create_user("kim", password="pw"))
    assert nobody.get("/demo/receiver/").status_code == 404
    assert client.get("/demo/receiver/").status_code == 302  # to sign in


def test_with_debug_off_every_door_of_it_is_404(brand, receiver, client, owner, settings):
    settings.DEBUG = True
    endpoint, headers, body = delivered(brand, receiver)
    settings.DEBUG = False
    assert post(client, endpoint.pk, headers, body).status_code == 404
    assert owner.get("/demo/receiver/").status_code == 404
    assert not ReceivedWebhook.objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("debug", "drop_venue_tables")
def test_the_demo_points_an_endpoint_of_each_brand_at_its_receiver(settings):
    settings.WEBHOOK_ALLOW_HTTP, settings.WEBHOOK_ALLOW_HOSTS = True, ["127.0.0.1"]
    out = io.StringIO()
    call_command("demo", stdout=out)
    call_command("demo", stdout=io.StringIO())  # once per brand, however often it loads
    made = WebhookEndpoint.objects.order_by("brand__slug")
    assert [endpoint.brand.slug for endpoint in made] == ["demo", "demo-tax", "demo-venue"]
    for endpoint in made:
        assert endpoint.url == f"{RECEIVER_AT}/demo/receiver/{endpoint.pk}/"
        assert endpoint.enabled and endpoint.test_clocks and endpoint.types == []
        test = Delivery.objects.get(endpoint_id=endpoint.pk, payload__has_key="test")
        assert test.state == Delivery.State.PENDING
    assert f"arrive at {RECEIVER_AT}/demo/receiver/" in out.getvalue()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("debug", "drop_venue_tables")
def test_without_the_settings_the_demo_says_which_would_let_its_events_through(settings):
    settings.WEBHOOK_ALLOW_HTTP, settings.WEBHOOK_ALLOW_HOSTS = False, []
    out = io.StringIO()
    call_command("demo", stdout=out)
    assert not WebhookEndpoint.objects.exists()
    assert "set WEBHOOK_ALLOW_HTTP=true and WEBHOOK_ALLOW_HOSTS=127.0.0.1" in out.getvalue()
