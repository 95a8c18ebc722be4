"""Undo and double submits on the console's date rows (issue 27): after each control an Undo
is offered (in place with htmx, on the next page without JavaScript) for 15 minutes; a second
post of the same form changes nothing and says so."""

import html
import re
from datetime import timedelta

from django.contrib.messages import get_messages

from timekeeping.models import Member, Occurrence, Record
from timekeeping.tick import test_clocks

from .conftest import START

HTMX = {"HTTP_HX_REQUEST": "true"}


def _post(desk, who: str, verb: str, clock_name: str, htmx: bool = False, **form):
    row = desk.job.clocks.get(name=clock_name)
    form.setdefault("confirmed", "yes")
    return desk.clients[who].post(desk.url(f"clocks/{row.pk}/{verb}"), form,
                                  **(HTMX if htmx else {}))


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


def _said(answer) -> str:
    return [str(message) for message in get_messages(answer.wsgi_request)][-1]


def _undo_action(answer) -> str:
    return re.search(r'action="([^"]*/undo)"', answer.content.decode()).group(1)


def test_with_htmx_marking_done_offers_an_undo_that_opens_the_date_again(desk):
    done = _post(desk, "manager", "done", "pay", htmx=True)
    assert "You can undo this for 15 minutes." in _text(done)
    undone = desk.clients["manager"].post(_undo_action(done), {"once": "u1"}, **HTMX)
    assert "Undone: marking it done on pay." in _text(undone)
    assert desk.occurrence("pay").status == Occurrence.Status.OPEN
    assert undone.content.decode().lstrip().startswith('<tr id="date-')
    again = desk.clients["manager"].post(_undo_action(done), {"once": "u1"}, **HTMX)
    assert "That was already done." in _text(again)
    assert Record.objects.filter(kind="clock.undone").count() == 1


def test_without_javascript_the_undo_rides_to_the_next_page(desk):
    done = _post(desk, "owner", "acknowledge", "pay", next=desk.url())
    assert done.status_code == 302 and _said(done) == "Acknowledged: pay the 2027 tax."
    page = desk.clients["owner"].get(desk.url())
    assert "You can undo this for 15 minutes." in _text(page)
    undone = desk.clients["owner"].post(_undo_action(page), {"next": desk.url()})
    assert undone.status_code == 302 and _said(undone) == \
        "Undone: the acknowledgement on pay."
    assert desk.occurrence("pay").acknowledged is None
    assert "You can undo this" not in _text(desk.clients["owner"].get(desk.url()))  # once


def test_an_undo_after_fifteen_minutes_is_refused_in_words(desk):
    done = _post(desk, "owner", "done", "pay", htmx=True)
    test_clocks.advance(desk.test_clock, to=START + timedelta(minutes=16))
    late = desk.clients["owner"].post(_undo_action(done), **HTMX)
    assert "Not undone: an action can be undone for 15 minutes, and that time has passed." \
        in _text(late)
    assert desk.occurrence("pay").status == Occurrence.Status.SATISFIED


def test_a_double_submit_of_each_control_changes_nothing_the_second_time(desk):
    for verb, form in (("acknowledge", {}), ("assign", {"member": desk.manager.pk}),
                       ("choose", {"choice": "pay"}), ("done", {"item": "US-NJ"})):
        clock_name = "file" if verb == "done" else "pay"
        form["once"] = f"t-{verb}"
        _post(desk, "owner", verb, clock_name, htmx=True, **form)
        written = Record.objects.count()
        again = _post(desk, "owner", verb, clock_name, htmx=True, **form)
        assert "That was already done." in _text(again), verb
        assert Record.objects.count() == written, verb


def test_assign_lists_the_owner_by_name_and_nobody(desk):
    page = desk.clients["manager"].get(desk.url())
    assert re.search(r'<option value="owner">[^<]+\(owner\)</option>', page.content.decode())
    assert '<option value="" selected>nobody</option>' in page.content.decode()
    _post(desk, "manager", "assign", "pay", member="owner")
    assigned = desk.occurrence("pay").assignee
    assert assigned.user_id == desk.brand.owner_id and assigned.role == Member.Role.OWNER
    answer = _post(desk, "manager", "assign", "pay", htmx=True, member="")
    assert "Assigned to nobody: pay the 2027 tax." in _text(answer)
    assert desk.occurrence("pay").assignee is None


def test_a_stranger_cannot_undo_and_a_viewer_may_not(desk):
    done = _post(desk, "owner", "done", "pay", htmx=True)
    assert desk.clients["stranger"].post(_undo_action(done)).status_code == 404
    assert desk.clients["viewer"].post(_undo_action(done)).status_code == 403
    assert desk.occurrence("pay").status == Occurrence.Status.SATISFIED
