"""Late postponements (SPEC S2, issue 29): an authority's relief notice that comes after a date
it covers was already missed reopens that date at the notice's new date, withdraws the miss on
the record, arms only the reminders still ahead, and tells the customer and the practice. A
date already done stays done. Through the API, on a test clock; through the manifest's
`postpone` list, on the real clock."""

import copy
import json
from datetime import UTC, date, datetime

import pytest

from timekeeping import clocks, manifests
from timekeeping.attention import lists
from timekeeping.basics import wallclock
from timekeeping.clocks import gate, history
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Delivery, Occurrence, Record, Subject, TestClock, Timer
from timekeeping.tick import phases, test_clocks

TAX = json.loads(TAX_MANIFEST.read_text())
OPENED = datetime(2028, 2, 1, 14, tzinfo=UTC)
MISSED = datetime(2028, 4, 20, 14, tzinfo=UTC)  # 10:00 in New York: the 18 April dates lapsed
LATER = datetime(2028, 11, 20, 15, tzinfo=UTC)  # 10:00 in New York: the extended dates lapsed
NOTICE = "IR-2028-12 (storm relief)"


@pytest.fixture
def practice(brand, actors):
    actors["owner"].email = "owner@example.test"
    actors["owner"].save()
    manifests.load(brand, copy.deepcopy(TAX))
    brand.refresh_from_db()
    return brand


def taxpayer(brand, test_clock=None, key="11-1111111"):
    subject = Subject.objects.create(brand=brand, test_clock=test_clock, kind="taxpayer",
                                     key=key, name="Fernhill Tools", zone="America/New_York",
                                     contact_email="books@fernhill.example")
    return clocks.order(brand=brand, service="annual-return", subject=subject, period="2027",
                        input={"jurisdictions": ["US", "US-CA", "US-NJ"]})


def date_of(job, name, item=""):
    return Occurrence.objects.get(clock__job=job, clock__name=name, item=item)


def postpone(client, test_clock, **fields):
    return client.post("/api/owner/calendar/postponements", {
        "from": "2028-10-01", "through": "2028-11-30", "to": "2029-02-15",
        "notice": NOTICE, "test_clock": test_clock.pk, **fields},
        content_type="application/json")


@pytest.fixture
def missed(practice, client, actors):
    """Fernhill's 2027 return on a test clock: its filings extended in April (the `run
    tentative` rung), federal to 16 October, California and New Jersey to 15 November;
    California filed on 1 November; on 20 November the federal and New Jersey filings have
    lapsed."""
    world = TestClock.objects.create(brand=practice, name="autumn", frozen_time=OPENED)
    job = taxpayer(practice, world)
    test_clocks.advance(world, to=datetime(2028, 11, 1, 14, tzinfo=UTC))
    assert gate.propose(job=job, step="file", items=["US-CA"], by="the practice").committed
    test_clocks.advance(TestClock.objects.get(pk=world.pk), to=LATER)
    assert date_of(job, "file", "US").status == date_of(job, "file", "US-NJ").status == "lapsed"
    client.force_login(actors["owner"])
    return world, job


def test_a_late_relief_notice_reopens_a_missed_filing_date_at_its_new_date(missed, client):
    world, job = missed
    answer = postpone(client, world)
    assert answer.status_code == 201, answer.content
    assert sorted(answer.json()["moved"]) == [
        "US 2028-10-16 → 2029-02-15 · reopened", "US-NJ 2028-11-15 → 2029-02-15 · reopened"]
    federal = date_of(job, "file", "US")
    assert (federal.status, federal.due, federal.moved_from, federal.moved_by) == (
        "open", date(2029, 2, 15), date(2028, 10, 16), "calendar")
    assert federal.late_from == datetime(2029, 2, 16, 5, tzinfo=UTC)  # 23:59 EST + 1 min
    assert federal.settled is None and federal.settled_by == ""
    lapse = Record.objects.get(kind="clock.lapsed", job=job.pk, data__item="US")
    withdrawn = Record.objects.get(kind="clock.lapse_withdrawn", job=job.pk, data__item="US")
    assert withdrawn.data["notice"] == NOTICE and withdrawn.data["lapse"] == lapse.pk
    assert withdrawn.data["who"] and withdrawn.data["due"] == "2028-10-16"
    assert withdrawn.instant == LATER
    moved = Record.objects.filter(kind="clock.moved", job=job.pk, data__item="US").last()
    assert moved.data["by"] == "calendar" and moved.data["notice"] == NOTICE


def test_a_kept_date_in_the_notice_stays_kept(missed, client):
    world, job = missed
    california = date_of(job, "file", "US-CA")
    postpone(client, world)
    again = date_of(job, "file", "US-CA")
    assert (again.status, again.due, again.settled) == ("satisfied", california.due,
                                                        california.settled)
    assert not Record.objects.filter(kind__in=["clock.moved", "clock.lapse_withdrawn"],
                                     data__item="US-CA", instant=LATER).exists()


