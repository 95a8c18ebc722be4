"""Erasing a subject (issue 31 item 4): its personal data leaves every table, page, feed, email
and record; its anonymous record (jobs, dates, history's kinds and instants) stays; nothing of
it fires or is sent afterwards; and nothing new can be done for it
(`timekeeping.subjects.erasing`, through the API, the console and the command).

Juniper Labs, a New York client of Northwind Filing, has everything personal data can reach: a
contact and an owner's name, facts, a 2027 return whose organizer is asked of Sam Reyes by
email, a plan, a customer account that acknowledged a date, a pending invitation, emails sent
and unsent, the owner's digest naming it, and events delivered to a webhook receiver."""

import json
import re
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.apps import apps
from django.contrib.admin.utils import quote
from django.contrib.auth import get_user_model
from django.core import mail, serializers
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from tests.words import engine_words, visible_text
from timekeeping import clocks, manifests
from timekeeping.access import invitations
from timekeeping.basics import wallclock
from timekeeping.digests import choose, send
from timekeeping.models import (
    Ask,
    Customer,
    CustomerSubject,
    Delivery,
    Invitation,
    Job,
    Member,
    Occurrence,
    Record,
    Subject,
    Subscription,
    Timer,
)
from timekeeping.recurring import plans
from timekeeping.subjects import erasing, making
from timekeeping.tick import phases
from timekeeping.timers import delays, outbox, records
from timekeeping.webhooks import endpoints

NEW_YORK = ZoneInfo("America/New_York")
T0 = datetime(2028, 3, 1, 9, 30, tzinfo=NEW_YORK)
ERASED_AT = datetime(2028, 3, 3, 11, 0, tzinfo=NEW_YORK)  # Fri 3 Mar 2028
# What Juniper Labs' personal data is: its name, key, owner, contact, a fact, the customer's
# second address.
PERSONAL = ("Juniper Labs", "12-3456789", "Sam Reyes", "books@juniper.example",
            "Rosa Delgado", "sam@juniper.example")
LIVE = [Timer.State.ARMED, Timer.State.HELD]
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def juniper(brand, actors, receiver):
    from tests.timekeeping.console.conftest import tax

    manifests.load(brand, tax())
    actors["owner"].email = "owner@northwind.example"
    actors["owner"].save(update_fields=["email"])
    endpoints.make(brand, url=receiver.url)  # hears every event
    with wallclock.fixed(T0):
        subject = making.make(brand, kind="taxpayer", key="12-3456789", name="Juniper Labs",
                              zone="America/New_York", contact_email="books@juniper.example",
                              owner_name="Sam Reyes",
                              input={"entity": "C corp", "advisor": "Rosa Delgado"})
        clocks.order(brand=brand, service="annual-return", subject=subject, period="2027",
                     input={"jurisdictions": ["US", "US-CA"], "advisor": "Rosa Delgado"})
        plans.subscribe(subject=subject, service="tax-plan", by="the test")
        invited = invitations.invite(subject=subject, email="books@juniper.example",
                                     by=actors["owner"], now=T0)
        customer = invitations.accept(invited, now=T0, password="a long passphrase 42")
        date = Occurrence.objects.filter(clock__subject=subject, status="open").first()
        clocks.acknowledge(date, by=records.person(customer))
        invitations.invite(subject=subject, email="sam@juniper.example", by=actors["owner"],
                           now=T0)
        choose.digest_set(brand=brand, user=actors["owner"], period="daily",
                          zone="America/New_York", hour=8, weekday=0, now=T0)
        delays.delay("jobs.order", {"subject": subject.pk, "service": "annual-return",
                                    "period": "2028", "input": {"advisor": "Rosa Delgado"}},
                     brand=brand, at=T0 + timedelta(days=300), key="order:juniper:2028")
    outbox.sweep(now=T0 + timedelta(minutes=1))  # emails and events sent
    send.run_due(now=datetime(2028, 3, 2, 8, 5, tzinfo=NEW_YORK))  # the digest, not yet sent
    with wallclock.fixed(ERASED_AT - timedelta(hours=1)):
        invitations.invite(subject=subject, email="sam@juniper.example", by=actors["owner"],
                           now=ERASED_AT - timedelta(hours=1))  # its email not yet sent
    return subject


