"""The console's webhook pages (issue 30, docs/console.md "Webhooks"): the owner adds an
endpoint and sees its secret once, changes it, sends a test event and resends one, turns it
off and on (what it missed sent), replays the failed events between two times, and removes
it after being asked; every delivery shows in its log. The receiver is on loopback; the
outbox's sweep runs as the tick's would. Events are written by the database's clock, so the
tests that replay by time read it as the sweeps do (as tests/timekeeping/webhooks does)."""

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from tests.receiver import resolve_into_a_private_network
from tests.words import engine_words, visible_text
from timekeeping.basics import wallclock
from timekeeping.console import webhook_pages
from timekeeping.models import Delivery, Record, WebhookAttempt, WebhookEndpoint
from timekeeping.timers import outbox, records
from timekeeping.webhooks import catalogue, endpoints, sending

NOW = datetime(2028, 4, 10, 14, tzinfo=UTC)  # 10:00 in New York
NEW_YORK = ZoneInfo("America/New_York")


@pytest.fixture
def owner(desk):
    return desk.clients["owner"]


def made(desk, receiver, **fields):
    return endpoints.make(desk.brand, url=receiver.url, **fields).endpoint


def page_of(desk, endpoint, path=""):
    return desk.url(f"webhooks/{endpoint.pk}/{path}")


def failed_schedule(desk, name="nightly"):
    """An event of the brand: a schedule's run failed (a record outside any firing)."""
    records.write("schedule.failed", brand=desk.brand, instant=datetime.now(UTC),
                  data={"schedule": name, "reason": "boom"})
    return Record.objects.filter(kind="schedule.failed").latest("written")


def typed(instant: datetime) -> str:
    """An instant as a person types it in the brand's zone (a browser's datetime-local)."""
    return instant.astimezone(NEW_YORK).strftime("%Y-%m-%dT%H:%M")


def test_every_event_type_of_the_catalogue_has_a_name_in_words():
    assert set(webhook_pages.TITLES) == {*catalogue.NAMES, catalogue.TEST_TYPE}
    assert engine_words(" ".join(webhook_pages.TITLES.values())) == []


def test_a_refused_address_names_the_field_in_words_and_adds_nothing(desk, owner, receiver):
    answer = owner.post(desk.url("webhooks/add"), {"url": "http://10.0.0.1/",
                                                   "description": "Billing"})
    html = answer.content.decode()
    assert answer.status_code == 400
    assert "Address (URL)" in html and "The address 10.0.0.1" in html
    assert 'class="errorlist"' in html
    assert not WebhookEndpoint.objects.exists()
    assert engine_words(visible_text(html)) == []


def test_the_secret_is_shown_once_and_never_again(desk, owner, receiver):
    assert owner.get(desk.url("webhooks/add")).status_code == 200
    answer = owner.post(desk.url("webhooks/add"), {
        "url": receiver.url, "description": "Billing system",
        "types": ["date.missed", "job.opened"]})
    endpoint = WebhookEndpoint.objects.get(brand=desk.brand)
    html = answer.content.decode()
    assert answer.status_code == 200 and answer["Cache-Control"] == "no-store"
    assert endpoint.secret.startswith("whsec_") and endpoint.secret in html
    assert "shown this once" in html
    assert endpoint.types == ["date.missed", "job.opened"] and not endpoint.test_clocks
    assert engine_words(visible_text(html)) == []
    for path in (desk.url("webhooks/"), page_of(desk, endpoint), desk.url("webhooks/add")):
        seen = owner.get(path).content.decode()
        assert endpoint.secret not in seen
    listed = owner.get(desk.url("webhooks/")).content.decode()
    assert "Billing system" in listed and "Nothing sent yet" in listed
    assert engine_words(visible_text(listed)) == []


def test_none_picked_hears_every_event_and_the_types_change(desk, owner, receiver):
    owner.post(desk.url("webhooks/add"), {"url": receiver.url})
    endpoint = WebhookEndpoint.objects.get(brand=desk.brand)
    assert endpoint.types == []
    assert "It hears every event" in visible_text(owner.get(page_of(desk, endpoint)).content
                                                  .decode())
    answer = owner.post(page_of(desk, endpoint, "change"), {
        "url": receiver.url, "description": "Orders", "types": ["date.kept"],
        "test_clocks": "on"})
    assert answer.status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.types == ["date.kept"] and endpoint.test_clocks
    assert endpoint.description == "Orders"
    page = visible_text(owner.get(page_of(desk, endpoint)).content.decode())
    assert "It hears Date kept, also in test worlds." in page
    # A type that is none, or an address refused, changes nothing.
    refused = owner.post(page_of(desk, endpoint, "change"), {
        "url": "https://127.0.0.2/", "description": "Changed", "types": ["date.kept"]})
    assert refused.status_code == 400 and "Address (URL)" in refused.content.decode()
    assert owner.post(page_of(desk, endpoint, "change"), {
        "url": receiver.url, "types": ["date.eaten"]}).status_code == 400
    endpoint.refresh_from_db()
    assert endpoint.description == "Orders" and endpoint.types == ["date.kept"]


