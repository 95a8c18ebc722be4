"""The tick's housekeeping prunes spent one-time form tokens (issue 27) a day after they were
spent: a form is posted again within moments (a double click), not a day later. Times are
Chicago time."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib.sessions.models import Session

from timekeeping.attention import settling
from timekeeping.basics import wallclock
from timekeeping.models import (
    ApiKey,
    Delivery,
    Dismissal,
    Invitation,
    Record,
    SpentToken,
    Subject,
)
from timekeeping.tick import phases

pytestmark = pytest.mark.django_db
NOW = datetime(2027, 6, 1, 9, tzinfo=ZoneInfo("America/Chicago"))


def test_the_tick_removes_tokens_spent_more_than_a_day_ago():
    SpentToken.objects.bulk_create(
        [SpentToken(token=f"old-{n}", spent=NOW - timedelta(days=1, minutes=n + 1))
         for n in range(3)]
        + [SpentToken(token="recent", spent=NOW - timedelta(hours=23))])
    with wallclock.fixed(NOW):
        result = phases.run_once(now=NOW)
    assert result.housekeeping.deleted == {"spent form tokens": 3}
    assert list(SpentToken.objects.values_list("token", flat=True)) == ["recent"]


def test_a_token_spent_a_minute_before_the_tick_is_kept():
    with wallclock.fixed(NOW):
        SpentToken.objects.create(token="just-now")
        phases.run_once(now=NOW + timedelta(minutes=1))
    assert SpentToken.objects.filter(token="just-now", spent=NOW).exists()


# -- each store at its age (issue 29, J9) --------------------------------------------------------
# Each store is asked a day before its age (kept) and a day after (gone), through the tick, its
# age measured from the tick's instant: the wall clock stands still at NOW throughout. A tick a
# month on runs the hourly purge schedule in a thread of its own: these tests commit.
DAYS_ON = pytest.mark.django_db(transaction=True)

def _tick(at: datetime):
    with wallclock.fixed(NOW):
        return phases.run_once(now=at).housekeeping


def _key(brand, name: str, revoked: datetime | None) -> ApiKey:
    return ApiKey.objects.create(brand=brand, name=name, digest=f"digest-{name}",
                                 created=NOW - timedelta(days=90), revoked=revoked)


@DAYS_ON
def test_revoked_api_keys_are_deleted_30_days_after_they_were_revoked(brand):
    _key(brand, "live", None)
    _key(brand, "revoked", NOW)
    assert _tick(NOW + timedelta(days=29)).deleted == {}
    assert set(ApiKey.objects.values_list("name", flat=True)) == {"live", "revoked"}
    assert _tick(NOW + timedelta(days=31)).deleted == {"revoked API keys": 1}
    assert list(ApiKey.objects.values_list("name", flat=True)) == ["live"]


@DAYS_ON
def test_invitations_are_deleted_30_days_after_they_were_used_or_expired(brand):
    subject = Subject.objects.create(brand=brand, kind="taxpayer", key="1", name="Juniper Labs")

    def invite(email, expires, accepted=None):
        Invitation.objects.create(brand=brand, subject=subject, email=email, digest=email,
                                  expires=expires, accepted=accepted, created=NOW)

    invite("open@example.com", NOW + timedelta(days=60))
    invite("expired@example.com", NOW)
    invite("used@example.com", NOW + timedelta(days=60), accepted=NOW)
    assert _tick(NOW + timedelta(days=29)).deleted == {}
    assert _tick(NOW + timedelta(days=31)).deleted == {"used or expired invitations": 2}
    assert list(Invitation.objects.values_list("email", flat=True)) == ["open@example.com"]


@DAYS_ON
def test_ended_sessions_are_cleared_as_clearsessions_would(db):
    for name, ends in (("ended", NOW - timedelta(minutes=1)), ("live", NOW + timedelta(days=1))):
        Session.objects.create(session_key=name, session_data="", expire_date=ends)
    assert _tick(NOW).deleted == {"ended sessions": 1}
    assert list(Session.objects.values_list("session_key", flat=True)) == ["live"]


def _failed(brand, key: str) -> Delivery:
    return Delivery.objects.create(brand=brand, channel="email", idempotency_key=key,
                                   payload={"subject": "Your reminder"}, state="failed",
                                   attempts=5, next_attempt=NOW, created=NOW)


@DAYS_ON
def test_a_dismissed_delivery_is_deleted_30_days_after_its_dismissal(brand):
    dismissed, kept = _failed(brand, "dismissed"), _failed(brand, "not-dismissed")
    settling.act(brand, "undelivered", dismissed.pk, "dismiss", reason="wrong address",
                 by="owner", now=NOW)
    assert _tick(NOW + timedelta(days=29)).deleted == {}
    assert _tick(NOW + timedelta(days=31)).deleted == {"dismissed deliveries": 1}
    assert list(Delivery.objects.values_list("pk", flat=True)) == [kept.pk]
    assert not Dismissal.objects.exists()
    assert Record.objects.filter(kind="attention.dismissed").count() == 1  # the record stays


@DAYS_ON
def test_a_dismissed_delivery_sent_again_waits_until_it_is_sent_or_fails(brand):
    again = _failed(brand, "again")
    settling.act(brand, "undelivered", again.pk, "dismiss", reason="wrong address", by="owner",
                 now=NOW)
    Delivery.objects.filter(pk=again.pk).update(state="pending",
                                                next_attempt=NOW + timedelta(days=90))
    assert _tick(NOW + timedelta(days=31)).deleted == {}
    assert Delivery.objects.filter(pk=again.pk).exists() and Dismissal.objects.exists()


@DAYS_ON
def test_more_than_a_batch_takes_several_and_a_tick_stops_at_ten(brand):
    ApiKey.objects.bulk_create([ApiKey(brand=brand, name=f"k{n}", digest=f"d{n}",
                                       revoked=NOW - timedelta(days=31)) for n in range(1500)])
    Session.objects.bulk_create([Session(session_key=f"s{n}", session_data="",
                                         expire_date=NOW - timedelta(hours=1))
                                 for n in range(9700)])
    first = _tick(NOW)
    # 9,700 sessions take ten batches, the cap: the keys wait for the next tick.
    assert first.deleted == {"ended sessions": 9700} and not first.finished
    second = _tick(NOW + timedelta(minutes=1))
    assert second.deleted == {"revoked API keys": 1500} and second.finished
    assert not ApiKey.objects.exists() and not Session.objects.exists()
    assert not _tick(NOW + timedelta(minutes=2)).ran  # a finished pass waits an hour


@DAYS_ON
def test_a_webhooks_log_is_kept_30_days_and_an_email_a_day(brand):
    from timekeeping.models import WebhookAttempt
    from timekeeping.webhooks import endpoints

    endpoint = endpoints.make(brand, url="https://hooks.example.test/in",
                              types=["date.kept"]).endpoint
    for key, state in (("sent", "succeeded"), ("failed", "failed"), ("waiting", "pending")):
        delivery = Delivery.objects.create(
            brand=brand, channel="webhook", endpoint=endpoint, event=f"rec_{key}",
            idempotency_key=f"whk:{key}", payload={}, state=state, attempts=1,
            next_attempt=NOW + timedelta(days=90), created=NOW,
            delivered=NOW if state == "succeeded" else None)
        WebhookAttempt.objects.create(brand=brand, endpoint=endpoint, delivery=delivery,
                                      at=NOW, status=200 if state == "succeeded" else 500)
    Delivery.objects.create(brand=brand, channel="email", idempotency_key="mail:sent",
                            payload={}, state="succeeded", next_attempt=NOW, created=NOW,
                            delivered=NOW)
    assert _tick(NOW + timedelta(days=2)).deleted == {"delivered outbox rows": 1}
    assert _tick(NOW + timedelta(days=29)).deleted == {}
    assert _tick(NOW + timedelta(days=31)).deleted == {"webhook deliveries and their log": 2}
    assert list(Delivery.objects.values_list("idempotency_key", flat=True)) == ["whk:waiting"]
    assert WebhookAttempt.objects.count() == 1
