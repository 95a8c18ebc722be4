"""Every email a date, an ask, a job and an invitation sends reads in its reader's words
(issue 27, ../shared/WORDS.md): a plain-text part and an HTML part saying the same, a link to
the page that acts on it, and no public id, code or engine word outside the link's address."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.core import mail
from django.core.mail import EmailMultiAlternatives

from tests.timekeeping.portal.conftest import INPUT
from tests.words import engine_words
from timekeeping import clocks
from timekeeping.access import invitations
from timekeeping.basics import wallclock
from timekeeping.models import Subject, TestClock
from timekeeping.tick import phases, test_clocks
from timekeeping.timers import outbox

SITE = "https://time.example.com"
ADDRESS = re.compile(r"https://\S+")


@pytest.fixture(autouse=True)
def site(settings):
    settings.SITE_URL = SITE
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


def tick_to(instant: datetime) -> None:
    with wallclock.fixed(instant):
        phases.run_once(now=instant, sweep=False, phases=False)


def sent_at(instant: datetime) -> list[EmailMultiAlternatives]:
    mail.outbox.clear()
    with wallclock.fixed(instant):
        outbox.sweep(now=instant)
    return list(mail.outbox)


def assert_reads_well(message: EmailMultiAlternatives) -> None:
    ((html, kind),) = message.alternatives
    assert kind == "text/html"
    links = ADDRESS.findall(message.body)
    assert links and all(link.startswith(SITE) for link in links), message.subject
    assert all(f'<a href="{link}"' in html for link in links), message.subject
    words = ADDRESS.sub("", f"{message.subject}\n{message.body}")
    assert engine_words(words) == [], (message.subject, engine_words(words))
    assert not re.search(r"\d{4}-\d{2}-\d{2}", words), message.subject  # days as people say


def test_the_customers_and_owners_emails_about_a_year_of_dates_read_well(portal):
    end = datetime(2028, 4, 25, 17, tzinfo=UTC)
    for day in range(0, 60):  # each morning from 26 February to 25 April 2028, there
        tick_to(end - timedelta(days=59 - day))
    made = invitations.invite(subject=portal.subject, email="new@fernhill.example",
                              by=portal.brand.owner, now=end)
    messages = sent_at(end)
    subjects = {message.subject for message in messages}
    assert "30-day reminder: file the 2027 return (US) for Fernhill Tools is due " \
           "Tue 18 Apr 2028" in subjects
    assert "Missed: pay the 2027 tax for Fernhill Tools was due Tue 18 Apr 2028" in subjects
    assert any(subject.startswith("Please acknowledge: ") for subject in subjects)
    assert "Northwind Filing invites you to see the dates of Fernhill Tools" in subjects
    assert len(messages) >= 8
    for message in messages:
        assert_reads_well(message)
    invited = next(m for m in messages if m.to == [made.email])
    assert f"{SITE}/accounts/invitations/" in invited.body
    customer = next(m for m in messages if m.subject.startswith("Missed: pay")
                    and m.to == ["books@fernhill.example"])
    assert f"{SITE}/portal/subjects/{portal.subject.pk}/" in customer.body


def test_a_practice_runs_emails_say_so_in_plain_words(portal):
    rehearsal = TestClock.objects.create(brand=portal.brand, name="rehearsal",
                                         frozen_time=datetime(2028, 3, 1, tzinfo=UTC))
    subject = Subject.objects.create(brand=portal.brand, test_clock=rehearsal,
                                     kind="taxpayer", key="44-4444444", name="Real Customer Co",
                                     zone="America/Chicago",
                                     contact_email="real.customer@example.com")
    clocks.order(brand=portal.brand, service="annual-return", subject=subject, period="2027",
                 input=INPUT)
    test_clocks.advance(rehearsal, to=datetime(2028, 4, 25, tzinfo=UTC))
    messages = sent_at(datetime(2028, 4, 25, tzinfo=UTC))
    about = [message for message in messages if "Real Customer Co" in message.subject]
    assert len(about) >= 5  # reminders, an escalation, an ask, missed dates
    for message in about:
        assert message.subject.startswith("Practice run: ")
        assert message.to == ["owner@example.test"]
        assert_reads_well(message)
