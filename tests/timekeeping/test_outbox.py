from datetime import UTC, datetime, timedelta

from django.core import mail
from django.core.mail import EmailMultiAlternatives

from timekeeping.basics import wallclock
from timekeeping.models import Delivery
from timekeeping.timers import outbox

T0 = datetime(2026, 11, 30, 14, tzinfo=UTC)


def test_it_sends_an_email_once_with_its_idempotency_key(brand):
    with wallclock.fixed(T0):
        outbox.enqueue_email(brand=brand, to=["a@example.test"], subject="Notice",
                             body="Your date is near.", key="notice:clk_1:90d")
        outbox.enqueue_email(brand=brand, to=["a@example.test"], subject="Notice",
                             body="Your date is near.", key="notice:clk_1:90d")
        first = outbox.sweep()
        second = outbox.sweep()
    assert (first.sent, second.sent) == (1, 0)
    assert len(mail.outbox) == 1
    assert mail.outbox[0].extra_headers["Idempotency-Key"] == "notice:clk_1:90d"
    delivery = Delivery.objects.get()
    assert delivery.state == "succeeded" and delivery.attempts == 1 and delivery.delivered == T0


def test_it_backs_off_after_a_failure_and_fails_for_good_after_ten(brand, monkeypatch):
    tries = []

    def refused(message, fail_silently=False):
        tries.append(message.subject)
        raise ConnectionRefusedError("the mail server refused the connection")

    monkeypatch.setattr(EmailMultiAlternatives, "send", refused)
    at = T0
    with wallclock.fixed(at):
        outbox.enqueue_email(brand=brand, to=["a@example.test"], subject="s", body="b",
                             key="mail:bad")
    waits = []
    for _ in range(10):
        with wallclock.fixed(at):
            outbox.sweep()
        delivery = Delivery.objects.get()
        if delivery.state == "pending":
            waits.append(delivery.next_attempt - at)
            at = delivery.next_attempt
    assert waits[:4] == [timedelta(minutes=m) for m in (1, 2, 4, 8)]
    assert waits[-1] == timedelta(hours=4, minutes=16)
    assert delivery.state == "failed" and delivery.attempts == 10
    assert "refused the connection" in delivery.last_error
    assert len(tries) == 10


def test_it_sends_again_a_delivery_whose_sender_died_after_its_lease(brand):
    with wallclock.fixed(T0):
        outbox.enqueue_email(brand=brand, to=["a@example.test"], subject="s", body="b",
                             key="k:1")
    Delivery.objects.update(state="running", lease_until=T0 + timedelta(minutes=5))
    with wallclock.fixed(T0 + timedelta(minutes=4)):
        assert outbox.sweep().sent == 0
    with wallclock.fixed(T0 + timedelta(minutes=6)):
        assert outbox.sweep().sent == 1
    assert Delivery.objects.get().state == "succeeded"


def test_it_takes_at_most_100_oldest_first(brand):
    for n in range(105):
        with wallclock.fixed(T0 + timedelta(seconds=n)):
            outbox.enqueue_email(brand=brand, to=["a@example.test"], subject=f"n{n}", body="",
                                 key=f"k:{n}")
    with wallclock.fixed(T0 + timedelta(minutes=5)):
        assert outbox.sweep().sent == 100
        assert [m.subject for m in mail.outbox[:2]] == ["n0", "n1"]
        assert outbox.sweep().sent == 5
