"""Stewards (S16) on the real clock, fixed at instants in Los Angeles' and New York's days:
a carryforward date's notice goes to the steward's keeper once the job ends; the portal offers
to keep the customer's dates, orders the steward service at its price, and then says who keeps
them; the console and the API say it too; a stranger's offer answers 404."""

from datetime import UTC, datetime

import pytest
from django.test import Client

from tests.timekeeping.test_stewards import KEEPER, keeper_of, with_steward
from timekeeping import manifests
from timekeeping.access import once
from timekeeping.basics import wallclock
from timekeeping.jobs import lifecycle
from timekeeping.models import Clock, Delivery, Job, Member, Record
from timekeeping.tick import phases

ENDED = datetime(2028, 5, 2, 16, tzinfo=UTC)  # 09:00 in Los Angeles, the subject's zone
NOTICE = datetime(2046, 7, 4, 16, tzinfo=UTC)  # 180 days before 31 Dec 2046, 09:00 there


@pytest.fixture
def stewarded(portal):
    """The portal's brand, with a steward service in its manifest's next version."""
    manifests.load(portal.brand, with_steward())
    return portal


def end_return(portal) -> Clock:
    with wallclock.fixed(ENDED):
        lifecycle.end(portal.job, by="owner")
    return portal.clock("credit-expiry")


def keep(client: Client, portal, **fields):
    with wallclock.fixed(ENDED):
        return client.post(f"/portal/subjects/{portal.subject.pk}/keep",
                           {"confirmed": "yes", **fields})


def notices(clock: Clock) -> list[Delivery]:
    return list(Delivery.objects.filter(
        idempotency_key__startswith=f"{clock.pk}:notice 180d"))


def test_the_next_notice_of_a_date_a_steward_keeps_goes_to_its_keeper(stewarded, actors):
    ana = keeper_of(stewarded.brand, actors)
    assert keep(stewarded.client, stewarded).status_code == 302
    kept = end_return(stewarded)
    assert (kept.steward.service, kept.keeper) == ("date-keeping", ana)
    with wallclock.fixed(NOTICE):
        phases.run_once(now=NOTICE, sweep=False, phases=False)
    (mail,) = notices(kept)
    assert mail.payload["to"] == [KEEPER]
    assert f"/console/{stewarded.brand.pk}/subjects/{stewarded.subject.pk}/" in \
        mail.payload["body"]


def test_without_a_steward_the_notice_goes_to_the_dates_owner(stewarded):
    kept = end_return(stewarded)
    assert Record.objects.get(kind="clock.kept", data__clock=kept.pk).data["keeper"] == "owner"
    with wallclock.fixed(NOTICE):
        phases.run_once(now=NOTICE, sweep=False, phases=False)
    (mail,) = notices(kept)
    assert mail.payload["to"] == ["owner@example.test"]  # the brand owns credit-expiry


def test_the_portal_offers_to_keep_the_dates_and_orders_the_steward_at_its_price(stewarded,
                                                                                 actors):
    keeper_of(stewarded.brand, actors)
    end_return(stewarded)
    page = stewarded.client.get(f"/portal/subjects/{stewarded.subject.pk}/").content.decode()
    assert "Dates that outlive the work" in page
    assert "no one keeps it for you" in page and "$120.00 once" in page
    assert "Keep these dates with us" in page
    asked = stewarded.client.post(f"/portal/subjects/{stewarded.subject.pk}/keep")
    assert asked.status_code == 200 and "It costs $120.00, once." in asked.content.decode()
    assert not Job.objects.filter(service="date-keeping").exists()  # asked first, nothing done
    token = once.token()
    answer = keep(stewarded.client, stewarded, once=token)
    assert answer.status_code == 302 and answer["Location"].endswith("#between")
    steward = Job.objects.get(subject=stewarded.subject, service="date-keeping")
    assert Record.objects.get(job=steward.pk, kind="charge.held").data["amount"] == 12000
    assert stewarded.clock("credit-expiry").steward == steward
    page = stewarded.client.get(f"/portal/subjects/{stewarded.subject.pk}/").content.decode()
    assert "we keep this date for you (Ana Ruiz)" in page
    assert "Keep these dates with us" not in page
    # The same form again, and a new one: ordered and charged once.
    again = stewarded.client.get(keep(stewarded.client, stewarded, once=token)["Location"])
    assert "That was already done." in again.content.decode()
    later = stewarded.client.get(keep(stewarded.client, stewarded)["Location"])
    assert "keeps these dates for you already" in later.content.decode()
    assert Job.objects.filter(service="date-keeping").count() == 1


def test_the_console_and_the_api_say_who_keeps_each_date(stewarded, actors, client):
    end_return(stewarded)
    client.force_login(actors["owner"])
    subject_page = f"/console/{stewarded.brand.pk}/subjects/{stewarded.subject.pk}/"
    assert "kept by its owner, Northwind Filing; no one keeps it for the client between jobs" in \
        client.get(subject_page).content.decode()
    ana = keeper_of(stewarded.brand, actors)
    keep(stewarded.client, stewarded)
    assert "kept for the client between jobs by Ana Ruiz (date keeping)" in \
        client.get(subject_page).content.decode()
    kept = stewarded.clock("credit-expiry")
    read = client.get(f"/api/clocks/{kept.pk}").json()
    assert read["kept_by"] == {"keeper": "steward", "steward": kept.steward_id,
                               "member": ana.pk}
    listed = client.get(f"/api/clocks?job={stewarded.job.pk}").json()["results"]
    assert {row["name"]: row["kept_by"]["keeper"] for row in listed}["file"] == "job"


def test_a_stranger_gets_404_on_the_offer_and_nothing_is_ordered(stewarded, second_customer):
    for subject in (stewarded.subject, stewarded.strangers):
        answer = second_customer.post(f"/portal/subjects/{subject.pk}/keep",
                                      {"confirmed": "yes"})
        assert answer.status_code == 404
    assert stewarded.client.post(f"/portal/subjects/{stewarded.others.pk}/keep",
                                 {"confirmed": "yes"}).status_code == 404
    assert not Job.objects.filter(service="date-keeping").exists()
    assert not Member.objects.exists()
