"""A job paid by its outcome (S21): its wait, a window per payment method and invoice that
holds the share and the member's share pay, reversals inside it, and a tail after a lost end.
Through the API and the tick, on a New York test clock across the autumn change (7 November
2027): a 60-day window armed in October closes at 09:00 EST, not EDT."""

from datetime import UTC, datetime

import pytest
from django.test import Client

from money import ledger
from timekeeping import clocks, manifests
from timekeeping.clocks import history, subject_calendar
from timekeeping.jobs import tasks
from timekeeping.models import Delivery, Job, Member, Outcome, Record, Subject, Task, Timer
from timekeeping.tick import test_clocks

START = datetime(2027, 9, 20, 13, tzinfo=UTC)  # Monday 09:00 EDT


def document(collect: str = "each", **outcome) -> dict:
    work = {"subject": {"kind": "client"},
            "deliver": {"claim": {"task": True, "hold": "2d"}},
            "price": {"share": "25%", "currency": "USD"},
            "outcome": {"due": "30d", "window": {"bank": "60d", "card": "120d"},
                        "collect": collect, "pay": "40%", **outcome}}
    return {"calendar": {"zone": "America/New_York", "weekends": []},
            "services": {"recovery": work}}


@pytest.fixture
def claim(brand, actors):
    actors["owner"].email = "owner@northwind.test"
    actors["owner"].save()
    api = Client()
    api.force_login(actors["owner"])

    def make(collect: str = "each", **outcome):
        manifests.load(brand, document(collect, **outcome))
        clock = test_clocks.create(brand=brand, name="autumn", frozen_time=START)
        subject = Subject.objects.create(brand=brand, test_clock=clock, kind="client", key="1",
                                         name="Harbor", zone="America/New_York",
                                         contact_email="g@harbor.test")
        job = clocks.order(brand=brand, service="recovery", subject=subject)
        member = Member.objects.create(brand=brand, user=actors["staff"], role="manager")
        task = Task.objects.get(job=job)
        tasks.take(task, member)
        assert tasks.finish(Task.objects.get(pk=task.pk), member).committed
        return clock, job, member, api
    return make


def _advance(clock, to):
    clock.refresh_from_db()
    return test_clocks.advance(clock, to=to)


def _pay(api, outcome, invoice, amount=400000, method="bank"):
    return api.post(f"/api/outcomes/{outcome.pk}/payments",
                    {"amount": amount, "currency": "USD", "method": method, "invoice": invoice},
                    content_type="application/json")


def test_each_invoice_holds_its_share_and_pay_until_its_window_closes(claim):
    clock, job, member, api = claim()
    outcome = Outcome.objects.get(job=job)
    assert outcome.due == datetime(2027, 10, 20, 13, tzinfo=UTC)  # 30 days, 09:00 EDT
    _advance(clock, datetime(2027, 10, 1, 13, tzinfo=UTC))
    first = _pay(api, outcome, "INV-1")
    assert first.status_code == 201, first.json()
    said = first.json()
    # A quarter of $4,000 is the brand's; 40% of that is the member's pay. Held, not earned.
    assert (said["charge"], said["pay"], said["member"], said["won"]) == (100000, 40000,
                                                                            member.pk, True)
    # 60 days from 1 October 09:00 EDT is 30 November 09:00 EST: 14:00Z.
    assert said["closes"] == "2027-11-30T14:00:00Z"
    customer = f"{job.brand_id}:customer:{job.subject_id}"
    assert ledger.balance(customer, brand=job.brand_id) == -100000
    assert ledger.balance(f"{job.brand_id}:earned:USD", brand=job.brand_id) == 0
    # A card payment of a second invoice has its own, longer window.
    assert _pay(api, outcome, "INV-2", 200000, "card").json()["closes"] == \
        "2028-01-29T14:00:00Z"
    # The due no longer lapses anything: it was won.
    assert Outcome.objects.get(pk=outcome.pk).state == "won"
    assert not Timer.objects.filter(key=f"{outcome.pk}:due", state="armed").exists()
    windows = Timer.objects.filter(key__startswith=f"{outcome.pk}:window:").order_by("owed")
    assert [t.key for t in windows] == [f"{outcome.pk}:window:INV-1",
                                        f"{outcome.pk}:window:INV-2"]

    _advance(clock, datetime(2027, 11, 30, 14, tzinfo=UTC))
    assert ledger.balance(f"{job.brand_id}:earned:USD", brand=job.brand_id) == 100000
    assert ledger.balance(f"{job.brand_id}:pay:{member.pk}:USD", brand=job.brand_id) == 40000
    # Final: a refund after the window is refused by name, and nothing moves.
    late = api.post(f"/api/outcomes/{outcome.pk}/reversals",
                    {"invoice": "INV-1", "why": "refund"}, content_type="application/json")
    assert late.status_code == 400 and "not in its window: it is taken" in late.json()[
        "invoice"][0]
    # A chargeback of the card invoice inside its window gives back both its holds.
    back = api.post(f"/api/outcomes/{outcome.pk}/reversals",
                    {"invoice": "INV-2", "why": "chargeback"}, content_type="application/json")
    assert back.status_code == 201 and back.json()["collected"] == 400000
    assert ledger.balance(customer, brand=job.brand_id) == -100000
    _advance(clock, datetime(2028, 2, 1, 14, tzinfo=UTC))
    assert ledger.balance(f"{job.brand_id}:earned:USD", brand=job.brand_id) == 100000
    assert sorted(Record.objects.filter(kind__startswith="outcome.").values_list(
        "kind", flat=True)) == ["outcome.collected", "outcome.collected", "outcome.final",
                                "outcome.opened", "outcome.reversed"]
    story = " ".join(line.text for line in history.history(job.subject))
    assert "INV-1 was collected: $4,000.00 by bank; $1,000.00 share and $400.00 " \
           "pay held until Tue 30 Nov 2027" in story
    assert "Invoice INV-2 was reversed (chargeback)" in story