def _owner(actors) -> Client:
    client = Client()
    client.force_login(actors["owner"])
    return client


def _erase(actors, subject):
    with wallclock.fixed(ERASED_AT):
        return _owner(actors).post(f"/api/subjects/{subject.pk}/erase")


def _kept() -> str:
    """Every row the product keeps, in every table of its own, Django's users and sessions
    among them, as one text."""
    labels = {"timekeeping", "money", "calendars", "auth", "sessions", "admin", "axes"}
    return "\n".join(serializers.serialize("json", model._base_manager.all())
                     for model in apps.get_models() if model._meta.app_label in labels).lower()


def _found(text: str) -> list[str]:
    return [each for each in PERSONAL if each.lower() in text.lower()]


def test_the_personal_data_is_there_before(juniper):
    assert _found(_kept()) == list(PERSONAL)
    assert Record.objects.filter(kind="ask.opened", data__party="Sam Reyes").exists()


def test_erasing_takes_the_personal_data_out_of_every_table(juniper, actors):
    answer = _erase(actors, juniper)
    assert answer.status_code == 200, answer.content
    said = answer.json()
    assert said["subject"] == juniper.pk and said["erased"] == "2028-03-03T16:00:00Z"
    assert {key: said[key] for key in ("jobs", "plans", "customers", "accounts", "invitations")
            } == {"jobs": 1, "plans": 1, "customers": 1, "accounts": 1, "invitations": 3}
    assert said["emails"] == 1 and said["records"] >= 2 and said["timers"] > 5
    assert _found(_kept()) == []
    erased = Subject.objects.get(pk=juniper.pk)
    assert (erased.name, erased.key, erased.input, erased.contact_email, erased.owner_name) == (
        "Erased subject", juniper.pk, {}, "", "")
    assert erased.erased == ERASED_AT and erased.feed_token != juniper.feed_token
    assert not get_user_model().objects.filter(username="books@juniper.example").exists()
    assert not Customer.objects.exists() and not Invitation.objects.exists()
    assert Ask.objects.get().email == "" and Job.objects.get(service="annual-return").input == {}


def test_its_anonymous_record_stays(juniper, actors):
    rows = Record.objects.filter(subject=juniper.pk)
    before = set(rows.values_list("id", "kind", "instant", "job"))
    dates = Occurrence.objects.filter(clock__subject=juniper).count()
    _erase(actors, juniper)
    after = set(rows.values_list("id", "kind", "instant", "job"))
    assert before < after  # every record, its kind, instant and job kept
    assert sorted(kind for _, kind, _, _ in after - before) == [
        "job.cancelled", "subject.erased", "subscription.ended"]
    assert Occurrence.objects.filter(clock__subject=juniper).count() == dates
    assert set(Occurrence.objects.filter(clock__subject=juniper).values_list(
        "status", flat=True)) <= {"closed", "satisfied"}
    assert Job.objects.get(subject=juniper, service="annual-return").state == "cancelled"
    assert Subscription.objects.get(subject=juniper).state == "cancelled"
    opened = Record.objects.get(subject=juniper.pk, kind="ask.opened")
    assert opened.data["party"] == "[erased]" and opened.data["step"] == "organizer"
    acknowledged = Record.objects.get(subject=juniper.pk, kind="clock.acknowledged")
    assert re.fullmatch(r"user \d+ \(\[erased\]\)", acknowledged.data["by"])


def test_nothing_fires_or_is_sent_for_it_afterwards(juniper, actors):
    assert Timer.objects.filter(brand=juniper.brand, state__in=LIVE).count() > 5
    mail.outbox.clear()
    _erase(actors, juniper)
    assert not Timer.objects.filter(brand=juniper.brand, state__in=LIVE).exists()
    assert Timer.objects.get(key="order:juniper:2028").state == "cancelled"
    fired = Record.objects.filter(kind="timer.fired").count()
    for days in (1, 30, 200, 400):  # past every reminder, date, renewal and mint it had
        at = ERASED_AT + timedelta(days=days)
        with wallclock.fixed(at):
            assert phases.run_once(now=at).faults == []
    assert Record.objects.filter(kind="timer.fired").count() == fired
    sent = [(email.to, email.subject, email.body) for email in mail.outbox]
    assert _found(json.dumps(sent)) == []
    assert all(to == ["owner@northwind.example"] for to, _, _ in sent)  # digests only


