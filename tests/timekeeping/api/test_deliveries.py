"""A delivery that failed is dismissed over the API (issue 29, J9): recorded with who and when,
it leaves "Needs attention", and the tick's housekeeping deletes it 30 days after. Times are
Chicago time; the wall clock is fixed where the dismissal is made."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.test import Client

from timekeeping.access import keys
from timekeeping.attention import lists
from timekeeping.basics import wallclock
from timekeeping.models import Brand, Delivery, Dismissal, Record
from timekeeping.tick import phases
from timekeeping.timers import records

pytestmark = pytest.mark.django_db
NOW = datetime(2027, 3, 9, 8, 30, tzinfo=ZoneInfo("America/Chicago"))


def _failed(brand: Brand, key: str = "reminder") -> Delivery:
    return Delivery.objects.create(brand=brand, channel="email", idempotency_key=key,
                                   payload={"subject": "Your reminder"}, state="failed",
                                   attempts=5, next_attempt=NOW, created=NOW,
                                   last_error="550 no such mailbox")


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _dismiss(client: Client, brand_id: str, delivery_id: str, body=None, **extra):
    with wallclock.fixed(NOW):
        return client.post(f"/api/brands/{brand_id}/deliveries/{delivery_id}/dismiss",
                           body if body is not None else {"reason": "the address is wrong"},
                           content_type="application/json", **extra)


def test_the_owner_dismisses_a_failed_delivery_and_it_leaves_the_list(brand, actors):
    failed = _failed(brand)
    assert [item.row for item in lists.attention(brand, now=NOW).items] == [failed.pk]
    answer = _dismiss(_client(actors["owner"]), brand.pk, failed.pk)
    assert answer.status_code == 200
    owner = records.person(actors["owner"])
    assert answer.json() == {
        "delivery": failed.pk, "reason": "the address is wrong", "dismissed_by": owner,
        "dismissed": "2027-03-09T14:30:00Z", "deleted_after": "2027-04-08T14:30:00Z",
        "said": "Dismissed: it leaves the list, and the reason is kept on the record."}
    kept = Dismissal.objects.get()
    assert (kept.kind, kept.row, kept.by, kept.at) == ("undelivered", failed.pk, owner, NOW)
    assert Record.objects.get(kind="attention.dismissed").data["by"] == owner
    assert lists.attention(brand, now=NOW).items == []
    again = _dismiss(_client(actors["owner"]), brand.pk, failed.pk, {"reason": "twice"})
    assert again.json()["reason"] == "the address is wrong"  # the first dismissal stands
    assert again.json()["said"] == "It was dismissed already."


def test_a_key_dismisses_as_its_brands_manager(brand):
    failed, made = _failed(brand), keys.make(brand=brand, name="ops", by=None, now=NOW)
    answer = _dismiss(Client(), brand.pk, failed.pk,
                      HTTP_AUTHORIZATION=f"Bearer {made.secret}")
    assert answer.status_code == 200
    assert answer.json()["dismissed_by"] == f"key {made.key.id} (ops)"


def test_a_stranger_hears_404_as_for_a_missing_delivery_and_nothing_changes(brand, actors):
    failed = _failed(brand)
    theirs = Brand.objects.create(name="Elsewhere", slug="elsewhere", owner=actors["outsider"])
    stranger = _client(actors["outsider"])
    assert _dismiss(stranger, brand.pk, failed.pk).status_code == 404
    # Their own brand's address with A's delivery: not theirs either.
    other = _dismiss(stranger, theirs.pk, failed.pk)
    missing = _dismiss(stranger, theirs.pk, "dlv_Missing0000000000")
    assert other.status_code == missing.status_code == 404
    assert other.json()["detail"].replace(failed.pk, "<id>") == missing.json()[
        "detail"].replace("dlv_Missing0000000000", "<id>")
    assert not Dismissal.objects.exists() and not Record.objects.exists()


@pytest.mark.parametrize(("body", "field", "rule"), [
    ({}, "reason", "This field is required."),
    ({"reason": "   "}, "reason", "This field may not be blank."),
    ({"reason": "x" * 301}, "reason", "Ensure this field has no more than 300 characters."),
    ({"reason": "fine", "state": "gone"}, "state", "is not a field here"),
])
def test_bad_input_is_named_and_changes_nothing(brand, actors, body, field, rule):
    failed = _failed(brand)
    answer = _dismiss(_client(actors["owner"]), brand.pk, failed.pk, body)
    assert answer.status_code == 400
    assert rule in " ".join(answer.json()[field])
    assert not Dismissal.objects.exists()


def test_a_delivery_that_was_sent_is_not_dismissed(brand, actors):
    sent = _failed(brand)
    Delivery.objects.filter(pk=sent.pk).update(state="succeeded", delivered=NOW)
    answer = _dismiss(_client(actors["owner"]), brand.pk, sent.pk)
    assert answer.status_code == 400
    assert answer.json() == {"row": ["it was sent, so there is nothing to dismiss"]}
    assert not Dismissal.objects.exists()


@pytest.mark.django_db(transaction=True)  # a tick a month on runs the purge schedule's thread
def test_the_tick_deletes_a_dismissed_delivery_30_days_after(brand, actors):
    failed, other = _failed(brand), _failed(brand, "other")
    _dismiss(_client(actors["owner"]), brand.pk, failed.pk)
    for days, left in ((29, {failed.pk, other.pk}), (31, {other.pk})):
        with wallclock.fixed(NOW):
            phases.run_once(now=NOW + timedelta(days=days))
        assert set(Delivery.objects.values_list("pk", flat=True)) == left
    assert not Dismissal.objects.exists()


def test_the_outbox_is_listed_newest_first_with_what_was_dismissed(brand, actors):
    failed = _failed(brand)
    waiting = Delivery.objects.create(brand=brand, channel="email", idempotency_key="later",
                                      payload={"subject": "Next week", "to": ["a@b.test"],
                                               "body": "private words"},
                                      next_attempt=NOW, created=NOW + timedelta(minutes=5),
                                      last_error="timeout\n421 try again later")
    owner = _client(actors["owner"])
    listed = owner.get("/api/deliveries").json()
    assert [row["id"] for row in listed["results"]] == [waiting.pk, failed.pk]
    first = listed["results"][0]
    assert (first["subject"], first["state"], first["last_error"], first["dismissed"]) == (
        "Next week", "pending", "421 try again later", False)
    assert "private words" not in str(listed) and "a@b.test" not in str(listed)
    _dismiss(owner, brand.pk, failed.pk)
    failed_only = owner.get("/api/deliveries", {"state": "failed"}).json()["results"]
    assert [(row["id"], row["dismissed"]) for row in failed_only] == [(failed.pk, True)]
    bad = owner.get("/api/deliveries", {"state": "lost"})
    assert bad.status_code == 400 and "state" in bad.json()
    # A stranger keeps no brand: their list is empty, and naming this brand is refused.
    stranger = _client(actors["outsider"])
    assert stranger.get("/api/deliveries").json()["count"] == 0
    assert stranger.get("/api/deliveries", {"brand": brand.pk}).status_code == 400