def test_collect_once_is_won_by_one_payment_and_refuses_a_second(claim):
    clock, job, _, api = claim(collect="once")
    outcome = Outcome.objects.get(job=job)
    assert _pay(api, outcome, "A").status_code == 201
    again = _pay(api, outcome, "B")
    assert again.status_code == 400 and "collected once" in again.json()["invoice"][0]
    twice = _pay(api, Outcome.objects.get(pk=outcome.pk), "A")
    assert twice.status_code == 400


def test_no_payment_by_its_due_lapses_it_and_the_tail_still_wins_it_once(claim):
    clock, job, member, api = claim(tail="90d")
    outcome = Outcome.objects.get(job=job)
    _advance(clock, datetime(2027, 10, 20, 13, tzinfo=UTC))
    lapsed = Outcome.objects.get(pk=outcome.pk)
    assert lapsed.state == "lapsed"
    # The tail is 90 days from the lapse: 18 January 2028, 09:00 EST.
    assert lapsed.tail_until == datetime(2028, 1, 18, 14, tzinfo=UTC)
    assert ledger.balance(f"{job.brand_id}:customer:{job.subject_id}", brand=job.brand_id) == 0
    told = Delivery.objects.filter(
        payload__subject__startswith="Practice run: Nothing charged: the result")
    assert told.count() == 3  # buyer, member, owner: on a test clock, each to the owner
    console = api.get(f"/console/{job.brand_id}/", {"test": clock.pk}).content.decode()
    assert "No payment matched the outcome" in console and "so nothing is charged" in console
    assert f"outcome.lapsed · job {job.pk}" in console  # the ids under Details
    # A payment inside the tail turns it won, charged once like any other.
    _advance(clock, datetime(2028, 1, 10, 14, tzinfo=UTC))
    won = _pay(api, lapsed, "LATE-1")
    assert won.status_code == 201 and won.json()["won"] is True
    assert Outcome.objects.get(pk=outcome.pk).state == "won"
    assert not Timer.objects.filter(key=f"{outcome.pk}:tail", state="armed").exists()


def test_after_the_tail_or_without_one_a_lost_outcome_refuses_payments(claim):
    clock, job, _, api = claim(tail="10d")
    outcome = Outcome.objects.get(job=job)
    lost = api.post(f"/api/outcomes/{outcome.pk}/lost", {"why": "claim denied"},
                    content_type="application/json")
    assert lost.status_code == 200 and lost.json()["state"] == "lost"
    assert lost.json()["tail_until"] == "2027-09-30T13:00:00Z"
    _advance(clock, datetime(2027, 9, 30, 13, tzinfo=UTC))
    refused = _pay(api, Outcome.objects.get(pk=outcome.pk), "X")
    assert refused.status_code == 400
    assert "lost at 2027-09-20 13:00Z and its tail ended at 2027-09-30 13:00Z" in \
        refused.json()["outcome"][0]
    assert Record.objects.filter(kind="outcome.tail_ended").count() == 1
    assert not Record.objects.filter(kind="outcome.collected").exists()


@pytest.mark.parametrize(("body", "field"), [
    ({"amount": 100, "currency": "EUR", "method": "bank", "invoice": "I"}, "currency"),
    ({"amount": 100, "currency": "USD", "method": "cash", "invoice": "I"}, "method"),
    ({"amount": 100, "currency": "USD", "method": "bank", "invoice": "-I"}, "invoice"),
    ({"amount": 0, "currency": "USD", "method": "bank", "invoice": "I"}, "amount"),
    ({"amount": 100, "currency": "USD", "method": "bank"}, "invoice"),
])
def test_a_payment_that_cannot_match_is_refused_by_name_and_changes_nothing(claim, body, field):
    _, job, _, api = claim()
    outcome = Outcome.objects.get(job=job)
    refused = api.post(f"/api/outcomes/{outcome.pk}/payments", body,
                       content_type="application/json")
    assert refused.status_code == 400 and field in refused.json()
    assert Outcome.objects.get(pk=outcome.pk).state == "waiting"
    assert not Record.objects.filter(kind="outcome.collected").exists()


def test_the_subject_calendar_lists_the_wait_and_each_window(claim):
    clock, job, _, api = claim()
    outcome = Outcome.objects.get(job=job)
    _pay(api, outcome, "INV-1")
    rows = [row for row in subject_calendar.lines(job.subject) if row.kind == "window"]
    said = [(row.date.isoformat(), row.status) for row in rows]
    assert ("2027-10-20", "won") in said
    assert ("2027-11-19", "open · a refund or chargeback reverses the share until it closes") \
        in said


def test_a_manifest_outcome_is_checked_with_every_problem_at_once(brand):
    bad = document()
    bad["services"]["recovery"]["price"] = {"share": "125%", "amount": 5}
    bad["services"]["recovery"]["outcome"] = {"due": "soon", "window": {"Bank": "60d"},
                                             "collect": "twice", "pay": 40, "extra": 1}
    with pytest.raises(manifests.ManifestInvalid) as refused:
        manifests.load(brand, bad)
    codes = {problem.code for problem in refused.value.problems}
    assert {"price.share_invalid", "price.currency_invalid", "price.share_with_amount",
            "outcome.due_invalid", "outcome.method_invalid", "outcome.collect_invalid",
            "outcome.pay_invalid", "outcome.key_unknown"} <= codes
    assert not Job.objects.exists()
