"""A brand's webhook endpoints over the API (issue 30): made with the secret shown once,
listed, changed, rotated (both secrets sign for a day), turned off and on again (what it
missed sent again), replayed over a span, removed; a test event and a resent event reach the
receiver on loopback after the outbox's sweep; the delivery log shows each attempt and the
next planned ones. Only the brand's owner reaches them; anyone else of another brand hears 404
as for an endpoint that does not exist. Times are Lisbon's (an hour ahead of UTC in July),
fixed; the sweeps that sign run on the real clock, as the receiver's library checks it."""

import json
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from standardwebhooks.webhooks import Webhook

from timekeeping.access import keys
from timekeeping.basics import wallclock
from timekeeping.models import Brand, Delivery, Record, WebhookAttempt, WebhookEndpoint
from timekeeping.timers import outbox, records
from timekeeping.webhooks import endpoints, sending

pytestmark = pytest.mark.django_db
NOW = datetime(2027, 7, 14, 9, 30, tzinfo=ZoneInfo("Europe/Lisbon"))


@pytest.fixture
def owner(actors):
    client = Client()
    client.force_login(actors["owner"])
    return client


def _base(brand) -> str:
    return f"/api/brands/{brand.pk}/webhooks"


def _post(client, path, body=None, at=NOW, **extra):
    with wallclock.fixed(at):
        return client.post(path, json.dumps(body or {}), content_type="application/json",
                           **extra)


def _make(client, brand, **fields):
    answer = _post(client, _base(brand), {"url": "https://hooks.example.test/in", **fields})
    assert answer.status_code == 201, answer.content
    return answer.json()


def _event(brand, kind="job.opened", written=NOW, **fields) -> Record:
    """An event written at a known instant (the database would stamp its own)."""
    return Record.objects.create(kind=kind, brand=brand, instant=written, written=written,
                                 data=fields)


def test_the_owner_makes_an_endpoint_and_sees_its_secret_only_then(brand, owner):
    made = _make(owner, brand, description="our ledger", types=["date.missed", "job.opened"])
    assert made["secret"].startswith("whsec_") and made["enabled"] is True
    assert made["types"] == ["date.missed", "job.opened"] and made["test_clocks"] is False
    assert made["url"] == "https://hooks.example.test/in" and made["brand"] == brand.pk
    listed = owner.get(_base(brand)).json()["webhooks"]
    read = owner.get(f"{_base(brand)}/{made['id']}").json()
    changed = owner.patch(f"{_base(brand)}/{made['id']}", {"description": "ledger"},
                          content_type="application/json").json()
    assert [each["id"] for each in listed] == [made["id"]]
    for answer in (listed[0], read, changed):
        assert "secret" not in answer and made["secret"] not in json.dumps(answer)
    assert changed["description"] == "ledger" and changed["types"] == made["types"]


def test_an_address_into_our_network_is_refused_naming_url(brand, owner, settings):
    settings.WEBHOOK_ALLOW_HTTP = True  # the scheme allowed: the address itself is refused
    for url in ("http://169.254.169.254/latest/meta-data/", "https://10.0.0.8/hook",
                "https://[::ffff:127.0.0.1]/x", "ftp://hooks.example.test/"):
        answer = _post(owner, _base(brand), {"url": url})
        assert answer.status_code == 400 and list(answer.json()) == ["url"], (url, answer.json())
    settings.WEBHOOK_ALLOW_HTTP = False
    plain = _post(owner, _base(brand), {"url": "http://hooks.example.test/"})
    assert plain.status_code == 400 and "https" in plain.json()["url"][0]
    assert not WebhookEndpoint.objects.exists()


def test_bad_fields_are_named_and_nothing_changes(brand, owner):
    made = _make(owner, brand)
    path = f"{_base(brand)}/{made['id']}"
    cases = [({"types": ["date.exploded"]}, "types"), ({"url": ""}, "url"),
             ({"description": "x" * 201}, "description"), ({"colour": "red"}, "colour"),
             ({"url": "https://192.168.1.1/"}, "url"), ({"types": ["x"] * 65}, "types")]
    for body, field in cases:
        answer = owner.patch(path, json.dumps(body), content_type="application/json")
        assert answer.status_code == 400 and field in answer.json(), (body, answer.json())
    assert owner.get(path).json() == {k: v for k, v in made.items() if k != "secret"}
    kept = WebhookEndpoint.objects.get()
    assert (kept.url, kept.types, kept.description) == (made["url"], [], "")