def test_unsent_emails_about_it_are_dropped_and_the_digest_naming_it_goes_without_it(
        juniper, actors):
    unsent = Delivery.objects.filter(state="pending", channel="email")
    assert {key.split(":")[0] for key in unsent.values_list("idempotency_key", flat=True)} == {
        "invitation", "digest"}
    # The first invitation to Sam failed for good, as ten failed tries leave an email.
    first = Delivery.objects.get(state="succeeded", payload__to=["sam@juniper.example"])
    Delivery.objects.filter(pk=first.pk).update(state="failed", last_error="550 no mailbox")
    sent = Delivery.objects.filter(state="succeeded", channel="email").count()
    assert _erase(actors, juniper).json()["emails"] == 2
    assert not Delivery.objects.filter(state="failed").exists()
    assert Delivery.objects.filter(state="succeeded", channel="email").count() == sent
    [digest] = Delivery.objects.filter(state="pending", channel="email")
    assert digest.idempotency_key.startswith("digest:")
    assert "[erased]: The annual return job for 2027 was opened." in digest.payload["body"]
    assert _found(json.dumps(digest.payload)) == []


def test_the_pages_the_api_and_the_feed_no_longer_say_it(juniper, actors):
    owner = _owner(actors)
    feed = f"/subjects/{juniper.pk}/calendar.ics?token={juniper.feed_token}"
    assert owner.get(feed).status_code == 200
    _erase(actors, juniper)
    page = owner.get(f"/console/{juniper.brand_id}/subjects/{juniper.pk}/")
    text = re.sub(r"<[^>]+>", " ", page.content.decode())
    assert "Erased on" in text and "Fri 3 Mar 2028" in text and _found(text) == []
    assert "Make a new link" not in text and "Send the invitation" not in text
    assert engine_words(visible_text(page.content.decode())) == []
    assert "[erased] was asked by a link for organizer" in text  # its history, without Sam
    listed = owner.get(f"/console/{juniper.brand_id}/subjects/").content.decode()
    assert "Erased subject" in listed and _found(listed) == []
    assert "erased on Fri 3 Mar 2028, 11:00 EST" in listed
    read = owner.get(f"/api/subjects/{juniper.pk}").json()
    assert read["erased"] == "2028-03-03T16:00:00Z" and _found(json.dumps(read)) == []
    assert owner.get(feed).status_code == 404
    fresh = Subject.objects.get(pk=juniper.pk).feed_token
    assert owner.get(f"/subjects/{juniper.pk}/calendar.ics?token={fresh}").status_code == 404
    events = owner.get(f"/api/brands/{juniper.brand_id}/events").json()
    assert _found(json.dumps(events)) == []
    [erased] = [each for each in events["results"] if each["type"] == "subject.erased"]
    assert erased["subject"] == juniper.pk and engine_words(erased["summary"]) == []
    assert erased["summary"].startswith("The subject's personal data was erased by owner: its "
                                        "name, contact and facts are gone; 1 open job was "
                                        "cancelled, 1 plan ended")


def test_an_event_sent_again_carries_no_personal_data(juniper, actors, receiver):
    opened = Record.objects.get(subject=juniper.pk, kind="ask.opened")
    assert b"Sam Reyes" in b"".join(body for _, body in receiver.requests)
    _erase(actors, juniper)
    receiver.requests.clear()
    endpoints.resend(endpoints.WebhookEndpoint.objects.get(), opened.pk)
    outbox.sweep(now=ERASED_AT + timedelta(minutes=1))
    [(headers, body)] = [each for each in receiver.requests
                         if each[0]["webhook-id"] == opened.pk]
    assert _found(body.decode()) == [] and json.loads(body)["data"]["party"] == "[erased]"