def test_a_new_secret_is_shown_once_and_the_old_one_signs_for_a_day(desk, owner, receiver):
    endpoint = made(desk, receiver)
    old = endpoint.secret
    answer = owner.post(page_of(desk, endpoint, "rotate"))
    endpoint.refresh_from_db()
    html = answer.content.decode()
    assert answer.status_code == 200 and answer["Cache-Control"] == "no-store"
    assert endpoint.secret != old and endpoint.secret in html and old not in html
    assert endpoint.previous_secret == old
    assert "keeps signing beside the new one for 24 hours" in html
    page = owner.get(page_of(desk, endpoint)).content.decode()
    assert endpoint.secret not in page and "The old secret still signs" in page


def test_a_test_event_and_a_resend_are_deliveries_in_the_log(desk, owner, receiver):
    endpoint = made(desk, receiver, description="Billing system")
    event = failed_schedule(desk)
    outbox.sweep()
    # Without JavaScript: the page again, with what happened.
    answer = owner.post(page_of(desk, endpoint, "test"))
    assert answer.status_code == 302
    # With htmx: the sentence in place of the button.
    answer = owner.post(page_of(desk, endpoint, "resend"), {"event": event.pk},
                        HTTP_HX_REQUEST="true")
    assert answer.status_code == 200 and "Sent again" in answer.content.decode()
    assert Delivery.objects.filter(endpoint=endpoint).count() == 3
    outbox.sweep()
    assert [headers["webhook-id"] for headers, _ in receiver.requests].count(event.pk) == 2
    html = owner.get(page_of(desk, endpoint)).content.decode()
    seen = visible_text(html)
    assert html.count("<strong>Schedule failed</strong>") == 2
    assert "<strong>Test event</strong>" in html
    assert "sent again" in seen and seen.count("Delivered: answered 204 No Content") == 3
    assert engine_words(seen) == []
    # A stranger's event, or none, is not sent.
    answer = owner.post(page_of(desk, endpoint, "resend"), {"event": "rec_Missing0000000000"})
    assert answer.status_code == 302
    answer = owner.post(page_of(desk, endpoint, "resend"), {"event": "rec_Missing0000000000"},
                        HTTP_HX_REQUEST="true")
    assert "Nothing was sent. No such event of this brand." in answer.content.decode()
    assert Delivery.objects.filter(endpoint=endpoint).count() == 3


def test_a_failing_delivery_shows_its_tries_and_the_next_ones(desk, owner, receiver):
    receiver.statuses = [500]
    endpoint = made(desk, receiver)
    failed_schedule(desk)
    with wallclock.fixed(NOW):
        outbox.sweep(now=NOW)
        delivery = Delivery.objects.get(endpoint=endpoint)
        html = owner.get(page_of(desk, endpoint)).content.decode()
    seen = visible_text(html)
    assert "Failed: answered 500 Internal Server Error" in seen and "Waiting to be sent." in seen
    assert len(sending.planned(delivery)) == 7
    plain = re.sub(r"<[^>]+>", "", html)
    assert "Next try now; if it keeps failing, then in 5 minutes, in 35 minutes" in plain
    assert "in 27 hours, and after that we stop trying." in plain
    assert "ok" in html  # the first 2 KB of the answer, inside its Details
    assert "Every attempt has failed since" in seen


def test_an_address_refused_at_send_time_is_said_in_words(desk, owner, settings,
                                                          monkeypatch):
    settings.WEBHOOK_ALLOW_HOSTS = []
    endpoint = endpoints.make(desk.brand, url="https://hooks.example.test/in").endpoint

    resolve_into_a_private_network(monkeypatch)  # the name now leads into a private network
    failed_schedule(desk)
    outbox.sweep()
    assert WebhookAttempt.objects.get(endpoint=endpoint).refused
    seen = visible_text(owner.get(page_of(desk, endpoint)).content.decode())
    assert "Not sent: The name hooks.example.test leads to the address 10.1.2.3, which is on " \
           "a private network; webhooks may not reach it." in seen
    assert engine_words(seen) == []


