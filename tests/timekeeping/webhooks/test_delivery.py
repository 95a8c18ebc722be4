"""Webhooks delivered (issue 30): a record that is an event goes, through the tick's outbox, to
each endpoint that hears it, signed so the Standard Webhooks library verifies it; retried on
the schedule when the receiver fails; logged; a 410 turns the endpoint off; five days of
failures turn it off and tell the owner; turned on again, it is sent what it missed. The
tax practice's filings are missed on the real clock (in New York, across the autumn's DST
change); the receiver is on loopback; time moves by explicit instants, never by sleeping."""

import copy
import json
from datetime import UTC, datetime, timedelta

import pytest
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from tests.receiver import resolve_into_a_private_network
from timekeeping import clocks, manifests
from timekeeping.basics import wallclock
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import (
    Delivery,
    Record,
    Subject,
    WebhookAttempt,
    WebhookEndpoint,
)
from timekeeping.tick import phases
from timekeeping.timers import outbox, records
from timekeeping.webhooks import endpoints, sending

TAX = json.loads(TAX_MANIFEST.read_text())
OPENED = datetime(2028, 2, 1, 14, tzinfo=UTC)
MISSED = datetime(2028, 4, 20, 14, tzinfo=UTC)  # 10:00 in New York: the 18 April dates lapsed


@pytest.fixture
def practice(brand, actors):
    actors["owner"].email = "owner@example.test"
    actors["owner"].save()
    manifests.load(brand, copy.deepcopy(TAX))
    brand.refresh_from_db()
    return brand


def order(brand, key="11-1111111"):
    with wallclock.fixed(OPENED):
        subject = Subject.objects.create(brand=brand, kind="taxpayer", key=key,
                                         name="Fernhill Tools", zone="America/New_York")
        return clocks.order(brand=brand, service="annual-return", subject=subject,
                            period="2027", input={"jurisdictions": ["US"]})


def endpoint_for(brand, receiver, **fields):
    return endpoints.make(brand, url=receiver.url, **fields)


def sweep(at):
    """The outbox's sweep at an instant of the brand's time; signed at the real time, as the
    receiver's library checks it against its own clock."""
    return outbox.sweep(now=at)


def bodies(receiver):
    return [json.loads(body) for _, body in receiver.requests]


def test_a_missed_filing_reaches_the_endpoint_signed_and_verifiable(practice, receiver):
    made = endpoint_for(practice, receiver, types=["date.missed"])
    job = order(practice)
    with wallclock.fixed(MISSED):
        phases.run_once(now=MISSED, sweep=False)
    assert sweep(MISSED).sent >= 1
    missed = [body for body in bodies(receiver) if body["type"] == "date.missed"]
    assert missed and {body["type"] for body in bodies(receiver)} == {"date.missed"}
    assert {body["data"]["kind"] for body in missed} == {"clock.lapsed", "deadline.late"}
    event = next(body for body in missed if body["data"]["kind"] == "clock.lapsed")
    record = Record.objects.get(pk=event["id"])
    assert record.kind == "clock.lapsed" and event["objects"]["job"] == job.pk
    assert event["objects"]["clock"] == record.data["clock"]
    assert event["subject"] == job.subject_id and event["brand"] == practice.pk
    assert event["occurs_at"] == "2028-04-20T14:00:00Z" and event["version"] == 1
    assert event["link"].endswith(f"/console/{practice.pk}/subjects/{job.subject_id}/")
    assert "was missed" in event["summary"]
    headers, body = next((h, b) for h, b in receiver.requests if h["webhook-id"] == event["id"])
    assert Webhook(made.secret).verify(body, headers) == event
    with pytest.raises(WebhookVerificationError):
        Webhook(endpoints.new_secret()).verify(body, headers)


def test_each_event_goes_once_per_endpoint_whatever_the_sweeps(practice, receiver):
    endpoint_for(practice, receiver)
    endpoint_for(practice, receiver, types=["job.opened"])
    order(practice)
    opened = Record.objects.get(kind="job.opened")
    assert Delivery.objects.filter(event=opened.pk).count() == 2
    sweep(OPENED)
    sweep(OPENED + timedelta(minutes=1))
    assert [b["id"] for b in bodies(receiver)].count(opened.pk) == 2
    assert Delivery.objects.filter(channel="webhook", state="succeeded").count() == len(
        receiver.requests)


def test_an_endpoint_hears_only_its_types_and_no_test_clock_unless_asked(practice, receiver):
    endpoint_for(practice, receiver, types=["subscription.renewed"])
    order(practice)
    assert not Delivery.objects.filter(channel="webhook").exists()


