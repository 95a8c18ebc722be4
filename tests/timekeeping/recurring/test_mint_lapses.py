"""Nothing a schedule should mint lapses silently (S23): a mint the order refuses (the brand's
plan lacks a key the minted service needs) and the periods a catch-up skips after downtime
are each on the subject's record, in the console's needs attention and on the subject's page,
saying who heard, and the brand's owner is emailed. Real clock, in New York."""

import json
from datetime import UTC, date, datetime
from html import unescape

import pytest
from django.test import Client

from timekeeping import manifests
from timekeeping.attention import lists
from timekeeping.basics import wallclock
from timekeeping.clocks import history
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Delivery, Job, Record, Subject
from timekeeping.recurring import plans
from timekeeping.tick import phases

SUBSCRIBED = datetime(2027, 1, 20, 15, tzinfo=UTC)  # 10:00 in New York
MINTS = datetime(2027, 2, 1, 14, 0, 30, tzinfo=UTC)  # the 2026 return's mint: 09:00 EST


@pytest.fixture
def owner_told(brand, actors):
    actors["owner"].email = "owner@northwind.test"
    actors["owner"].save()
    owner = Client()
    owner.force_login(actors["owner"])
    return owner


def _taxpayer(brand) -> Subject:
    return Subject.objects.create(brand=brand, kind="taxpayer", key="98-7654321",
                                  name="Harbor Robotics", zone="America/New_York",
                                  contact_email="finance@harbor.test",
                                  input={"entity": "LLC", "jurisdictions": ["US"]})


def _page(client: Client, path: str, at: datetime) -> str:
    with wallclock.fixed(at):
        answer = client.get(path)
    assert answer.status_code == 200
    return unescape(answer.content.decode())


def test_a_mint_the_plan_lacks_a_key_for_is_recorded_shown_and_emailed(brand, owner_told):
    brand.plan = "launch"  # the Tax Plan runs live on Launch; its annual return's guarantee
    brand.save()  # needs Team, so the mint is refused with plan_lacks_key
    manifests.load(brand, json.loads(TAX_MANIFEST.read_text()))
    subject = _taxpayer(brand)
    with wallclock.fixed(SUBSCRIBED):
        plans.subscribe(subject=subject, service="tax-plan", anchor=date(2027, 1, 20))
    phases.run_once(now=MINTS, phases=False)
    assert not Job.objects.filter(subject=subject).exists()
    refused = Record.objects.get(kind="schedule.mint_refused")
    assert (refused.subject, refused.instant) == (subject.pk, MINTS)
    assert {key: refused.data[key] for key in ("code", "period", "service", "schedule")} == {
        "code": "plan_lacks_key", "period": "2026", "service": "annual-return",
        "schedule": "annual"}
    assert refused.data["told"] == [{"who": "owner", "name": "owner", "emailed": True}]
    said = ("The 2026 annual return for Harbor Robotics was not opened on its schedule: your "
            "plan (Launch) does not include it: it needs the Team plan. Told: owner (the "
            "owner, by email)")
    [item] = [each for each in lists.attention(brand, now=MINTS).items
              if each.kind == "not opened"]
    assert item.text == said and item.failure and item.subject == subject.pk
    assert "plan_lacks_key" in item.details
    home = _page(owner_told, f"/console/{brand.pk}/", MINTS)
    assert said + "." in home and "plan_lacks_key" in home.split(said)[1]
    page = _page(owner_told, f"/console/{brand.pk}/subjects/{subject.pk}/", MINTS)
    attention = page.split('id="attention"')[1].split("</section>")[0]
    assert said in attention and "plan_lacks_key" in attention  # under Details
    assert ("The 2026 annual return was not opened on its schedule: your plan (Launch) does "
            "not include it") in page.split('id="history"')[1]
    [email] = Delivery.objects.filter(payload__subject__startswith="Not opened")
    assert email.payload["to"] == ["owner@northwind.test"]  # the owner's to settle, not the
    assert email.payload["subject"] == ("Not opened: the 2026 annual return for Harbor "
                                        "Robotics")  # customer's
    assert "your plan (Launch) does not include it" in email.payload["body"]
    assert f"/console/{brand.pk}/subjects/{subject.pk}/" in email.payload["body"]
    assert "plan_lacks_key" not in email.payload["body"]
    # The brand's to settle: the customer's portal history does not show it.
    customer = [said.kind for said in history.history(subject, customer=True)]
    assert "schedule.mint_refused" in [said.kind for said in history.history(subject)]
    assert "schedule.mint_refused" not in customer


