"""Undo and double submits in the customer portal (issue 27): after Mark done, Acknowledge or
Choose the customer is offered Undo for 15 minutes (in place with htmx, on the next page
without JavaScript); they undo only their own actions on their own subjects; a second post of
any of the portal's forms changes nothing and says "That was already done."

Times are Los Angeles time, the subject's zone."""

import html
import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from django.contrib.messages import get_messages
from django.test import Client

from timekeeping import clocks, manifests
from timekeeping.basics import wallclock
from timekeeping.models import Customer, Occurrence, Record, Subscription
from timekeeping.recurring import plans
from timekeeping.timers import records

from ..recurring.test_plans import client_of, document  # noqa: F401 - the fixture

HTMX = {"HTTP_HX_REQUEST": "true"}
LA = ZoneInfo("America/Los_Angeles")
NINE = datetime(2027, 3, 1, 9, tzinfo=LA)  # Monday 1 March 2027, 09:00 PST


def _post(portal, verb: str, htmx: bool = False, **form):
    form.setdefault("confirmed", "yes")
    return portal.client.post(f"/portal/clocks/{portal.clock('pay').pk}/{verb}", form,
                              **(HTMX if htmx else {}))


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


def _said(answer) -> str:
    return [str(message) for message in get_messages(answer.wsgi_request)][-1]


def _undo_action(answer) -> str:
    return re.search(r'action="(/portal/records/[^"]*/undo)"', answer.content.decode()).group(1)


def _pay(portal) -> Occurrence:
    return portal.clock("pay").occurrences.get()


def test_with_htmx_marking_done_offers_an_undo_that_opens_the_date_again(portal):
    with wallclock.fixed(NINE):
        done = _post(portal, "done", htmx=True)
        assert "Marked done: pay the 2027 tax." in _text(done)
        assert "You can undo this for 15 minutes." in _text(done)
    with wallclock.fixed(NINE + timedelta(minutes=14)):
        undone = portal.client.post(_undo_action(done), {"once": "u1"}, **HTMX)
        assert undone.content.decode().lstrip().startswith(f'<tr id="date-{_pay(portal).pk}"')
        assert "Undone: marking it done on pay." in _text(undone)
        assert _pay(portal).status == Occurrence.Status.OPEN
        again = portal.client.post(_undo_action(done), {"once": "u1"}, **HTMX)
    assert "That was already done." in _text(again)
    assert Record.objects.filter(kind="clock.undone").count() == 1


def test_without_javascript_the_undo_rides_to_the_next_page(portal):
    done = _post(portal, "acknowledge", next="/portal/")
    assert done.status_code == 302 and _said(done) == "Acknowledged: pay the 2027 tax."
    page = portal.client.get("/portal/")
    assert "You can undo this for 15 minutes." in _text(page)
    assert 'name="next" value="/portal/"' in page.content.decode()
    undone = portal.client.post(_undo_action(page), {"next": "/portal/"})
    assert undone.status_code == 302 and undone["Location"] == "/portal/"
    assert _said(undone) == "Undone: the acknowledgement on pay."
    assert _pay(portal).acknowledged is None
    assert "You can undo this" not in _text(portal.client.get("/portal/"))  # shown once


def test_a_choice_is_offered_its_undo_on_the_subject_page(portal):
    subject_page = f"/portal/subjects/{portal.subject.pk}/"
    chosen = _post(portal, "choose", choice="pay", next=subject_page)
    assert chosen.status_code == 302 and chosen["Location"] == subject_page
    page = portal.client.get(subject_page)
    assert "You can undo this for 15 minutes." in _text(page)
    undone = portal.client.post(_undo_action(page), **HTMX)
    assert "Undone: the choice on pay." in _text(undone)
    assert _pay(portal).status == Occurrence.Status.OPEN


def test_an_undo_after_fifteen_minutes_is_refused_in_words(portal):
    with wallclock.fixed(NINE):
        done = _post(portal, "done", htmx=True)
    with wallclock.fixed(NINE + timedelta(minutes=16)):
        late = portal.client.post(_undo_action(done), **HTMX)
    assert late.status_code == 200
    assert ("Not undone: an action can be undone for 15 minutes, and that time has passed."
            in _text(late))
    assert _pay(portal).status == Occurrence.Status.SATISFIED


def test_a_customer_may_not_undo_what_someone_else_did(portal, actors):
    entry = clocks.acknowledge(_pay(portal), by=records.person(actors["owner"]))
    refused = portal.client.post(f"/portal/records/{entry.pk}/undo", **HTMX)
    assert refused.status_code == 200
    assert "Not undone: only the person who did it can undo it here." in _text(refused)
    assert _pay(portal).acknowledged is not None


def test_an_action_on_another_subject_answers_404(portal, second_customer):
    theirs = Occurrence.objects.filter(clock__subject=portal.others).first()
    entry = clocks.acknowledge(theirs, by="user 99 (second)")
    assert portal.client.post(f"/portal/records/{entry.pk}/undo").status_code == 404
    done = _post(portal, "done", htmx=True)
    assert second_customer.post(_undo_action(done)).status_code == 404
    assert _pay(portal).status == Occurrence.Status.SATISFIED


def test_a_double_submit_of_each_date_control_changes_nothing_the_second_time(portal):
    for verb, form in (("acknowledge", {}), ("choose", {"choice": "pay"}), ("done", {})):
        form["once"] = f"t-{verb}"
        first = _post(portal, verb, htmx=True, **form)
        assert "That was already done." not in _text(first), verb
        written = Record.objects.count()
        again = _post(portal, verb, htmx=True, **form)
        assert "That was already done." in _text(again), verb
        assert Record.objects.count() == written, verb


def test_a_double_submit_of_a_new_feed_link_keeps_the_first_new_link(portal):
    action = f"/portal/subjects/{portal.subject.pk}/calendar/token"
    portal.client.post(action, {"confirmed": "yes", "once": "feed-1"}, **HTMX)
    token = type(portal.subject).objects.get(pk=portal.subject.pk).feed_token
    again = portal.client.post(action, {"confirmed": "yes", "once": "feed-1"})
    assert again.status_code == 302 and _said(again) == "That was already done."
    assert type(portal.subject).objects.get(pk=portal.subject.pk).feed_token == token


def test_a_double_submit_of_cancel_and_of_resume_changes_nothing(brand, actors,
                                                                 client_of):  # noqa: F811
    manifests.load(brand, document())
    subject = client_of()
    Customer.objects.create(brand=brand, user=actors["buyer"]).subjects.add(
        subject, through_defaults={"brand": brand})
    buyer = Client()
    buyer.force_login(actors["buyer"])
    with wallclock.fixed(datetime(2027, 1, 15, 10, tzinfo=ZoneInfo("America/New_York"))):
        subscription = plans.subscribe(subject=subject, service="plan")
        for verb, ends_after in (("cancel", 1), ("resume", None)):
            form = {"confirmed": "yes", "once": f"plan-{verb}"}
            buyer.post(f"/portal/plans/{subscription.pk}/{verb}", form)
            written = Record.objects.count()
            again = buyer.post(f"/portal/plans/{subscription.pk}/{verb}", form, **HTMX)
            assert "That was already done." in _text(again), verb
            assert Subscription.objects.get(pk=subscription.pk).ends_after == ends_after
            assert Record.objects.count() == written, verb