def test_a_failing_receiver_is_retried_on_the_schedule_then_succeeds(practice, receiver):
    receiver.statuses = [500, 502, 200]
    made = endpoint_for(practice, receiver, types=["job.opened"])
    order(practice)
    delivery = Delivery.objects.get(channel="webhook")
    at = OPENED
    sweep(at)
    delivery.refresh_from_db()
    wait = delivery.next_attempt - at
    assert delivery.state == "pending" and timedelta(seconds=4.5) <= wait <= timedelta(
        seconds=5.5)
    at = delivery.next_attempt
    sweep(at)
    delivery.refresh_from_db()
    wait = delivery.next_attempt - at
    assert timedelta(minutes=4.5) <= wait <= timedelta(minutes=5.5)
    assert sweep(delivery.next_attempt).sent == 1
    delivery.refresh_from_db()
    assert delivery.state == "succeeded" and delivery.attempts == 3
    log = list(WebhookAttempt.objects.filter(endpoint=made.endpoint).order_by("at", "id"))
    assert [attempt.status for attempt in log] == [500, 502, 200]
    assert all(attempt.response == "ok" for attempt in log)
    made.endpoint.refresh_from_db()
    assert made.endpoint.failing_since is None


def test_after_the_last_try_the_event_is_failed_for_that_endpoint(practice, receiver):
    receiver.statuses = [500]
    endpoint_for(practice, receiver, types=["job.opened"])
    order(practice)
    delivery = Delivery.objects.get(channel="webhook")
    at = OPENED
    planned = None
    for _ in range(sending.ATTEMPTS):
        sweep(at)
        delivery.refresh_from_db()
        if delivery.state == "pending":
            planned = planned or sending.planned(delivery)
            at = delivery.next_attempt
    assert delivery.state == "failed" and delivery.attempts == 8
    assert len(receiver.requests) == 8
    waits = [later - earlier for earlier, later in zip(planned, planned[1:], strict=False)]
    assert waits == list(sending.SCHEDULE[1:])
    assert at - OPENED > timedelta(hours=25)


def test_a_410_turns_the_endpoint_off_and_tells_the_owner(practice, receiver, mailoutbox):
    receiver.statuses = [410]
    made = endpoint_for(practice, receiver, types=["job.opened"])
    order(practice)
    sweep(OPENED)
    made.endpoint.refresh_from_db()
    assert not made.endpoint.enabled and made.endpoint.disabled == "gone"
    assert Delivery.objects.get(channel="webhook").state == "failed"
    sweep(OPENED + timedelta(minutes=1))
    assert any("have stopped" in message.subject for message in mailoutbox)


def test_a_429_with_retry_after_waits_what_it_asks(practice, receiver):
    receiver.statuses = [429, 200]
    receiver.headers = {"Retry-After": "120"}
    endpoint_for(practice, receiver, types=["job.opened"])
    order(practice)
    sweep(OPENED)
    delivery = Delivery.objects.get(channel="webhook")
    assert delivery.next_attempt - OPENED == timedelta(seconds=120)


def test_five_days_of_failures_turn_it_off_and_turned_on_it_gets_what_it_missed(
        practice, receiver, mailoutbox):
    # The failing spell is timed by the sweeps' instants and the events by when they were
    # written (the database's clock): both real here, as on a live tick.
    began = datetime.now(UTC)
    receiver.statuses = [503]
    made = endpoint_for(practice, receiver, types=["job.opened"])
    with wallclock.fixed(began):
        subject = Subject.objects.create(brand=practice, kind="taxpayer", key="11-1",
                                         name="Fernhill Tools", zone="America/New_York")
        clocks.order(brand=practice, service="annual-return", subject=subject, period="2027",
                     input={"jurisdictions": ["US"]})
    sweep(began)
    # Another event, five days on, fails too: the endpoint has failed every try for 5 days.
    at = began + timedelta(days=5, minutes=1)
    with wallclock.fixed(at):
        subject = Subject.objects.create(brand=practice, kind="taxpayer", key="11-2",
                                         name="Alder Works", zone="America/New_York")
        clocks.order(brand=practice, service="annual-return", subject=subject, period="2027",
                     input={"jurisdictions": ["US"]})
    sweep(at)
    made.endpoint.refresh_from_db()
    assert not made.endpoint.enabled and made.endpoint.disabled == "failing"
    # Its next tries find it off: each of its events is failed for it.
    sweep(at + timedelta(minutes=10))
    assert any("have stopped" in message.subject for message in mailoutbox)
    assert set(Delivery.objects.filter(channel="webhook").values_list(
        "state", flat=True)) == {"failed"}
    receiver.statuses = [200]
    receiver.requests.clear()
    assert endpoints.enable(made.endpoint) == 2
    sweep(at + timedelta(hours=1))
    assert sorted(b["data"]["kind"] for b in bodies(receiver)) == ["job.opened", "job.opened"]
    # What it has is not sent again by a replay of the same time.
    assert endpoints.replay(made.endpoint, since=began - timedelta(days=1),
                            until=datetime.now(UTC) + timedelta(minutes=1)) == 0