def test_only_the_reminders_still_ahead_arm_again(missed, client):
    world, job = missed
    postpone(client, world)
    federal = date_of(job, "file", "US")
    armed = {timer.key.split(":", 1)[1]: timer.owed for timer in Timer.objects.filter(
        owner_id=federal.label, state="armed")}
    # 15 February 2029 less 90 days is 17 November: passed, so it is not sent again.
    assert armed == {"notice 30d": datetime(2029, 1, 16, 14, tzinfo=UTC),
                     "ack daily 5d": datetime(2029, 2, 10, 14, tzinfo=UTC),
                     "run tentative 3d": datetime(2029, 2, 12, 14, tzinfo=UTC),
                     "date": datetime(2029, 2, 16, 5, tzinfo=UTC)}
    before = Record.objects.filter(kind="clock.notice", job=job.pk, data__item="US").count()
    test_clocks.advance(TestClock.objects.get(pk=world.pk),
                        to=datetime(2029, 1, 20, 15, tzinfo=UTC))
    rang = Record.objects.filter(kind="clock.notice", job=job.pk, data__item="US")
    assert [line.data["rung"] for line in rang[before:]] == ["notice 30d"]
    assert date_of(job, "file", "US").status == "open"  # not lapsed again


def test_a_rung_that_extends_leaves_the_notices_later_date_as_it_is(missed, client):
    world, job = missed
    postpone(client, world)
    assert gate.propose(job=job, step="organizer", by="the customer").committed  # kept open
    # 12 February 2029: `run tentative 3d` proposes the extension, whose rule gives 16 October
    # 2028; the notice's 15 February stands, and the date is still open.
    test_clocks.advance(TestClock.objects.get(pk=world.pk),
                        to=datetime(2029, 2, 13, 15, tzinfo=UTC))
    federal = date_of(job, "file", "US")
    assert (federal.status, federal.due) == ("open", date(2029, 2, 15))


def test_a_daily_acknowledgement_whose_first_day_passed_asks_from_the_next_morning(missed,
                                                                                    client):
    world, job = missed
    postpone(client, world, to="2028-11-22")  # a Wednesday: its five days began on the 17th
    federal = date_of(job, "file", "US")
    armed = {timer.key.split(":", 1)[1]: timer.owed for timer in Timer.objects.filter(
        owner_id=federal.label, state="armed")}
    # 09:00 on the 20th in New York has passed (it is 10:00): the next ask is the 21st's.
    assert armed == {"ack daily 5d": datetime(2028, 11, 21, 14, tzinfo=UTC),
                     "date": datetime(2028, 11, 23, 5, tzinfo=UTC)}


def test_the_practice_is_told_in_plain_words_and_the_miss_leaves_the_lists(missed, client):
    world, job = missed
    jersey = date_of(job, "file", "US-NJ")

    def missed_in_jersey():
        return [item for item in lists.attention(job.brand, now=LATER, world=world).items
                if item.kind == "lapse" and "US-NJ" in item.text]

    def missed_on_its_page():  # the subject page's own list (S23)
        return [item for item in lists.of_subject(job.subject, now=LATER)
                if item.kind == "lapse" and "US-NJ" in item.text]

    assert missed_in_jersey() and missed_on_its_page()
    postpone(client, world)
    # In a test clock's world only the brand's owner hears (a practice run).
    mail = Delivery.objects.get(idempotency_key__startswith=f"{jersey.label}:reopened:")
    assert mail.payload["to"] == ["owner@example.test"]
    assert mail.payload["subject"] == ("Practice run: Extended to Thu 15 Feb 2029: file the "
                                       "2027 return (US-NJ) for Fernhill Tools")
    body = mail.payload["body"]
    assert "Relief notice IR-2028-12 (storm relief) moved" in body
    assert "The miss on Wed 15 Nov 2028 is withdrawn" in body
    assert "clk_" not in body and "lapse" not in body
    assert not missed_in_jersey() and not missed_on_its_page()
    sentences = [line.text for line in history.history(job.subject)]
    assert any(text.startswith("The miss of the ") and "was withdrawn" in text
               for text in sentences), sentences


def test_a_notice_whose_new_date_has_passed_too_leaves_the_miss_standing(missed, client):
    world, job = missed
    answer = postpone(client, world, to="2028-11-17")  # late from 18 November 05:00 UTC
    assert answer.status_code == 201 and answer.json()["moved"] == []
    assert date_of(job, "file", "US").status == "lapsed"
    assert not Record.objects.filter(kind="clock.lapse_withdrawn").exists()


def test_the_manifests_postpone_list_reopens_a_missed_date_and_tells_the_customer(practice):
    with wallclock.fixed(OPENED):
        job = taxpayer(practice)
    phases.run_once(now=MISSED)
    pay = date_of(job, "pay")
    assert pay.status == "lapsed"
    relieved = copy.deepcopy(TAX)
    relieved["calendar"]["postpone"] = [{"from": "2028-04-17", "through": "2028-04-19",
                                         "to": "2028-06-15", "notice": NOTICE}]
    with wallclock.fixed(MISSED):
        manifests.load(practice, relieved)
    pay = date_of(job, "pay")
    assert (pay.status, pay.due) == ("open", date(2028, 6, 15))
    withdrawn = Record.objects.get(kind="clock.lapse_withdrawn", data__name="pay")
    assert withdrawn.data["who"] == f"manifest of {practice.pk}"
    assert withdrawn.data["lapse"] == Record.objects.get(kind="clock.lapsed",
                                                         data__name="pay").pk
    told = {mail.payload["to"][0]: mail.payload for mail in Delivery.objects.filter(
        idempotency_key__startswith=f"{pay.label}:reopened:")}
    assert set(told) == {"books@fernhill.example", "owner@example.test"}
    customer = told["books@fernhill.example"]
    assert customer["subject"] == ("Extended to Thu 15 Jun 2028: pay the 2027 tax for "
                                   "Fernhill Tools")
    assert ("The earlier date, Tue 18 Apr 2028, no longer counts: it is not missed."
            in customer["body"])
    assert "/portal/subjects/" in customer["body"]
    assert "/console/" in told["owner@example.test"]["body"]
