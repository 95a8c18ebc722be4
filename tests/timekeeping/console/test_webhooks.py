"""The console's webhook pages (issue 30, docs/console.md "Webhooks"): the owner adds an
endpoint and sees its secret once, changes it, sends a test event and resends one, turns it
off and on (what it missed sent), replays the failed events between two times, and removes
it after being asked; every delivery shows in its log. The receiver is on loopback; the
outbox's sweep runs as the tick's would, at explicit instants."""

from datetime import UTC, datetime

import pytest

from tests.words import engine_words, visible_text
from timekeeping.basics import wallclock
from timekeeping.timers import outbox
from timekeeping.webhooks import endpoints

NOW = datetime(2028, 4, 10, 14, tzinfo=UTC)  # 10:00 in New York


@pytest.fixture
def owner(desk):
    return desk.clients["owner"]


def made(desk, receiver, **fields):
    return endpoints.make(desk.brand, url=receiver.url, **fields).endpoint


def page_of(desk, endpoint, path=""):
    return desk.url(f"webhooks/{endpoint.pk}/{path}")


def test_the_endpoint_page_shows_its_log(desk, owner, receiver):
    endpoint = made(desk, receiver, description="Billing system")
    with wallclock.fixed(NOW):
        endpoints.send_test(endpoint)
        outbox.sweep(now=NOW)
        answer = owner.get(page_of(desk, endpoint))
    html = answer.content.decode()
    assert answer.status_code == 200
    assert "Billing system" in html and "Test event" in html
    assert "delivered, answered 204 No Content" in html
    assert engine_words(visible_text(html)) == []
