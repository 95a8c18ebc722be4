"""The controls on a date: mark done, choose, acknowledge, assign. Each goes through the API's
function, answers in words (never a 500), sends a person back with a message without
JavaScript, and re-renders its row in place with htmx."""

import html
import re

import pytest
from django.contrib.messages import get_messages

from timekeeping import clocks
from timekeeping.models import Member, Occurrence, Record


def _post(desk, who: str, verb: str, clock_name: str, htmx: bool = False, **form):
    row = desk.job.clocks.get(name=clock_name)
    extra = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    form.setdefault("confirmed", "yes")  # a person who was asked (tests/test_ask_first.py)
    return desk.clients[who].post(desk.url(f"clocks/{row.pk}/{verb}"), form, **extra)


def _said(answer) -> list[str]:
    """What this answer said (messages of earlier answers not yet shown are left out)."""
    return [str(message) for message in get_messages(answer.wsgi_request)][-1:]


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


def test_marking_done_keeps_the_date_and_sends_the_person_back_with_a_message(desk):
    answer = _post(desk, "manager", "done", "file", item="US", next=desk.url())
    assert answer.status_code == 302 and answer["Location"] == desk.url()
    assert _said(answer) == ["Marked done: file the 2027 return, US."]
    kept = desk.occurrence("file", "US")
    assert kept.status == Occurrence.Status.SATISFIED
    assert kept.settled_by == f"marked done by user {desk.manager.user_id} (staff)"
    assert "file the 2027 return, US" not in _text(desk.clients["owner"].get(desk.url()))


def test_marking_done_a_date_not_open_says_why(desk):
    _post(desk, "owner", "done", "file", item="US")
    answer = _post(desk, "owner", "done", "file", item="US")
    assert _said(answer) == ["Not marked done: the date is satisfied; only an open or lapsed "
                             "date can be marked done."]


def test_with_htmx_a_control_answers_its_row_in_place(desk):
    answer = _post(desk, "owner", "acknowledge", "pay", htmx=True)
    body = answer.content.decode()
    assert answer.status_code == 200 and body.lstrip().startswith("<tr id=\"date-")
    assert "<html" not in body and "Acknowledged: pay the 2027 tax." in _text(answer)
    assert "acknowledged Mon 10 Apr 2028" in _text(answer)  # the row's why, on its world's clock
    done = _post(desk, "owner", "done", "pay", htmx=True)
    assert 'colspan="5"' in done.content.decode() and "Marked done: pay the 2027 tax." in _text(
        done)


def test_choosing_runs_the_step_through_the_gate(desk):
    answer = _post(desk, "manager", "choose", "file", item="US", choice="extend")
    assert _said(answer)[0].startswith("Chosen: extend committed · US · moved US 2028-04-18 → "
                                       "2028-10-16")
    kinds = set(Record.objects.filter(brand=desk.brand, job=desk.job.pk).values_list(
        "kind", flat=True))
    assert {"step.committed", "clock.chosen", "clock.moved"} <= kinds


def test_a_gate_refusal_is_said_in_words_not_a_500(desk):
    clocks.end_job(desk.job)
    answer = _post(desk, "manager", "choose", "file", item="US", choice="extend")
    assert answer.status_code == 302
    assert _said(answer) == ["Couldn't choose extend: its job is closed. Open a job for the "
                             "period to go on."]
    in_place = _post(desk, "manager", "choose", "file", item="US", choice="extend", htmx=True)
    assert in_place.status_code == 200
    assert "its job is closed. Open a job for the period to go on." in _text(in_place)


def test_a_choice_the_clock_does_not_offer_is_named(desk):
    answer = _post(desk, "owner", "choose", "file", item="US", choice="amend")
    assert _said(answer) == ["Not chosen: 'amend' is not one of this clock's choices: file, "
                             "extend."]


def test_assigning_gives_the_date_to_a_member_on_the_record(desk):
    answer = _post(desk, "owner", "assign", "pay", member=desk.viewer.pk)
    assert _said(answer) == ["Assigned to member: pay the 2027 tax."]
    assert desk.occurrence("pay").assignee == desk.viewer
    record = Record.objects.get(brand=desk.brand, kind="clock.assigned")
    assert record.data["member"] == desk.viewer.pk and record.data["to"] == "member"
    assert "assigned to member" in _text(desk.clients["owner"].get(desk.url()))


def test_a_member_of_another_brand_is_not_assigned(desk, actors):
    stranger = Member.objects.create(brand=desk.other, user=actors["buyer"])
    answer = _post(desk, "owner", "assign", "pay", member=stranger.pk)
    assert _said(answer) == ["Not assigned: Assign to: choose one of the people of Northwind "
                             "Filing, or nobody."]  # names the field, not an id
    assert desk.occurrence("pay").assignee is None


@pytest.mark.parametrize("form, said", [
    ({"item": "US"}, "Nothing was done: choice: This field is required."),
    ({"item": "US-TX", "choice": "file"}, "Nothing was done: clock {clock} has no item 'US-TX'."),
    ({"item": "x" * 65, "choice": "file"},
     "Nothing was done: item: Ensure this value has at most 64 characters (it has 65)."),
])
def test_a_bad_form_is_named_and_changes_nothing(desk, form, said):
    answer = _post(desk, "owner", "choose", "file", **form)
    row = desk.job.clocks.get(name="file")
    assert answer.status_code == 302 and _said(answer) == [said.format(clock=row.pk)]
    in_place = _post(desk, "owner", "choose", "file", htmx=True, **form)
    assert in_place.status_code == 200 and in_place["HX-Redirect"] == desk.url()


def test_a_viewer_posting_hears_403_and_a_stranger_404(desk):
    assert _post(desk, "viewer", "done", "pay").status_code == 403
    assert _post(desk, "stranger", "done", "pay").status_code == 404
    assert desk.occurrence("pay").status == Occurrence.Status.OPEN
    missing = desk.clients["owner"].post(desk.url("clocks/clk_Missing000000/done"), {})
    assert missing.status_code == 404


def test_the_way_back_stays_in_the_brands_console(desk):
    for target in ("https://evil.test/", f"/console/{desk.other.pk}/", "//evil.test/x"):
        answer = _post(desk, "owner", "acknowledge", "pay", next=target)
        assert answer["Location"] == desk.url()
    page = desk.url(f"subjects/{desk.subject.pk}/")
    assert _post(desk, "owner", "acknowledge", "pay", next=page)["Location"] == page


def test_a_get_is_not_a_control(desk):
    row = desk.job.clocks.get(name="pay")
    assert desk.clients["owner"].get(desk.url(f"clocks/{row.pk}/done")).status_code == 405


def test_the_subjects_history_names_people_by_name_and_says_who_marked_a_date_done(desk):
    _post(desk, "manager", "acknowledge", "file", item="US")
    _post(desk, "manager", "done", "file", item="US")
    text = _text(desk.clients["owner"].get(desk.url(f"subjects/{desk.subject.pk}/")))
    assert "The file date for US was acknowledged by staff." in text
    assert "The file date for US was done (marked done by staff)." in text
    assert "user " not in text  # the record keeps the exact actor; the page says a name
