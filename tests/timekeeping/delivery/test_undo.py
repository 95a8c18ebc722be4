"""Undo, Assign and double submits on the delivery portal (issue 27): a date's Mark done,
Acknowledge, Choose and Assign offer Undo for 15 minutes (in place with htmx, on the next page
without JavaScript), measured on the date's world (the test clock "spring", New York time); a
member undoes only their own actions; a date row reassigns to the console's choices; a second
post of any form changes nothing and says "That was already done." """

import html
import re
from datetime import timedelta

from django.contrib.messages import get_messages

from timekeeping import clocks
from timekeeping.models import Occurrence, Record
from timekeeping.tick import test_clocks
from timekeeping.timers import records

from .conftest import START

HTMX = {"HTTP_HX_REQUEST": "true"}


def _post(delivery, verb: str, who: str = "staff", htmx: bool = False, **form):
    form.setdefault("confirmed", "yes")  # Mark done asks first
    return delivery.client(who).post(f"/delivery/dates/{delivery.date.pk}/{verb}", form,
                                     **(HTMX if htmx else {}))


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


def _said(answer) -> str:
    return [str(message) for message in get_messages(answer.wsgi_request)][-1]


def _undo_action(answer) -> str:
    return re.search(r'action="(/delivery/records/[^"]*/undo)"',
                     answer.content.decode()).group(1)


def _date(delivery) -> Occurrence:
    return Occurrence.objects.get(pk=delivery.date.pk)


def test_with_htmx_marking_done_offers_an_undo_that_opens_the_date_again(delivery):
    done = _post(delivery, "done", htmx=True)
    assert "Marked done: file it." in _text(done)
    assert "You can undo this for 15 minutes." in _text(done)
    test_clocks.advance(delivery.spring, to=START + timedelta(minutes=14))
    undone = delivery.client("staff").post(_undo_action(done), {"once": "u1"}, **HTMX)
    assert undone.content.decode().lstrip().startswith(f'<tr id="date-{delivery.date.pk}"')
    assert "Undone: marking it done on file." in _text(undone)
    assert _date(delivery).status == Occurrence.Status.OPEN
    again = delivery.client("staff").post(_undo_action(done), {"once": "u1"}, **HTMX)
    assert "That was already done." in _text(again)
    assert Record.objects.filter(kind="clock.undone").count() == 1


def test_without_javascript_the_undo_rides_to_the_next_page(delivery):
    done = _post(delivery, "acknowledge")
    assert done.status_code == 302 and _said(done) == "Acknowledged: file it."
    page = delivery.client("staff").get("/delivery/")
    assert "You can undo this for 15 minutes." in _text(page)
    undone = delivery.client("staff").post(_undo_action(page), {"next": "/delivery/"})
    assert undone.status_code == 302 and undone["Location"] == "/delivery/"
    assert _said(undone) == "Undone: the acknowledgement on file."
    assert _date(delivery).acknowledged is None
    assert "You can undo this" not in _text(delivery.client("staff").get("/delivery/"))


def test_an_undo_after_fifteen_minutes_is_refused_in_words(delivery):
    done = _post(delivery, "done", htmx=True)
    test_clocks.advance(delivery.spring, to=START + timedelta(minutes=16))
    late = delivery.client("staff").post(_undo_action(done), **HTMX)
    assert ("Not undone: an action can be undone for 15 minutes, and that time has passed."
            in _text(late))
    assert _date(delivery).status == Occurrence.Status.SATISFIED


def test_a_member_may_not_undo_what_someone_else_did(delivery, actors):
    entry = clocks.acknowledge(_date(delivery), by=records.person(actors["owner"]))
    path = f"/delivery/records/{entry.pk}/undo"
    refused = delivery.client("staff").post(path, **HTMX)
    assert "Not undone: only the person who did it can undo it here." in _text(refused)
    assert delivery.client("member").post(path).status_code == 403  # a viewer
    assert delivery.client("outsider").post(path).status_code == 404  # another brand's
    assert delivery.client("buyer").post(path).status_code == 404  # no member
    assert _date(delivery).acknowledged is not None


def test_a_date_row_assigns_to_the_consoles_choices_and_the_assign_undoes(delivery):
    page = delivery.client("staff").get("/delivery/").content.decode()
    assert f'<select id="assign-{delivery.date.pk}" name="member">' in page
    assert '<option value="">nobody</option>' in page
    for member in (delivery.owner, delivery.manager, delivery.viewer):
        assert f'<option value="{member.pk}"' in page
    assert f'<option value="{delivery.manager.pk}" selected>' in page
    moved = _post(delivery, "assign", htmx=True, member=delivery.owner.pk)
    assert "Assigned to owner: file it." in _text(moved)
    assert "It is no longer open and yours, so it left this list" in _text(moved)
    assert _date(delivery).assignee_id == delivery.owner.pk
    back = delivery.client("staff").post(_undo_action(moved), **HTMX)
    assert "Undone: the assignment on file." in _text(back)
    assert _date(delivery).assignee_id == delivery.manager.pk


def test_a_viewer_is_offered_no_assign_and_may_not_post_one(delivery):
    clocks.assign(_date(delivery), delivery.viewer, by="owner")
    page = delivery.client("member").get("/delivery/").content.decode()
    assert "name=\"member\"" not in page
    assert _post(delivery, "assign", who="member", member="").status_code == 403
    assert _date(delivery).assignee_id == delivery.viewer.pk


def test_a_double_submit_of_each_control_changes_nothing_the_second_time(delivery):
    posts = [(f"/delivery/dates/{delivery.date.pk}/{verb}", form) for verb, form in (
        ("acknowledge", {}), ("choose", {"choice": "file"}), ("done", {"confirmed": "yes"}))]
    posts.append((f"/delivery/tasks/{delivery.task.pk}/take", {}))
    for n, (path, form) in enumerate(posts):
        form["once"] = f"t-{n}"
        delivery.client("staff").post(path, form, **HTMX)
        written = Record.objects.count()
        again = delivery.client("staff").post(path, form, **HTMX)
        assert "That was already done." in _text(again), path
        assert Record.objects.count() == written, path