def test_nothing_new_is_done_for_an_erased_subject(juniper, actors):
    _erase(actors, juniper)
    owner = _owner(actors)
    ordered = owner.post("/api/jobs", {"service": "annual-return", "subject": juniper.pk,
                                       "period": "2028"}, content_type="application/json")
    assert ordered.status_code == 400 and "was erased on 2028-03-03" in ordered.json()["subject"][0]
    subscribed = owner.post("/api/subscriptions", {"subject": juniper.pk, "service": "tax-plan"},
                            content_type="application/json")
    assert subscribed.status_code == 400 and "erased" in subscribed.json()["subject"][0]
    event = owner.post(f"/api/subjects/{juniper.pk}/events",
                       {"event": "notice.received", "key": "CP2000",
                        "input": {"reply_by": "2028-05-01"}}, content_type="application/json")
    assert event.status_code == 400 and "erased" in event.json()["subject"][0]
    token = owner.post(f"/api/subjects/{juniper.pk}/calendar/token")
    assert token.status_code == 409 and token.json()["code"] == "subject_erased"
    with pytest.raises(invitations.InvitationRefused, match="nobody can be invited"):
        invitations.invite(subject=Subject.objects.get(pk=juniper.pk), email="x@example.com",
                           by=actors["owner"], now=ERASED_AT)
    assert Job.objects.filter(subject=juniper).count() == 1


def test_erasing_twice_says_it_was_erased_already_and_changes_nothing(juniper, actors):
    _erase(actors, juniper)
    kept = Record.objects.count()
    again = _erase(actors, juniper)
    assert again.status_code == 409
    assert again.json() == {"code": "subject_erased", "detail": f"{juniper.pk} was erased on "
                            "2028-03-03: there is nothing left to erase"}
    assert Record.objects.count() == kept


def test_only_the_owner_erases_and_a_stranger_hears_not_found(juniper, actors, brand):
    staff = Member.objects.create(brand=brand, user=actors["staff"], role="manager")
    for who, status in ((staff.user, 403), (actors["outsider"], 404)):
        client = Client()
        client.force_login(who)
        assert client.post(f"/api/subjects/{juniper.pk}/erase").status_code == status
        assert client.post(f"/console/{brand.pk}/subjects/{juniper.pk}/erase",
                           {"confirmed": "yes"}).status_code == status
    assert Subject.objects.get(pk=juniper.pk).erased is None


def test_a_customer_of_another_subject_keeps_their_account_and_that_subject(brand, actors):
    with wallclock.fixed(T0):
        juniper = making.make(brand, kind="taxpayer", key="1", name="Juniper Labs")
        cedar = making.make(brand, kind="taxpayer", key="2", name="Cedar Mill")
    customer = Customer.objects.create(brand=brand, user=actors["buyer"])
    for each in (juniper, cedar):
        customer.subjects.add(each, through_defaults={"brand": brand})
    erased = erasing.erase(juniper, by="the test")
    assert (erased.customers, erased.accounts) == (1, 0)
    assert list(CustomerSubject.objects.values_list("subject_id", flat=True)) == [cedar.pk]
    assert get_user_model().objects.filter(username="buyer").exists()


def test_the_console_asks_first_in_plain_words_then_says_what_was_done(juniper, actors):
    owner = _owner(actors)
    path = f"/console/{juniper.brand_id}/subjects/{juniper.pk}/erase"
    asked = owner.post(path)
    text = asked.content.decode()
    assert asked.status_code == 200 and "Erase Juniper Labs’s personal data for good?" in \
        text.replace("&#x27;", "’").replace("'", "’")
    assert "This cannot be undone." in text and Subject.objects.get(pk=juniper.pk).erased is None
    assert engine_words(visible_text(text)) == []
    with wallclock.fixed(ERASED_AT):
        done = owner.post(path, {"confirmed": "yes"}, follow=True)
    said = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", done.content.decode()))
    assert "Erased: its name, key, contact and facts are gone; 1 open job cancelled, 1 plan " \
           "ended" in said
    assert "Its jobs, dates and history stay, without personal data." in said
    assert _found(said) == []
    again = owner.post(path, {"confirmed": "yes"}, follow=True).content.decode()
    assert "Not erased: it was erased on Fri 3 Mar 2028 already, so there is nothing left " \
           "to erase." in again