def test_rotating_gives_a_new_secret_and_both_sign_for_a_day(brand, owner, receiver):
    made = _make(owner, brand, url=receiver.url)
    rotated = _post(owner, f"{_base(brand)}/{made['id']}/rotate")
    assert rotated.status_code == 200
    new = rotated.json()["secret"]
    assert new.startswith("whsec_") and new != made["secret"]
    read = owner.get(f"{_base(brand)}/{made['id']}")
    assert read.json()["rotating_until"] is not None and "secret" not in read.json()
    test = _post(owner, f"{_base(brand)}/{made['id']}/test")
    assert test.status_code == 202
    outbox.sweep(now=NOW)
    (headers, body), = receiver.requests
    assert len(headers["webhook-signature"].split()) == 2
    for secret in (made["secret"], new):
        assert Webhook(secret).verify(body, headers)["type"] == "webhook.test"


def test_a_test_event_reaches_the_receiver_and_the_log_shows_the_attempt(brand, owner,
                                                                         receiver):
    receiver.statuses = [200]
    made = _make(owner, brand, url=receiver.url, types=["date.kept"])
    queued = _post(owner, f"{_base(brand)}/{made['id']}/test").json()
    assert outbox.sweep(now=NOW).sent == 1
    (headers, body), = receiver.requests
    assert headers["webhook-id"] == queued["event"]
    assert Webhook(made["secret"]).verify(body, headers)["brand"] == brand.pk
    log = owner.get(f"{_base(brand)}/{made['id']}/deliveries").json()
    assert log["count"] == 1
    entry, = log["results"]
    assert (entry["id"], entry["type"], entry["state"], entry["tries"]) == (
        queued["delivery"], "webhook.test", "succeeded", 1)
    attempt, = entry["attempts"]
    assert (attempt["status"], attempt["response"], attempt["refused"]) == (200, "ok", False)
    assert attempt["duration_ms"] >= 0 and entry["planned"] == []


def test_resend_sends_one_event_again_with_its_own_id(brand, owner, receiver):
    made = _make(owner, brand, url=receiver.url)
    with wallclock.fixed(NOW):
        records.write("job.opened", brand=brand, instant=NOW, job="job_Fernhill00000001",
                      data={})
    event = Record.objects.get(kind="job.opened")
    outbox.sweep(now=NOW)
    again = _post(owner, f"{_base(brand)}/{made['id']}/resend", {"event": event.pk})
    assert again.status_code == 202 and again.json()["event"] == event.pk
    outbox.sweep(now=NOW)
    assert [headers["webhook-id"] for headers, _ in receiver.requests] == [event.pk, event.pk]
    assert [json.loads(body)["type"] for _, body in receiver.requests] == ["job.opened"] * 2
    note = _event(brand, kind="note.kept")
    for body in ({"event": note.pk}, {"event": "rec_Missing0000000000"}, {"event": "x"}):
        answer = _post(owner, f"{_base(brand)}/{made['id']}/resend", body)
        assert answer.status_code == 400 and list(answer.json()) == ["event"]


def test_the_log_shows_a_failing_delivery_and_its_planned_attempts(brand, owner, receiver):
    receiver.statuses = [500]
    made = _make(owner, brand, url=receiver.url)
    _post(owner, f"{_base(brand)}/{made['id']}/test")
    outbox.sweep(now=NOW)
    entry, = owner.get(f"{_base(brand)}/{made['id']}/deliveries").json()["results"]
    assert entry["state"] == "pending" and entry["tries"] == 1
    assert entry["attempts"][0]["status"] == 500 and "500" in entry["last_error"]
    delivery = Delivery.objects.get()
    planned = [datetime.fromisoformat(at) for at in entry["planned"]]
    assert planned[0] == delivery.next_attempt and len(planned) == sending.ATTEMPTS - 1
    assert planned[1] - planned[0] == sending.SCHEDULE[1]
    failed = owner.get(f"{_base(brand)}/{made['id']}/deliveries", {"state": "failed"})
    assert failed.json()["count"] == 0
    # Newest first: a second test event heads the log.
    with wallclock.fixed(NOW + timedelta(minutes=1)):
        endpoints.send_test(WebhookEndpoint.objects.get())
    log = owner.get(f"{_base(brand)}/{made['id']}/deliveries").json()["results"]
    assert [each["tries"] for each in log] == [0, 1]


