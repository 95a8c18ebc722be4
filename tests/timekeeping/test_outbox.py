from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from django.core import mail
from django.core.mail import EmailMultiAlternatives

from timekeeping.basics import wallclock
from timekeeping.models import Brand, Delivery
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


# -- brands in turn (issue 31, "Fair shares") ---------------------------------------------------

ZONE = ZoneInfo("America/Chicago")
BURST_AT = datetime(2026, 11, 30, 8, tzinfo=ZONE)


def _burst(brand, count: int, *, world: str | None = None, prefix: str = "burst",
           later: int = 0) -> None:
    """`count` due emails of `brand`, written at once, the oldest mail in the outbox."""
    payload = {"to": ["many@example.test"], "subject": prefix, "body": "b"}
    if world:
        payload[outbox.WORLD_KEY] = world
    Delivery.objects.bulk_create([
        Delivery(brand=brand, channel=Delivery.Channel.EMAIL, payload=payload,
                 idempotency_key=f"{prefix}:{n}", next_attempt=BURST_AT,
                 created=BURST_AT + timedelta(seconds=later, microseconds=n))
        for n in range(count)
    ], batch_size=2000)


def test_it_sends_another_brands_single_email_in_the_sweep_after_a_burst_of_10000(brand):
    other = Brand.objects.create(name="Harbor Venue", slug="harbor", owner=brand.owner)
    _burst(brand, 10_000)
    with wallclock.fixed(BURST_AT + timedelta(minutes=1)):
        outbox.enqueue_email(brand=other, to=["guest@example.test"], subject="Your invitation",
                             body="Join us.", key="invite:1")
        sent = outbox.sweep()  # one claim: at most 100
    assert sent.sent == 100
    assert "Your invitation" in [message.subject for message in mail.outbox]
    assert Delivery.objects.get(idempotency_key="invite:1").state == "succeeded"


def test_it_takes_brands_in_turn_each_oldest_first(brand):
    other = Brand.objects.create(name="Harbor Venue", slug="harbor", owner=brand.owner)
    _burst(brand, 300, prefix="a")
    _burst(other, 3, prefix="b", later=30)
    with wallclock.fixed(BURST_AT + timedelta(minutes=1)):
        outbox.sweep(limit=6)
    sent = sorted((message.subject, message.extra_headers["Idempotency-Key"])
                  for message in mail.outbox)
    assert sent == [("a", "a:0"), ("a", "a:1"), ("a", "a:2"),
                    ("b", "b:0"), ("b", "b:1"), ("b", "b:2")]


def test_a_test_clocks_walk_never_delays_live_mail_even_of_its_own_brand(brand, test_clock):
    brand.owner.email = "owner@example.test"
    brand.owner.save(update_fields=["email"])
    _burst(brand, 500, world=test_clock.pk, prefix="practice")
    with wallclock.fixed(BURST_AT + timedelta(minutes=1)):
        outbox.tell(brand=brand, test_clock_id=test_clock.pk, to=["x@example.test"],
                    subject="Rehearsed", body="b", key="rehearsed:1")
        outbox.enqueue_email(brand=brand, to=["buyer@example.test"], subject="Live notice",
                             body="b", key="live:1")
        outbox.sweep(limit=1)
    assert [message.subject for message in mail.outbox] == ["Live notice"]
    rehearsed = Delivery.objects.get(idempotency_key="rehearsed:1")
    assert rehearsed.payload[outbox.WORLD_KEY] == test_clock.pk
    assert "test_clock" not in Delivery.objects.get(idempotency_key="live:1").payload