def test_turned_on_again_it_is_sent_what_it_missed_and_says_how_many(desk, owner, receiver):
    endpoint = made(desk, receiver, types=["schedule.failed"])
    assert owner.post(page_of(desk, endpoint, "off")).status_code == 302
    endpoint.refresh_from_db()
    assert not endpoint.enabled
    failed_schedule(desk, "nightly")
    failed_schedule(desk, "weekly")
    assert not Delivery.objects.filter(endpoint=endpoint).exists()
    page = visible_text(owner.get(page_of(desk, endpoint)).content.decode())
    assert "Off" in page and "you turned it off" in page
    answer = owner.post(page_of(desk, endpoint, "on"))
    assert answer.status_code == 302
    said = visible_text(owner.get(answer["Location"]).content.decode())
    assert "2 events it missed are on the way" in said
    outbox.sweep()
    assert sorted(body for _, body in receiver.requests).__len__() == 2


def test_the_failed_events_between_two_times_are_sent_again(desk, owner, receiver):
    receiver.statuses = [500]
    endpoint = made(desk, receiver)
    before = datetime.now(UTC) - timedelta(minutes=2)
    event = failed_schedule(desk)
    delivery = Delivery.objects.get(endpoint=endpoint)
    at = datetime.now(UTC)
    for _ in range(sending.ATTEMPTS):
        outbox.sweep(now=at)
        delivery.refresh_from_db()
        at = delivery.next_attempt
    assert delivery.state == "failed"
    receiver.statuses = [204]
    receiver.requests.clear()
    after = datetime.now(UTC) + timedelta(minutes=2)
    # The end before the start: refused, on the field it names, nothing sent.
    answer = owner.post(page_of(desk, endpoint, "replay"),
                        {"since": typed(after), "until": typed(before)})
    assert answer.status_code == 400
    assert "The end of a replay must come after its start" in answer.content.decode()
    answer = owner.post(page_of(desk, endpoint, "replay"),
                        {"since": typed(before), "until": typed(after)})
    said = visible_text(owner.get(answer["Location"]).content.decode())
    assert "Sent again: 1 event from" in said
    outbox.sweep(now=datetime.now(UTC))
    assert [headers["webhook-id"] for headers, _ in receiver.requests] == [event.pk]


def test_removing_asks_first_then_takes_it_and_its_log(desk, owner, receiver):
    endpoint = made(desk, receiver, description="Billing system")
    endpoints.send_test(endpoint)
    asked = owner.post(page_of(desk, endpoint, "remove"))
    html = asked.content.decode()
    assert asked.status_code == 200 and "Remove the endpoint Billing system?" in html
    assert "cannot be undone" in html and WebhookEndpoint.objects.filter(pk=endpoint.pk).exists()
    answer = owner.post(page_of(desk, endpoint, "remove"), {"confirmed": "yes"})
    assert answer.status_code == 302 and answer["Location"] == desk.url("webhooks/")
    assert not WebhookEndpoint.objects.filter(pk=endpoint.pk).exists()
    assert not Delivery.objects.filter(endpoint_id=endpoint.pk).exists()


def test_only_the_owner_reaches_them_and_strangers_hear_404(desk, receiver):
    endpoint = made(desk, receiver)
    theirs = endpoints.make(desk.other, url=receiver.url).endpoint
    pages = [desk.url("webhooks/"), desk.url("webhooks/add"), page_of(desk, endpoint)]
    controls = [page_of(desk, endpoint, verb) for verb in
                ("change", "test", "resend", "rotate", "off", "on", "replay", "remove")]
    for path in pages:
        assert desk.clients["stranger"].get(path).status_code == 404
        assert desk.clients["manager"].get(path).status_code == 403
        assert desk.clients["viewer"].get(path).status_code == 403
    for path in controls:
        assert desk.clients["stranger"].post(path).status_code == 404
        assert desk.clients["manager"].post(path).status_code == 403
    # Another brand's endpoint, asked through the owner's own brand: not found.
    assert desk.clients["owner"].get(page_of(desk, theirs)).status_code == 404
    assert desk.clients["owner"].post(page_of(desk, theirs, "off")).status_code == 404
    theirs.refresh_from_db()
    assert theirs.enabled
    assert not Delivery.objects.filter(endpoint=endpoint).exists()


def _queries(client, path: str) -> int:
    with CaptureQueriesContext(connection) as asked:
        assert client.get(path).status_code == 200
    return len(asked)


