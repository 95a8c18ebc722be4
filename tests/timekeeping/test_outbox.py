import json
import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
from django.core import mail

from timekeeping.basics import wallclock
from timekeeping.models import Delivery
from timekeeping.timers import outbox

T0 = datetime(2026, 11, 30, 14, tzinfo=UTC)


@pytest.fixture
def receiver():
    """A real HTTP server on localhost that keeps what it was sent and answers `status`."""
    got = {"requests": [], "status": 204}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            got["requests"].append((dict(self.headers), json.loads(body)))
            self.send_response(got["status"])
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    got["url"] = f"http://127.0.0.1:{server.server_port}/hook"
    yield got
    server.shutdown()


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


def test_it_posts_a_webhook_to_a_real_server(brand, receiver):
    with wallclock.fixed(T0):
        outbox.enqueue_webhook(brand=brand, url=receiver["url"], body={"timer": "tmr_1"},
                               key="hook:tmr_1")
        assert outbox.sweep().sent == 1
    headers, body = receiver["requests"][0]
    assert body == {"timer": "tmr_1"} and headers["Idempotency-Key"] == "hook:tmr_1"


def test_it_backs_off_after_a_failure_and_fails_for_good_after_ten(brand, receiver):
    receiver["status"] = 500
    at = T0
    with wallclock.fixed(at):
        outbox.enqueue_webhook(brand=brand, url=receiver["url"], body={}, key="hook:bad")
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
    assert "HTTP Error 500" in delivery.last_error
    assert len(receiver["requests"]) == 10


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