def test_during_a_rotation_both_secrets_sign(practice, receiver):
    made = endpoint_for(practice, receiver, types=["job.opened"])
    rotated = endpoints.rotate(made.endpoint)
    assert rotated.secret != made.secret and rotated.secret.startswith("whsec_")
    order(practice)
    sweep(OPENED)
    headers, body = receiver.requests[0]
    assert len(headers["webhook-signature"].split(" ")) == 2
    for secret in (made.secret, rotated.secret):
        Webhook(secret).verify(body, headers)
    # A day on, only the new secret signs.
    now = datetime.now(UTC)
    assert endpoints.signing_secrets(rotated.endpoint, now + timedelta(hours=23)) == [
        rotated.secret, made.secret]
    assert endpoints.signing_secrets(rotated.endpoint, now + timedelta(hours=25)) == [
        rotated.secret]


def test_a_refused_address_is_logged_before_any_connection(practice, settings, monkeypatch):
    settings.WEBHOOK_ALLOW_HOSTS = []
    made = endpoints.make(practice, url="https://hooks.example.test/in", types=["job.opened"])
    asked = resolve_into_a_private_network(monkeypatch)
    order(practice)
    sweep(OPENED)
    attempt = WebhookAttempt.objects.get(endpoint=made.endpoint)
    assert attempt.refused and attempt.status is None and "10.1.2.3" in attempt.error
    assert asked == ["hooks.example.test"]
    assert Delivery.objects.get(channel="webhook").state == "pending"


def test_a_test_event_and_a_resend_keep_the_event_id(practice, receiver):
    made = endpoint_for(practice, receiver, types=["job.opened"])
    order(practice)
    sweep(OPENED)
    opened = Record.objects.get(kind="job.opened")
    endpoints.resend(made.endpoint, opened.pk)
    endpoints.send_test(made.endpoint)
    sweep(OPENED + timedelta(minutes=1))
    ids = [headers["webhook-id"] for headers, _ in receiver.requests]
    assert ids.count(opened.pk) == 2
    test = [b for b in bodies(receiver) if b["type"] == "webhook.test"]
    assert len(test) == 1 and test[0]["id"].startswith("evt_")


def test_a_record_made_outside_a_firing_is_an_event_too(practice, receiver):
    endpoint_for(practice, receiver, types=["schedule.failed"])
    with wallclock.fixed(OPENED):
        records.write("schedule.failed", brand=practice, instant=OPENED,
                      data={"schedule": "nightly", "reason": "boom"})
    sweep(OPENED)
    assert bodies(receiver)[0]["data"] == {"kind": "schedule.failed", "schedule": "nightly",
                                           "reason": "boom"}


def test_an_endpoint_refuses_a_bad_address_naming_the_url(practice):
    for url in ("ftp://example.test/", "http://169.254.169.254/latest",
                "https://[::ffff:10.0.0.1]/", "https://localhost:5432/"):
        with pytest.raises(endpoints.Invalid) as refused:
            endpoints.make(practice, url=url)
        assert refused.value.field == "url"
    assert not WebhookEndpoint.objects.exists()


def test_a_failed_event_about_a_date_due_within_48_hours_tells_the_owner_at_once(
        practice, receiver, mailoutbox):
    receiver.statuses = [500]
    endpoint_for(practice, receiver, types=["date.notice_sent"])
    now = datetime(2028, 4, 16, 14, tzinfo=UTC)
    for n, due in enumerate(("2028-04-17", "2028-04-18", "2028-05-30")):
        records.write("clock.notice", brand=practice, instant=now,
                      data={"clock": f"clk_{n:016d}", "due": due, "what": "filing"})
    sweep(now)
    urgent = [m for m in mailoutbox if "date due soon" in m.subject]
    assert urgent == []  # told through the outbox: the next sweep sends it
    sweep(now + timedelta(seconds=1))
    urgent = [m for m in mailoutbox if "date due soon" in m.subject]
    assert len(urgent) == 1 and urgent[0].to == ["owner@example.test"]  # once an hour at most
    assert "/webhooks/" in urgent[0].body