def test_off_then_on_again_sends_what_it_missed(brand, owner):
    made = _make(owner, brand)
    off = _post(owner, f"{_base(brand)}/{made['id']}/disable")
    assert off.json()["enabled"] is False and off.json()["disabled"] == "owner"
    with wallclock.fixed(NOW + timedelta(hours=1)):
        missed = [_event(brand, written=NOW + timedelta(hours=1, minutes=n)) for n in range(3)]
    assert not Delivery.objects.exists()
    on = _post(owner, f"{_base(brand)}/{made['id']}/enable", at=NOW + timedelta(hours=2))
    assert on.status_code == 200
    assert on.json()["sent_again"] == 3 and on.json()["endpoint"]["enabled"] is True
    assert sorted(Delivery.objects.values_list("event", flat=True)) == sorted(
        each.pk for each in missed)


def test_replay_sends_again_what_failed_in_a_bounded_span(brand, owner):
    made = _make(owner, brand, types=["job.opened"])
    inside = _event(brand, written=NOW + timedelta(minutes=5))
    _event(brand, written=NOW + timedelta(days=2))  # after the span
    _event(brand, kind="date.kept", written=NOW + timedelta(minutes=6))  # not a type it hears
    path = f"{_base(brand)}/{made['id']}/replay"
    span = {"since": "2027-07-14T09:00:00+01:00", "until": "2027-07-15T09:00:00+01:00"}
    answer = _post(owner, path, span)
    assert answer.status_code == 200 and answer.json() == {"sent_again": 1}
    assert list(Delivery.objects.values_list("event", flat=True)) == [inside.pk]
    refusals = [({**span, "until": "2027-09-01T00:00:00Z"}, "until"),
                ({**span, "until": span["since"]}, "until"),
                ({**span, "since": "2027-07-14T09:00:00"}, "since"),
                ({**span, "since": "yesterday"}, "since"), ({"since": span["since"]}, "until")]
    for body, field in refusals:
        refused = _post(owner, path, body)
        assert refused.status_code == 400 and field in refused.json(), (body, refused.json())


def test_removing_it_takes_its_log(brand, owner):
    made = _make(owner, brand)
    _post(owner, f"{_base(brand)}/{made['id']}/test")
    with wallclock.fixed(NOW):
        answer = owner.delete(f"{_base(brand)}/{made['id']}")
    assert answer.status_code == 204
    assert owner.get(f"{_base(brand)}/{made['id']}").status_code == 404
    assert not WebhookEndpoint.objects.exists() and not Delivery.objects.exists()
    assert not WebhookAttempt.objects.exists()


def test_only_the_owner_reaches_them_and_a_stranger_hears_404(brand, owner, actors):
    made = _make(owner, brand)
    theirs = Brand.objects.create(name="Elsewhere", slug="elsewhere", owner=actors["outsider"])
    stranger = Client()
    stranger.force_login(actors["outsider"])
    for path in (f"{_base(brand)}/{made['id']}", f"{_base(theirs)}/{made['id']}",
                 f"{_base(brand)}/{made['id']}/deliveries"):
        assert stranger.get(path).status_code == 404
    assert _post(stranger, f"{_base(theirs)}/{made['id']}/rotate").status_code == 404
    own_key = keys.make(brand=brand, name="ops", by=None, now=NOW).secret
    as_key = Client().get(_base(brand), HTTP_AUTHORIZATION=f"Bearer {own_key}")
    assert as_key.status_code == 403  # a key owns nothing
    other_key = keys.make(brand=theirs, name="ops", by=None, now=NOW).secret
    assert Client().get(_base(brand), HTTP_AUTHORIZATION=f"Bearer {other_key}"
                        ).status_code == 404
    assert WebhookEndpoint.objects.get().secret == made["secret"]  # nothing rotated


def test_a_page_of_the_log_costs_the_same_queries_whatever_its_length(brand, owner,
                                                                       receiver):
    receiver.statuses = [500]
    made = _make(owner, brand, url=receiver.url)
    endpoint = WebhookEndpoint.objects.get()
    for n in range(12):
        with wallclock.fixed(NOW + timedelta(seconds=n)):
            endpoints.send_test(endpoint)
    outbox.sweep(now=NOW + timedelta(minutes=1))
    path = f"{_base(brand)}/{made['id']}/deliveries"
    owner.get(path)  # the session read once before counting
    counts = []
    for limit in (1, 12):
        with CaptureQueriesContext(connection) as captured:
            answer = owner.get(path, {"limit": limit})
        assert len(answer.json()["results"]) == limit
        assert all(entry["attempts"] for entry in answer.json()["results"])
        counts.append(len(captured))
    assert counts[0] == counts[1]