def test_the_command_erases_once_it_is_told_yes(juniper, capsys):
    with pytest.raises(CommandError, match="--yes: erasing .* cannot be undone"):
        call_command("subjects", "erase", juniper.pk)
    assert Subject.objects.get(pk=juniper.pk).erased is None
    with wallclock.fixed(ERASED_AT):
        call_command("subjects", "erase", juniper.pk, "--yes", "--by", "ops (ticket 88)")
    assert f"{juniper.pk} erased at 2028-03-03T16:00:00Z · jobs 1, plans 1" in \
        capsys.readouterr().out
    assert Record.objects.get(kind="subject.erased").data["by"] == "ops (ticket 88)"
    with pytest.raises(CommandError, match="was erased on 2028-03-03"):
        call_command("subjects", "erase", juniper.pk, "--yes")


def test_the_admin_only_reads_an_erased_subject(juniper, actors, admin_client_logged_in):
    # Quoted as the admin quotes an id: an id whose digits after its `_` read as hexadecimal
    # ("sbj_25…") was unquoted into another id, and the page answered that none exists.
    page = f"/admin/timekeeping/subject/{quote(juniper.pk)}/change/"
    assert 'name="_save"' in admin_client_logged_in.get(page).content.decode()
    _erase(actors, juniper)
    shown = admin_client_logged_in.get(page)
    assert shown.status_code == 200 and 'name="_save"' not in shown.content.decode()
    assert admin_client_logged_in.post(page, {"name": "Juniper Labs"}).status_code == 403
    assert Subject.objects.get(pk=juniper.pk).name == "Erased subject"


def test_a_member_linked_as_its_customer_is_the_brands_not_the_subjects(brand, actors):
    """The brand's owner tried the portal with their own account and address: erasing the
    subject leaves their name, their account and their emails alone."""
    owner = actors["owner"]
    owner.email = "owner@northwind.example"
    owner.save(update_fields=["email"])
    with wallclock.fixed(T0):
        juniper = making.make(brand, kind="taxpayer", key="12-3456789", name="Juniper Labs",
                              contact_email="owner@northwind.example")
    Customer.objects.create(brand=brand, user=owner).subjects.add(
        juniper, through_defaults={"brand": brand})
    outbox.enqueue_email(brand=brand, to=["owner@northwind.example"], subject="Your digest",
                         body="Nothing at risk today.", key="digest:owner:1")
    with wallclock.fixed(T0):
        records.write("clock.acknowledged", brand=brand, instant=T0, subject=juniper.pk,
                      data={"by": records.person(owner)})
        erasing.erase(juniper, by=records.person(owner))
    assert Delivery.objects.get(idempotency_key="digest:owner:1").payload["to"] == [
        "owner@northwind.example"]
    assert Record.objects.get(kind="clock.acknowledged").data["by"] == records.person(owner)
    assert get_user_model().objects.filter(pk=owner.pk).exists()


def test_a_subject_in_a_test_world_is_erased_and_its_walk_fires_nothing_of_it(
        brand, actors, test_clock):
    from tests.timekeeping.console.conftest import tax
    from timekeeping.tick import test_clocks

    manifests.load(brand, tax())
    subject = making.make(brand, kind="taxpayer", key="12-3456789", name="Juniper Labs",
                          owner_name="Sam Reyes", contact_email="books@juniper.example",
                          test_clock=test_clock)
    clocks.order(brand=brand, service="annual-return", subject=subject, period="2027",
                 input={"jurisdictions": ["US", "US-CA"]})
    owner = _owner(actors)

    def walk(to: str) -> None:
        assert owner.post(f"/api/test_clocks/{test_clock.pk}/advance", {"to": to},
                          content_type="application/json").status_code == 202
        test_clocks.drive(test_clocks.walking(test_clock))

    walk("2028-04-01T00:00:00Z")
    fired = Record.objects.filter(kind="timer.fired", test_clock=test_clock).count()
    assert fired > 0
    assert owner.post(f"/api/subjects/{subject.pk}/erase").status_code == 200
    walk("2029-12-31T00:00:00Z")
    assert Record.objects.filter(kind="timer.fired", test_clock=test_clock).count() == fired
    erased = Record.objects.get(kind="subject.erased")
    assert erased.test_clock_id == test_clock.pk and erased.instant == datetime(
        2028, 4, 1, tzinfo=ZoneInfo("UTC"))  # on the world's own clock
    assert _found(_kept()) == []