def _books(catch_up: str) -> dict:
    books = {"subject": {"kind": "client", "period": {"of": "month"}}, "steps": {"close": {}}}
    plan = {"subject": {"kind": "client"},
            "price": {"every": "1mo", "amount": 9900, "currency": "USD",
                      "includes": {"books": 1}},
            "on": {"schedule": {"monthly": {"order": "books", "each": "month", "at": "start",
                                            "catch_up": catch_up}}}}
    return {"calendar": {"zone": "America/New_York", "weekends": [], "rings_at": "09:00"},
            "services": {"books": books, "plan": plan}}


@pytest.mark.parametrize(("catch_up", "skipped", "minted"), [
    ("last", ["2027-02", "2027-03"], ["2027-04"]),
    ("none", ["2027-02", "2027-03", "2027-04"], []),
])
def test_a_catch_up_after_downtime_records_the_periods_it_skips(brand, owner_told, catch_up,
                                                                 skipped, minted):
    manifests.load(brand, _books(catch_up))
    subject = Subject.objects.create(brand=brand, kind="client", key="1", name="Harbor",
                                     zone="America/New_York")
    with wallclock.fixed(datetime(2027, 1, 15, 15, tzinfo=UTC)):
        plans.subscribe(subject=subject, service="plan")
    back = datetime(2027, 4, 10, 15, tzinfo=UTC)  # no tick ran from 15 Jan until 10 Apr
    phases.run_once(now=back, phases=False)
    assert list(Job.objects.filter(subject=subject).values_list("period", flat=True)) == minted
    [record] = Record.objects.filter(kind="schedule.catch_up_skipped")
    assert (record.data["periods"], record.data["count"]) == (skipped, len(skipped))
    # The period armed next: the latest, minted at once (last), or May's (none).
    assert record.data["catch_up"] == catch_up
    assert record.data["next"] == (minted or ["2027-05"])[0]
    assert record.data["told"] == [{"who": "owner", "name": "owner", "emailed": True}]
    [item] = [each for each in lists.attention(brand, now=back).items
              if each.kind == "catch-up"]
    assert f"not opened for {len(skipped)} periods missed while no tick ran " \
           f"({', '.join(skipped)})" in item.text and not item.failure
    page = _page(owner_told, f"/console/{brand.pk}/subjects/{subject.pk}/", back)
    assert item.text in page.split('id="attention"')[1]
    assert f"Nothing opened for {', '.join(skipped)} (books)" in page.split('id="history"')[1]
    [email] = Delivery.objects.filter(payload__subject__startswith="Not opened")
    assert email.payload["to"] == ["owner@northwind.test"]
    assert ", ".join(skipped) in email.payload["subject"]


def test_a_mint_on_time_says_nothing_needs_attention(brand, owner_told):
    manifests.load(brand, _books("last"))
    subject = Subject.objects.create(brand=brand, kind="client", key="1", name="Harbor",
                                     zone="America/New_York")
    with wallclock.fixed(datetime(2027, 1, 15, 15, tzinfo=UTC)):
        plans.subscribe(subject=subject, service="plan")
    on_time = datetime(2027, 2, 1, 14, 0, 30, tzinfo=UTC)
    phases.run_once(now=on_time, phases=False)
    assert Job.objects.filter(subject=subject).count() == 1
    assert lists.of_subject(subject, now=on_time) == []
    assert not Record.objects.filter(kind__in=lists.UNOPENED).exists()


def test_a_mint_refused_for_any_reason_is_recorded_in_the_same_place(brand, owner_told):
    """The subject's input cannot give the minted job's date: refused like any order, and
    recorded as a refused mint with the field under Details."""
    document = _books("last")
    document["services"]["books"]["clocks"] = {"close": {"title": "close the books",
                                                         "due": {"input": "closes"}}}
    manifests.load(brand, document)
    subject = Subject.objects.create(brand=brand, kind="client", key="1", name="Harbor",
                                     zone="America/New_York", input={"closes": "soon"})
    with wallclock.fixed(datetime(2027, 1, 15, 15, tzinfo=UTC)):
        plans.subscribe(subject=subject, service="plan")
    on_time = datetime(2027, 2, 1, 14, 0, 30, tzinfo=UTC)
    phases.run_once(now=on_time, phases=False)
    refused = Record.objects.get(kind="schedule.mint_refused")
    assert (refused.data["code"], refused.data["field"]) == ("order_refused", "input.closes")
    [item] = lists.of_subject(subject, now=on_time)
    assert item.text.startswith("The 2027-02 books for Harbor was not opened on its schedule: "
                                "its order was refused: ")
    assert "input.closes" not in item.text and "input.closes" in item.details
    assert Record.objects.filter(kind="schedule.minted").count() == 0
