"""The emails a date sends link to the page where their reader acts: the portal's subject
page for the customer's own dates, the console's subject page for the brand's people. Emails
about a test clock's world say "Practice run:" in their subject line and go only to the
brand's owner."""

from datetime import UTC, datetime, timedelta

import pytest

from tests.timekeeping.portal.conftest import INPUT
from timekeeping import clocks
from timekeeping.basics import wallclock
from timekeeping.models import Delivery, Subject, TestClock
from timekeeping.tick import phases, test_clocks

SITE = "https://time.example.com"


@pytest.fixture(autouse=True)
def site(settings):
    settings.SITE_URL = SITE


def mails(prefix: str) -> list[Delivery]:
    return list(Delivery.objects.filter(idempotency_key__startswith=prefix).order_by("created"))


def tick_to(instant: datetime) -> None:
    with wallclock.fixed(instant):
        phases.run_once(now=instant, sweep=False, phases=False)


def test_the_lapse_email_lists_the_choices_and_links_to_where_the_customer_chooses(portal):
    pay = portal.clock("pay").occurrences.get()
    tick_to(pay.late_from + timedelta(minutes=1))
    (mail,) = mails(f"{pay.label}:lapsed")
    assert mail.payload["to"] == ["books@fernhill.example"]
    assert mail.payload["subject"] == "Missed: pay the 2027 tax for Fernhill Tools was due " \
                                      "Tue 18 Apr 2028"
    assert mail.payload["body"] == (
        "pay the 2027 tax for Fernhill Tools was due Tue 18 Apr 2028 and was not done in "
        "time. Choose what to do next:\n- pay\n\n"
        f"Choose on its page:\n\n{SITE}/portal/subjects/{portal.subject.pk}/\n")


def test_the_brands_own_lapse_links_to_the_console(portal):
    federal = portal.clock("file").occurrences.get(item="US")
    # A tick never lapses this date: three days before it, the return's `run tentative 3d`
    # rung files the extension, and by October's date the job has lapsed on its unanswered
    # ask. The lapse is what the date's timer does when it rings unsatisfied.
    with wallclock.fixed(federal.late_from):
        clocks.lapse(federal, federal.late_from)
    (mail,) = mails(f"{federal.label}:lapsed")
    assert mail.payload["to"] == ["owner@example.test"]
    assert "Choose what to do next:\n- file\n- extend\n" in mail.payload["body"]
    assert mail.payload["body"].endswith(
        f"{SITE}/console/{portal.brand.pk}/subjects/{portal.subject.pk}/\n")


def test_an_acknowledgement_rung_asks_for_it_and_links_to_where_it_is_given(portal):
    federal = portal.clock("file").occurrences.get(item="US")
    tick_to(datetime(2028, 4, 13, 17, tzinfo=UTC))  # ack daily 5d: 13 April, 09:00 there
    (mail,) = mails(f"{federal.label}:ack asked")
    assert mail.payload["subject"] == ("Please acknowledge: file the 2027 return (US) for "
                                       "Fernhill Tools is due Tue 18 Apr 2028")
    assert "Please acknowledge it on its page" in mail.payload["body"]
    assert f"{SITE}/console/{portal.brand.pk}/subjects/{portal.subject.pk}/" in \
        mail.payload["body"]
    pay = portal.clock("pay").occurrences.get()
    clocks.notice(pay, clocks.ACK_ASKED)  # a buyer's clock with an ack rung asks its customer
    (mail,) = mails(f"{pay.label}:ack asked")
    assert mail.payload["to"] == ["books@fernhill.example"]
    assert f"{SITE}/portal/subjects/{portal.subject.pk}/" in mail.payload["body"]


def test_an_escalation_goes_to_the_brands_owner_with_the_console_link(portal):
    pay = portal.clock("pay").occurrences.get()
    tick_to(datetime(2028, 4, 15, 17, tzinfo=UTC))  # escalate 3d: 15 April, 09:00 there
    (notice,) = mails(f"{pay.label}:notice 14d")
    (escalated,) = mails(f"{pay.label}:escalate 3d")
    assert notice.payload["to"] == ["books@fernhill.example"]
    assert f"{SITE}/portal/subjects/{portal.subject.pk}/" in notice.payload["body"]
    assert escalated.payload["to"] == ["owner@example.test"]
    assert f"{SITE}/console/{portal.brand.pk}/" in escalated.payload["body"]


def test_a_test_clocks_emails_say_so_and_reach_only_the_brands_owner(portal):
    rehearsal = TestClock.objects.create(brand=portal.brand, name="rehearsal",
                                         frozen_time=datetime(2028, 3, 1, tzinfo=UTC))
    subject = Subject.objects.create(brand=portal.brand, test_clock=rehearsal,
                                     kind="taxpayer", key="44-4444444", name="Real Customer Co",
                                     contact_email="real.customer@example.com")
    clocks.order(brand=portal.brand, service="annual-return", subject=subject, period="2027",
                 input=INPUT)
    test_clocks.advance(rehearsal, to=datetime(2028, 4, 25, tzinfo=UTC))
    sent = list(Delivery.objects.all())
    about = [mail for mail in sent if subject.name in mail.payload["subject"]]
    assert len(about) >= 5  # notices, escalation, asks, lapses
    assert {tuple(mail.payload["to"]) for mail in about} == {("owner@example.test",)}
    assert all(mail.payload["subject"].startswith("Practice run: ") for mail in about)
    assert not any("real.customer@example.com" in str(mail.payload) for mail in sent)


def test_a_test_clocks_email_with_no_owner_address_goes_to_nobody(portal, actors):
    actors["owner"].email = ""
    actors["owner"].save()
    rehearsal = TestClock.objects.create(brand=portal.brand, name="rehearsal",
                                         frozen_time=datetime(2028, 4, 1, tzinfo=UTC))
    subject = Subject.objects.create(brand=portal.brand, test_clock=rehearsal,
                                     kind="taxpayer", key="55-5555555", name="Quiet Co",
                                     contact_email="real.customer@example.com")
    clocks.order(brand=portal.brand, service="annual-return", subject=subject, period="2027",
                 input=INPUT)
    test_clocks.advance(rehearsal, to=datetime(2028, 4, 25, tzinfo=UTC))
    sent = list(Delivery.objects.all())
    assert not any("real.customer@example.com" in str(mail.payload) for mail in sent)
    assert not any(subject.pk in mail.payload.get("body", "") for mail in sent)