def test_the_log_asks_a_fixed_number_of_queries(desk, owner, receiver,
                                                django_assert_max_num_queries):
    receiver.statuses = [500] * 31 + [204]
    endpoint = made(desk, receiver)
    made(desk, receiver, types=["date.kept"])
    failed_schedule(desk, "first")
    outbox.sweep(now=datetime.now(UTC))
    pages = (page_of(desk, endpoint), desk.url("webhooks/"))
    for path in pages:  # warm: templates compiled
        _queries(owner, path)
    one = {path: _queries(owner, path) for path in pages}
    for n in range(30):
        failed_schedule(desk, f"run {n}")
    outbox.sweep(now=datetime.now(UTC))
    outbox.sweep(now=datetime.now(UTC) + timedelta(minutes=1))
    assert WebhookAttempt.objects.filter(endpoint=endpoint).count() == 62
    for path in pages:  # a full page of the log (25 events, 2 tries each) asks no more
        with django_assert_max_num_queries(one[path]):
            _queries(owner, path)


def test_the_help_page_speaks_plainly_to_each_of_the_brands_people(desk, owner):
    answer = owner.get(desk.url("help/webhooks"))
    assert answer.status_code == 200
    assert engine_words(visible_text(answer.content.decode())) == []
    viewer = desk.clients["viewer"].get(desk.url("help/webhooks")).content.decode()
    assert "The brand's owner adds and looks after its webhooks." in viewer
    assert desk.url("webhooks/") not in viewer


def needs_attention(client, desk) -> str:
    html = client.get(desk.url() + "?test=off").content.decode()
    return html.split('id="attention"')[1].split('id="ahead"')[0]


def test_an_endpoint_turned_off_by_its_receiver_needs_the_owner(desk, owner, receiver):
    receiver.statuses = [410]
    endpoint = made(desk, receiver, description="Billing system", types=["schedule.failed"])
    failed_schedule(desk, "nightly")
    outbox.sweep()
    endpoint.refresh_from_db()
    assert not endpoint.enabled and endpoint.disabled == "gone"
    listed = needs_attention(owner, desk)
    assert "Events no longer go to Billing system" in listed
    assert "its receiver answered that it is gone (410)" in listed
    assert f'href="{page_of(desk, endpoint)}"' in listed
    assert "Turn on and send what it missed" in listed
    assert engine_words(visible_text(listed)) == []
    # A manager reads it, but turning it on is the owner's.
    manager = desk.clients["manager"]
    assert "Events no longer go to Billing system" in needs_attention(manager, desk)
    assert "Turn on and send what it missed" not in needs_attention(manager, desk)
    fields = {"kind": "webhook off", "row": endpoint.pk, "do": "enable"}
    assert manager.post(desk.url("attention/settle"), fields).status_code == 403
    endpoint.refresh_from_db()
    assert not endpoint.enabled
    # The owner turns it on: what it missed goes, and the item leaves the list.
    receiver.statuses = [204]
    answer = owner.post(desk.url("attention/settle"), fields, HTTP_HX_REQUEST="true")
    assert "Turned on: new events go to Billing system again. 1 event it missed is on the " \
           "way." in answer.content.decode()
    endpoint.refresh_from_db()
    assert endpoint.enabled
    assert "Billing system" not in needs_attention(owner, desk)
    outbox.sweep()
    assert len(receiver.requests) == 2  # the 410's try, and the event again
    assert Record.objects.filter(kind="attention.enable").exists()


def test_an_endpoint_its_owner_turned_off_needs_no_one(desk, owner, receiver):
    endpoint = made(desk, receiver, description="Billing system")
    owner.post(page_of(desk, endpoint, "off"))
    assert "Billing system" not in needs_attention(owner, desk)


def test_a_post_without_its_csrf_token_changes_nothing(desk, actors, receiver):
    endpoint = made(desk, receiver)
    client = Client(enforce_csrf_checks=True)
    client.force_login(actors["owner"])
    for verb in ("off", "rotate", "test", "remove"):
        assert client.post(page_of(desk, endpoint, verb), {"confirmed": "yes"}).status_code == 403
    endpoint.refresh_from_db()
    assert endpoint.enabled and not endpoint.previous_secret
    assert not Delivery.objects.filter(endpoint=endpoint).exists()
    token = client.get(page_of(desk, endpoint)).cookies["csrftoken"].value
    assert client.post(page_of(desk, endpoint, "test"), HTTP_X_CSRFTOKEN=token,
                       HTTP_HX_REQUEST="true").status_code == 200
    assert client.post(page_of(desk, endpoint, "off"),
                       {"csrfmiddlewaretoken": token}).status_code == 302
    endpoint.refresh_from_db()
    assert not endpoint.enabled
