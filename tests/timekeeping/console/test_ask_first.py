"""Controls that are hard to undo ask first (issue 27): without JavaScript the post answers a
page that says what will happen and changes nothing; its button posts again with the yes.
With htmx the browser asks (hx-confirm) and the form sends the yes (hx-vals)."""

import re
from html import unescape

from timekeeping.models import Occurrence


def _text(answer) -> str:
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


def test_mark_done_asks_first_and_changes_nothing_until_the_yes(desk):
    row = desk.job.clocks.get(name="pay")
    owner, action = desk.clients["owner"], desk.url(f"clocks/{row.pk}/done")
    asked = owner.post(action, {"item": "", "next": desk.url()})
    body = asked.content.decode()
    assert asked.status_code == 200 and "<h1>Mark pay the 2027 tax done?</h1>" in body
    assert "Its reminders stop" in _text(asked) and f'href="{desk.url()}">No, go back' in body
    # The page's button posts the same fields again, with the yes.
    assert f'action="{action}"' in body and 'name="confirmed" value="yes"' in body
    assert 'name="next" value="' + desk.url() + '"' in body
    assert desk.occurrence("pay").status == Occurrence.Status.OPEN
    done = owner.post(action, {"item": "", "next": desk.url(), "confirmed": "yes"})
    assert done.status_code == 302 and desk.occurrence("pay").status != Occurrence.Status.OPEN


def test_the_row_tells_htmx_to_ask_and_to_send_the_yes(desk):
    body = desk.clients["owner"].get(desk.url()).content.decode()
    form = re.search(r'<form[^>]*action="[^"]*/done"[^>]*>', body)[0]
    assert 'hx-confirm="Mark pay the 2027 tax done? Its reminders stop' in unescape(form) or \
        'hx-confirm="Mark file the 2027 return' in unescape(form)
    assert "hx-vals='{\"confirmed\": \"yes\"}'" in form
    # Acknowledge is easily undone in effect (it only notes who saw it): it does not ask.
    acknowledge = re.search(r'<form[^>]*action="[^"]*/acknowledge"[^>]*>', body)[0]
    assert "hx-confirm" not in acknowledge


def test_a_new_feed_link_asks_first_naming_what_stops_working(desk):
    manager, path = desk.clients["manager"], desk.url(f"subjects/{desk.subject.pk}/feed")
    before = desk.subject.feed_token
    asked = manager.post(path)
    assert asked.status_code == 200
    assert f"Make a new calendar link for {desk.subject.name}?" in _text(asked)
    assert "stops getting these dates" in _text(asked)
    desk.subject.refresh_from_db()
    assert desk.subject.feed_token == before
    assert manager.post(path, {"confirmed": "yes"}).status_code == 302
    desk.subject.refresh_from_db()
    assert desk.subject.feed_token != before
    # A viewer may not, asked or not; a stranger hears 404.
    assert desk.clients["viewer"].post(path, {"confirmed": "yes"}).status_code == 403
    assert desk.clients["stranger"].post(path).status_code == 404
