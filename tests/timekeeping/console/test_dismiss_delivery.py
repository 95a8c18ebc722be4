"""An email that could not be sent is dismissed from "Needs attention" (issue 29, J9): in
place with htmx, or by a plain form post; the dismissal (who, when, why) is kept, the item
leaves the list, and it can be undone for 15 minutes. Times are New York time."""

import html
import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from timekeeping.basics import wallclock
from timekeeping.models import Delivery, Dismissal, Record
from timekeeping.timers import records

pytestmark = pytest.mark.django_db
NOW = datetime(2026, 12, 1, 7, tzinfo=ZoneInfo("America/New_York"))
HTMX = {"HTTP_HX_REQUEST": "true"}


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


def _needs(desk, at=NOW) -> str:
    with wallclock.fixed(at):
        page = desk.clients["owner"].get(desk.url(), {"test": "off"})
    return _text(page).split("Needs attention")[1].split("The next 30 days")[0]


def _post(desk, fields, at=NOW, who="owner", **extra):
    with wallclock.fixed(at):
        return desk.clients[who].post(desk.url("attention/settle"),
                                      {**fields, "next": desk.url()}, **extra)


@pytest.fixture
def failed(desk) -> Delivery:
    return Delivery.objects.create(brand=desk.brand, channel="email", idempotency_key="a",
                                   payload={"subject": "Your reminder"}, state="failed",
                                   attempts=5, next_attempt=NOW, created=NOW)


def _dismiss(failed) -> dict:
    return {"kind": "undelivered", "row": failed.pk, "do": "dismiss",
            "reason": "the client left"}


def test_a_failed_email_is_dismissed_in_place_and_undone(desk, failed):
    assert "could not be sent after 5 tries" in _needs(desk) and "Dismiss" in _needs(desk)
    answer = _post(desk, _dismiss(failed), **HTMX)
    assert answer.status_code == 200
    fragment = answer.content.decode()
    assert fragment.startswith('<li class="settled">') and 'name="do" value="undismiss"' in \
        fragment
    assert "Dismissed: it leaves the list" in _text(answer) and "undo this for 15 minutes" in \
        _text(answer)
    kept = Dismissal.objects.get()
    assert (kept.by, kept.at, kept.reason) == (records.person(desk.brand.owner), NOW,
                                               "the client left")
    assert "could not be sent" not in _needs(desk)
    undone = _post(desk, {"kind": "undelivered", "row": failed.pk, "do": "undismiss"},
                   at=NOW + timedelta(minutes=14), **HTMX)
    assert undone["HX-Redirect"] == desk.url()
    assert not Dismissal.objects.exists() and "could not be sent" in _needs(desk)
    assert Record.objects.get(kind="attention.undismissed").data == {
        "kind": "undelivered", "row": failed.pk, "by": records.person(desk.brand.owner)}


def test_without_javascript_the_page_says_so_and_offers_the_undo(desk, failed):
    answer = _post(desk, _dismiss(failed))
    assert answer.status_code == 302
    with wallclock.fixed(NOW):
        page = desk.clients["owner"].get(answer["Location"], {"test": "off"})
    said = _text(page)
    assert "Dismissed: it leaves the list" in said and "You can undo this for 15 minutes" in said
    assert 'name="do" value="undismiss"' in page.content.decode()
    late = _post(desk, {"kind": "undelivered", "row": failed.pk, "do": "undismiss"},
                 at=NOW + timedelta(minutes=16))
    with wallclock.fixed(NOW):
        page = desk.clients["owner"].get(late["Location"], {"test": "off"})
    assert "Nothing was done. The item: it was dismissed more than 15 minutes ago." in \
        _text(page)
    assert Dismissal.objects.exists()


def test_a_viewer_cannot_and_a_stranger_hears_404(desk, failed):
    assert _post(desk, _dismiss(failed), who="viewer").status_code == 403
    assert _post(desk, _dismiss(failed), who="stranger").status_code == 404
    _post(desk, _dismiss(failed))
    undo = {"kind": "undelivered", "row": failed.pk, "do": "undismiss"}
    assert _post(desk, undo, who="stranger").status_code == 404
    assert Dismissal.objects.exists()
