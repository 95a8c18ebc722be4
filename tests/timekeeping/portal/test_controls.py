"""The customer's controls: acknowledge, mark done and choose on a date they answer for, through
the same functions as the API; a refusal said in words, never an error page; htmx gets the
row back in place, a plain form post a message and a redirect; CSRF everywhere."""

from datetime import UTC, datetime
from html import unescape

from django.test import Client

from timekeeping import clocks
from timekeeping.basics import wallclock
from timekeeping.models import Occurrence, Record


def post(portal, clock, action, htmx=False, **fields):
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    fields.setdefault("confirmed", "yes")  # a person who was asked (tests/test_ask_first.py)
    return portal.client.post(f"/portal/clocks/{clock.pk}/{action}", fields, **headers)


def said(answer) -> str:
    return unescape(answer.content.decode())


def test_it_acknowledges_a_date_and_sends_a_plain_post_back_with_a_message(portal):
    pay = portal.clock("pay")
    answer = post(portal, pay, "acknowledge", next="/portal/")
    assert answer.status_code == 302 and answer["Location"] == "/portal/"
    assert pay.occurrences.get().acknowledged is not None
    said = Record.objects.get(kind="clock.acknowledged", subject=portal.subject.pk)
    assert said.data["by"].endswith("(buyer)")
    page = portal.client.get("/portal/")
    assert "Acknowledged: pay the 2027 tax." in page.content.decode()


def test_it_rerenders_the_row_in_place_for_htmx(portal):
    pay = portal.clock("pay")
    # Monday 1 March 2027, 09:30 in Los Angeles: the moment is read in the subject's zone
    with wallclock.fixed(datetime(2027, 3, 1, 17, 30, tzinfo=UTC)):
        answer = post(portal, pay, "acknowledge", htmx=True)
    text = answer.content.decode()
    assert answer.status_code == 200
    assert text.strip().startswith(f'<tr id="date-{pay.occurrences.get().pk}"')
    assert "Acknowledged: pay the 2027 tax." in text
    assert "You acknowledged it Mon 1 Mar 2027, 09:30 PST" in text


def test_it_marks_a_date_done_and_the_row_leaves_the_list(portal):
    pay = portal.clock("pay")
    answer = post(portal, pay, "done", htmx=True)
    assert "Marked done: pay the 2027 tax." in answer.content.decode()
    assert "no longer open" in answer.content.decode()
    assert pay.occurrences.get().status == Occurrence.Status.SATISFIED
    assert "pay the 2027 tax" not in portal.client.get("/portal/").content.decode()


def test_it_chooses_and_the_gate_commits_the_step(portal):
    answer = post(portal, portal.clock("pay"), "choose", choice="pay", next="/portal/")
    assert answer.status_code == 302
    step = Record.objects.get(kind="step.committed", job=portal.job.pk)
    assert step.data["step"] == "pay" and step.data["by"].startswith("choice of user ")
    assert portal.clock("pay").occurrences.get().status == Occurrence.Status.SATISFIED


def test_it_says_a_gate_refusal_in_words(portal):
    clocks.end_job(portal.job)  # the pay date closes with its job
    answer = post(portal, portal.clock("pay"), "choose", htmx=True, choice="pay")
    assert answer.status_code == 200
    assert "'pay' was refused: its job is closed" in said(answer)
    answer = post(portal, portal.clock("pay"), "done", next="/portal/")
    assert answer.status_code == 302
    page = portal.client.get("/portal/").content.decode()
    assert "Not marked done: the date is closed; only an open or lapsed date can be marked " \
           "done." in page


def test_it_says_a_choice_the_clock_does_not_offer_in_words(portal):
    answer = post(portal, portal.clock("pay"), "choose", htmx=True, choice="amend")
    assert "Nothing chosen: 'amend' is not one of this clock's choices: pay." in said(answer)
    assert not Record.objects.filter(kind="clock.chosen").exists()


def test_it_shows_the_brands_dates_without_controls_and_answers_403_to_a_post(portal):
    page = portal.client.get(f"/portal/subjects/{portal.subject.pk}/").content.decode()
    filing = portal.clock("file")
    assert f"/portal/clocks/{filing.pk}/" not in page
    assert f"/portal/clocks/{portal.clock('pay').pk}/acknowledge" in page
    assert "Northwind Filing takes care of this date; it is here so you know it." in page
    assert "of record" not in page
    for action in ("acknowledge", "done", "choose"):
        assert post(portal, filing, action, item="US", choice="file").status_code == 403
    assert not Record.objects.filter(kind__in=["clock.acknowledged", "clock.chosen"]).exists()


def test_it_answers_404_for_another_customers_clock_as_for_a_missing_one(portal,
                                                                         second_customer):
    theirs = portal.others.clocks.get(name="pay")
    for action in ("acknowledge", "done", "choose"):
        answer = post(portal, theirs, action, choice="pay")
        missing = portal.client.post(f"/portal/clocks/clk_Missing0000000000/{action}")
        assert answer.status_code == missing.status_code == 404
    assert second_customer.post(f"/portal/clocks/{theirs.pk}/acknowledge").status_code == 302


def test_it_refuses_a_post_without_its_csrf_token(portal, actors):
    client = Client(enforce_csrf_checks=True)
    client.force_login(actors["buyer"])
    pay = portal.clock("pay")
    assert client.post(f"/portal/clocks/{pay.pk}/acknowledge").status_code == 403
    page = client.get("/portal/")
    token = page.cookies["csrftoken"].value
    answer = client.post(f"/portal/clocks/{pay.pk}/acknowledge", {"csrfmiddlewaretoken": token})
    assert answer.status_code == 302


def test_a_control_answers_only_a_post(portal):
    assert portal.client.get(f"/portal/clocks/{portal.clock('pay').pk}/done").status_code == 405
