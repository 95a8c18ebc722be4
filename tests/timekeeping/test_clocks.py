"""Clocks through the public steps: manifests, orders, the tick on test clocks, the gate."""

import copy
import json
from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from timekeeping import clocks, manifests
from timekeeping.attention import lists
from timekeeping.clocks import dues, gate, opening, postponing
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Delivery, Job, Occurrence, Record, Subject, TestClock, Timer
from timekeeping.tick import test_clocks

START = datetime(2028, 2, 1, 14, tzinfo=UTC)
TAX = json.loads(TAX_MANIFEST.read_text())
JURISDICTIONS = ["US", "US-CA", "US-NY", "US-NJ"]


@pytest.fixture
def tax(brand, actors):
    actors["owner"].email = "owner@example.test"
    actors["owner"].save()
    manifests.load(brand, copy.deepcopy(TAX))
    brand.refresh_from_db()
    clock = TestClock.objects.create(brand=brand, name="2027", frozen_time=START)
    subject = Subject.objects.create(brand=brand, test_clock=clock, kind="taxpayer",
                                     key="11-1111111", name="Fernhill Tools",
                                     zone="America/New_York",
                                     contact_email="books@fernhill.example")
    return brand, clock, subject


def order(tax, period="2027", **input):
    brand, clock, subject = tax
    return clocks.order(brand=brand, service="annual-return", subject=subject, period=period,
                        input={"jurisdictions": JURISDICTIONS,
                                                 "earliest_credit_expiry": "2046-12-31",
                                                 **input})


def due(job, name, item=""):
    return Occurrence.objects.get(clock__job=job, clock__name=name, item=item)


def advance(tax, to):
    return test_clocks.advance(TestClock.objects.get(pk=tax[1].pk), to=to)


def test_it_rolls_each_date_on_the_calendar_and_records_why(tax):
    job = order(tax)
    federal = due(job, "file", "US")
    assert (federal.rule_due, federal.due) == (date(2028, 4, 15), date(2028, 4, 18))
    assert federal.roll_reasons == ["2028-04-15 Saturday", "2028-04-16 Sunday, Emancipation Day",
                                    "2028-04-17 Emancipation Day (observed)"]
    assert federal.late_from == datetime(2028, 4, 19, 4, tzinfo=UTC)  # 23:59 New York + 1 min
    assert due(job, "file", "US-NJ").due == date(2028, 5, 15)
    assert due(job, "pay").due == date(2028, 4, 18)
    rolled = Record.objects.filter(kind="clock.rolled", job=job.pk)
    assert sorted(r.data["item"] for r in rolled) == ["", "US", "US-CA", "US-NY"]
    assert all(r.data["to"] == "2028-04-18" for r in rolled)


def test_it_rings_rungs_at_nine_new_york_and_fires_a_passed_rung_in_place(tax):
    job = order(tax)
    label = due(job, "file", "US").label
    rungs = {t.key.split(":", 1)[1]: t for t in Timer.objects.filter(owner_id=label)}
    assert rungs["notice 90d"].owed == datetime(2028, 1, 19, 14, tzinfo=UTC)  # before the job
    assert rungs["notice 30d"].owed == datetime(2028, 3, 19, 13, tzinfo=UTC)  # EDT by then
    assert rungs["run tentative 3d"].owed == datetime(2028, 4, 15, 13, tzinfo=UTC)  # Saturday
    assert rungs["date"].owed == datetime(2028, 4, 19, 4, tzinfo=UTC)
    rows = []  # the trace's rows, handed over batch by batch
    test_clocks.advance(TestClock.objects.get(pk=tax[1].pk), to=START + timedelta(minutes=1),
                        trace=lambda run, batch: rows.extend(batch))
    fired = [row for row in rows if row.timer.owner_id == label]
    assert [row.timer.key.split(":", 1)[1] for row in fired] == ["notice 90d"]
    assert fired[0].fired == START and "its day passed: fired in place" in fired[0].what
    notice = Delivery.objects.filter(idempotency_key__startswith=f"{label}:notice 90d").get()
    assert notice.payload["to"] == ["owner@example.test"]


def test_it_extends_filing_but_never_the_hard_date_to_pay(tax):
    job = order(tax)
    advance(tax, datetime(2028, 4, 16, tzinfo=UTC))
    assert due(job, "file", "US").due == date(2028, 10, 16)
    assert due(job, "file", "US").rolled_from == date(2028, 10, 15)
    assert due(job, "file", "US").moved_from == date(2028, 4, 18)
    assert due(job, "file", "US-NY").due == date(2028, 10, 16)
    assert due(job, "file", "US-CA").due == date(2028, 11, 15)
    assert due(job, "file", "US-NJ").due == date(2028, 5, 15)  # its own rung is still ahead
    assert due(job, "pay").due == date(2028, 4, 18)
    committed = Record.objects.filter(kind="step.committed", job=job.pk)
    assert sorted((r.data["step"], r.data["items"][0]) for r in committed) == sorted(
        [(s, i) for s in ("tentative", "extend") for i in ("US", "US-CA", "US-NY")])
    moved = Record.objects.filter(kind="clock.moved", job=job.pk)
    assert {r.data["item"]: r.data["to"] for r in moved} == {
        "US": "2028-10-16", "US-NY": "2028-10-16", "US-CA": "2028-11-15"}
    # The moved date's rungs were re-armed under the same keys; the old ones superseded.
    label = due(job, "file", "US").label
    live = Timer.objects.get(owner_id=label, key=f"{label}:notice 90d", state="armed")
    assert live.owed == datetime(2028, 7, 18, 13, tzinfo=UTC)
    assert Timer.objects.filter(owner_id=label, key=f"{label}:date",
                                state="superseded").count() == 1


def test_it_satisfies_an_item_only_by_its_own_step(tax):
    job = order(tax)
    outcome = gate.propose(job=job, step="file", items=["US-CA"], by="staff")
    assert outcome.committed and outcome.satisfied == ["file US-CA", "pay"]
    assert due(job, "file", "US-CA").status == "satisfied"
    assert due(job, "file", "US").status == "open"
    label = due(job, "file", "US-CA").label
    assert not Timer.objects.filter(owner_id=label, state="armed").exists()


def test_it_refuses_a_barred_step_once_the_hard_date_has_passed(tax):
    job = order(tax)
    assert gate.propose(job=job, step="amend", by="staff").committed
    closes = due(job, "refund-window").late_from
    TestClock.objects.filter(pk=tax[1].pk).update(frozen_time=closes - timedelta(seconds=1))
    assert gate.propose(job=job, step="amend", by="staff").committed
    TestClock.objects.filter(pk=tax[1].pk).update(frozen_time=closes)
    refused = gate.propose(job=job, step="amend", by="staff")
    assert (refused.committed, refused.code) == (False, "date_passed")
    assert "refund-window of 2031-04-15 has passed" in refused.reason
    record = Record.objects.filter(kind="step.refused", job=job.pk).get()
    assert record.data["code"] == "date_passed"


def test_a_date_bars_its_step_under_the_version_it_was_opened_on(tax):
    # Version 2 bars nothing: the gate reads no hard dates for a step no version bars, but
    # the job of version 1 keeps its refund window, which bars `amend`.
    job = order(tax)
    unbarred = copy.deepcopy(TAX)
    for service in unbarred["services"].values():
        for clock in service.get("clocks", {}).values():
            clock.pop("bars", None)
    manifests.load(tax[0], unbarred)
    later = clocks.order(brand=tax[0], service="annual-return", subject=tax[2], period="2028",
                         input={"jurisdictions": ["US"]})
    TestClock.objects.filter(pk=tax[1].pk).update(
        frozen_time=due(job, "refund-window").late_from)
    assert gate.propose(job=job, step="amend", by="staff").code == "date_passed"
    assert gate.propose(job=later, step="amend", by="staff").code == "date_passed"
    assert gate.propose(job=job, step="pay", by="staff").committed


def test_it_refuses_an_unknown_step_or_item(tax):
    job = order(tax)
    assert gate.propose(job=job, step="celebrate").code == "step_unknown"
    assert gate.propose(job=job, step="file", items=["US-TX"]).code == "item_unknown"


def test_it_answers_period_taken_to_a_second_order_and_changes_nothing(tax):
    order(tax)
    before = (Record.objects.count(), Timer.objects.count(), Job.objects.count())
    with pytest.raises(clocks.PeriodTaken):
        order(tax)
    assert (Record.objects.count(), Timer.objects.count(), Job.objects.count()) == before
    assert order(tax, period="2028").period == "2028"


def test_a_second_order_that_raced_past_the_look_is_answered_period_taken(tax, monkeypatch):
    # Two orders of one subject wait for each other on the subject's lock, so the second sees
    # the first's job; were it to miss it, the constraint refuses its insert, and the answer
    # is still PeriodTaken with nothing changed.
    order(tax)
    before = (Record.objects.count(), Timer.objects.count(), Job.objects.count())
    looks = []
    real = opening._held

    def missed_once(*args):
        looks.append(args)
        return False if len(looks) == 1 else real(*args)

    monkeypatch.setattr(opening, "_held", missed_once)
    with pytest.raises(clocks.PeriodTaken):
        order(tax)
    assert len(looks) == 2  # looked, missed, refused by the constraint, looked again
    assert (Record.objects.count(), Timer.objects.count(), Job.objects.count()) == before


def test_it_moves_a_hard_date_only_by_a_postponement(tax, client, actors):
    job = order(tax)
    client.force_login(actors["owner"])
    answer = client.post("/api/owner/calendar/postponements", {
        "from": "2028-04-01", "through": "2028-04-30", "to": "2028-06-15",
        "where": {"zone": "America/New_York"}, "notice": "Relief notice NY-2028-03",
        "test_clock": tax[1].pk,
    }, content_type="application/json")
    assert answer.status_code == 201, answer.content
    assert due(job, "pay").due == date(2028, 6, 15)
    assert due(job, "file", "US").due == date(2028, 6, 15)
    assert due(job, "file", "US-NJ").due == date(2028, 5, 15)  # outside the range
    moved = Record.objects.filter(kind="clock.moved", job=job.pk, data__name="pay").get()
    assert moved.data["by"] == "calendar" and moved.data["notice"] == "Relief notice NY-2028-03"
    elsewhere = client.post("/api/owner/calendar/postponements", {
        "from": "2028-05-01", "through": "2028-05-31", "to": "2028-07-01",
        "where": {"zone": "America/Chicago"}, "notice": "Relief notice IL",
        "test_clock": tax[1].pk,
    }, content_type="application/json")
    assert elsewhere.json()["moved"] == []
    real = client.post("/api/owner/calendar/postponements", {
        "from": "2028-05-01", "through": "2028-05-31", "to": "2028-07-01",
        "notice": "Relief for the real world only"}, content_type="application/json")
    assert real.json()["moved"] == []  # the test clock's world is its own
    assert due(job, "file", "US-NJ").due == date(2028, 5, 15)
    bad = client.post("/api/owner/calendar/postponements", {
        "from": "2028-05-31", "through": "2028-05-01", "to": "2028-07-01", "notice": "x"},
        content_type="application/json")
    assert bad.status_code == 400 and "through" in bad.json()


def test_it_keeps_a_clock_that_lives_on_the_subject_after_its_job_ends(tax):
    job = order(tax)
    clocks.end_job(job)
    assert due(job, "file", "US").status == "closed"
    assert not Timer.objects.filter(owner_id=due(job, "file", "US").label,
                                    state="armed").exists()
    expiry = due(job, "credit-expiry")
    assert expiry.status == "open"
    rung = Timer.objects.get(owner_id=expiry.label, key=f"{expiry.label}:notice 180d")
    assert rung.state == "armed" and rung.owed == datetime(2046, 7, 4, 13, tzinfo=UTC)


def test_it_lapses_an_unkept_date_and_puts_the_choice_to_its_owner(tax):
    job = order(tax)
    advance(tax, datetime(2028, 4, 20, tzinfo=UTC))
    pay = due(job, "pay")
    assert pay.status == "lapsed"
    lapsed = Record.objects.get(kind="clock.lapsed", job=job.pk, data__name="pay")
    assert lapsed.data["hard"] is True
    mail = Delivery.objects.get(idempotency_key__startswith=f"{pay.label}:lapsed")
    # The buyer answers for pay, but this is a test clock's world: only the brand's own
    # people hear of it (a real customer address never gets a test clock's email).
    assert mail.payload["to"] == ["owner@example.test"]
    assert mail.payload["subject"].startswith("Practice run: ")


def test_it_asks_for_an_acknowledgement_daily_until_given(tax):
    job = order(tax)
    advance(tax, datetime(2028, 5, 10, 14, tzinfo=UTC))  # NJ's ack starts 10 May
    nj = due(job, "file", "US-NJ")
    clocks.acknowledge(nj, by="staff")
    advance(tax, datetime(2028, 5, 12, 12, tzinfo=UTC))
    asked = Record.objects.filter(kind="clock.notice", job=job.pk, data__item="US-NJ",
                                  data__rung="ack asked")
    assert asked.count() == 1


SMALL = {
    "calendar": {"zone": "Europe/London", "holidays": ["GB", "ENG"]},
    "services": {"bookkeeping": {
        "subject": {"kind": "company", "key": "number",
                    "period": {"of": "quarter"}},
        "steps": {"submit": {}},
        "clocks": {"vat": {"title": "VAT return", "due": {"after_period": {"months": 1,
                                                                             "day": 7}},
                           "every": "3mo", "satisfied_by": ["submit"],
                           "rungs": ["notice 7d"]}},
    }},
}


def test_it_counts_an_every_clock_from_the_first_so_it_never_drifts(brand):
    manifests.load(brand, copy.deepcopy(SMALL))
    brand.refresh_from_db()
    test_clock = TestClock.objects.create(brand=brand, name="q", frozen_time=datetime(
        2027, 1, 1, tzinfo=UTC))
    subject = Subject.objects.create(brand=brand, test_clock=test_clock, kind="company",
                                     key="0001", name="Tern Ltd", zone="Europe/London")
    job = clocks.order(brand=brand, service="bookkeeping", subject=subject, period="2026-Q4")
    kept = []
    for _ in range(4):
        occurrence = Occurrence.objects.get(clock__job=job, status="open")
        kept.append((occurrence.rule_due, occurrence.due))
        TestClock.objects.filter(pk=test_clock.pk).update(
            frozen_time=occurrence.late_from + timedelta(days=20))  # submitted weeks late
        assert gate.propose(job=job, step="submit").committed
    assert kept == [(date(2027, 1, 7), date(2027, 1, 7)), (date(2027, 4, 7), date(2027, 4, 7)),
                    (date(2027, 7, 7), date(2027, 7, 7)), (date(2027, 10, 7), date(2027, 10, 7))]


def test_it_closes_a_due_in_the_subject_zone(brand):
    manifests.load(brand, copy.deepcopy(SMALL))
    brand.refresh_from_db()
    subject = Subject.objects.create(brand=brand, kind="company", key="0002", name="Kea Ltd",
                                     zone="Pacific/Auckland")
    job = clocks.order(brand=brand, service="bookkeeping", subject=subject, period="2026-Q4")
    occurrence = Occurrence.objects.get(clock__job=job)
    assert occurrence.late_from == datetime(2027, 1, 7, 11, tzinfo=UTC)  # 00:00 NZDT the 8th


def test_it_runs_a_choice_that_names_a_step_through_the_gate(tax, client, actors):
    job = order(tax)
    advance(tax, datetime(2028, 4, 20, tzinfo=UTC))
    pay = due(job, "pay")
    assert Record.objects.get(kind="clock.lapsed", data__name="pay").data["choices"] == ["pay"]
    client.force_login(actors["owner"])
    wrong = client.post(f"/api/clocks/{pay.clock_id}/choose", {"choice": "extend"},
                        content_type="application/json")
    assert wrong.status_code == 400 and "'extend'" in wrong.json()["choice"][0]
    chosen = client.post(f"/api/clocks/{pay.clock_id}/choose", {"choice": "pay"},
                         content_type="application/json")
    assert chosen.status_code == 200 and chosen.json()["committed"] is True
    assert Record.objects.filter(kind="clock.chosen", job=job.pk).count() == 1
    nj = due(job, "file", "US-NJ")
    acked = client.post(f"/api/clocks/{nj.clock_id}/acknowledge", {"item": "US-NJ"},
                        content_type="application/json")
    assert acked.status_code == 200
    assert due(job, "file", "US-NJ").acknowledged is not None
    client.force_login(actors["outsider"])
    assert client.post(f"/api/clocks/{nj.clock_id}/acknowledge", {"item": "US-NJ"},
                       content_type="application/json").status_code == 404


@dues.due_function("tests.thirty_days_after_period")
def thirty_days_after_period(*, job, item, period_end):
    return period_end + timedelta(days=30)


FORMS = {
    "services": {"notice-response": {
        "subject": {"kind": "taxpayer", "key": "ein", "period": {"of": "month"}},
        "steps": {"reply": {}},
        "clocks": {
            "reply": {"due": {"input": "reply_by"}, "satisfied_by": ["reply"]},
            "draft": {"due": {"clock": "reply", "days": -5}},
            "review": {"due": {"function": "tests.thirty_days_after_period"}},
            "fixed": {"due": {"date": "2028-07-04"}, "hard": True, "bars": ["reply"]},
        },
    }},
}


def test_it_reads_each_form_of_due_rule(brand):
    manifests.load(brand, copy.deepcopy(FORMS))
    subject = Subject.objects.create(brand=brand, kind="taxpayer", key="3", name="Oriel")
    job = clocks.order(brand=brand, service="notice-response", subject=subject,
                       period="2028-05", input={"reply_by": "2028-06-14"})
    kept = {o.clock.name: (o.rule_due, o.due) for o in Occurrence.objects.filter(clock__job=job)}
    assert kept == {
        "reply": (date(2028, 6, 14), date(2028, 6, 14)),
        "draft": (date(2028, 6, 9), date(2028, 6, 9)),
        "review": (date(2028, 6, 30), date(2028, 6, 30)),
        "fixed": (date(2028, 7, 4), date(2028, 7, 4)),  # no calendar: weekends only, in UTC
    }
    missing = clocks.order(brand=brand, service="notice-response", subject=subject,
                           period="2028-06", input={})
    assert not Occurrence.objects.filter(clock__job=missing, clock__name="reply").exists()
    assert Record.objects.filter(kind="clock.no_date", job=missing.pk).count() == 2
    # Not silent (S23): the owner is asked to look, on the brand's list and the subject's page.
    at = Record.objects.filter(kind="clock.no_date", job=missing.pk).first().instant
    unset = [item.text for item in lists.of_subject(subject, now=at) if item.kind == "lapse"]
    assert ("Oriel's 2028-06 notice response: the reply date could not be set (its due rule "
            "gave no date), so no reminder will come for it") in unset, unset
    home = [item.text for item in lists.attention(brand, now=at).items]
    assert sum("could not be set" in text for text in home) == 2, home


def test_a_rung_that_runs_its_step_again_after_a_move_moves_nothing_more(tax):
    job = order(tax)
    advance(tax, datetime(2028, 12, 1, tzinfo=UTC))  # the tentative rung rings again in October
    federal = due(job, "file", "US")
    assert (federal.due, federal.moved_from, federal.status) == (date(2028, 10, 16),
                                                                 date(2028, 4, 18), "lapsed")
    moved = Record.objects.filter(kind="clock.moved", job=job.pk, data__item="US")
    assert moved.count() == 1


def test_a_date_that_outlived_its_job_is_marked_done_by_its_owner(tax, client, actors):
    job = order(tax)
    clocks.end_job(job)
    expiry = due(job, "credit-expiry")
    client.force_login(actors["owner"])
    done = client.post(f"/api/clocks/{expiry.clock_id}/done", {},
                       content_type="application/json")
    assert done.status_code == 200 and done.json()["status"] == "satisfied"
    again = client.post(f"/api/clocks/{expiry.clock_id}/done", {},
                        content_type="application/json")
    assert again.status_code == 409 and "satisfied" in again.json()["item"][0]
    assert not Timer.objects.filter(owner_id=expiry.label, state="armed").exists()


def test_a_lapsed_date_is_kept_late_by_its_step(tax):
    job = order(tax)
    advance(tax, datetime(2028, 4, 20, tzinfo=UTC))
    assert gate.propose(job=job, step="pay").committed
    pay = due(job, "pay")
    assert pay.status == "satisfied" and pay.settled_by == "pay"
    assert Record.objects.get(kind="clock.satisfied", data__name="pay").data["late"] is True


def test_it_reads_an_input_date_from_the_subject_when_the_job_has_none(brand):
    manifests.load(brand, copy.deepcopy(FORMS))
    subject = Subject.objects.create(brand=brand, kind="taxpayer", key="4", name="Quay",
                                     input={"reply_by": "2028-06-20"})
    job = clocks.order(brand=brand, service="notice-response", subject=subject,
                       period="2028-05")
    assert Occurrence.objects.get(clock__job=job, clock__name="reply").due == date(2028, 6, 20)


def test_loading_an_older_manifest_again_makes_it_current(brand):
    first = manifests.load(brand, copy.deepcopy(SMALL))
    manifests.load(brand, copy.deepcopy(FORMS))
    again = manifests.load(brand, copy.deepcopy(SMALL))
    assert again.version == 3 and again.bundle == first.bundle
    assert manifests.current(brand).pk == again.pk


def test_a_subject_without_a_zone_is_judged_and_listed_in_the_calendar_zone(brand):
    from timekeeping.clocks import subject_calendar

    manifests.load(brand, copy.deepcopy(SMALL))
    brand.refresh_from_db()
    subject = Subject.objects.create(brand=brand, kind="company", key="5", name="Wren Ltd")
    job = clocks.order(brand=brand, service="bookkeeping", subject=subject, period="2026-Q4")
    occurrence = Occurrence.objects.get(clock__job=job)
    assert occurrence.late_from == datetime(2027, 1, 8, tzinfo=UTC)  # London is on GMT then
    assert subject_calendar.zone_of_subject(subject) == "Europe/London"


def test_a_date_opened_inside_a_postponement_is_moved_and_says_so(tax):
    from calendars.models import Postponement

    brand, clock, _ = tax
    Postponement.objects.create(calendar=brand.calendar, from_date=date(2028, 4, 1),
                                through=date(2028, 4, 30), to=date(2028, 6, 15),
                                notice="Relief notice 7", test_clock=clock.pk)
    job = order(tax)
    assert due(job, "pay").due == date(2028, 6, 15)
    moved = Record.objects.get(kind="clock.moved", job=job.pk, data__name="pay")
    assert moved.data["notice"] == "Relief notice 7" and moved.data["from"] == "2028-04-18"


# -- a notice added, a calendar changed ------------------------------------------------------

def two_brands_on_one_calendar(tax, actors):
    """The tax brand and a second one sharing its New York calendar, each with a taxpayer
    filing in the US on its real clock."""
    from timekeeping.models import Brand

    brand = tax[0]
    other = Brand.objects.create(name="Second Desk", slug="second-desk", owner=actors["staff"])
    manifests.load(other, copy.deepcopy(TAX))
    other.calendar = brand.calendar
    other.save(update_fields=["calendar"])
    jobs = []
    for n, each in enumerate((brand, other)):
        subject = Subject.objects.create(brand=each, kind="taxpayer", key=f"22-000000{n}",
                                         name=f"Taxpayer {n}", zone="America/New_York")
        jobs.append(clocks.order(brand=each, service="annual-return", subject=subject,
                                 period="2027", input={"jurisdictions": ["US"]}))
    return jobs


def test_it_adds_a_postponement_and_moves_the_dates_of_every_brand_on_the_calendar(tax,
                                                                                    actors):
    from timekeeping.basics import wallclock as wall

    with wall.fixed(START):
        jobs = two_brands_on_one_calendar(tax, actors)
        postponement, moved = clocks.add_postponement(
            calendar=tax[0].calendar, from_date=date(2028, 4, 1), through=date(2028, 4, 30),
            to=date(2028, 6, 15), where={"zone": "America/New_York"},
            notice="Relief notice NY-2028-03", by="staff ada")
    assert postponement.pk and postponement.test_clock == ""
    assert [due(job, "pay").due for job in jobs] == [date(2028, 6, 15)] * 2
    assert [due(job, "file", "US").due for job in jobs] == [date(2028, 6, 15)] * 2
    assert len(moved) == 4
    said = Record.objects.filter(kind="calendar.postponed").order_by("brand__slug")
    assert [r.data["by"] for r in said] == ["staff ada", "staff ada"]
    assert [len(r.data["moved"]) for r in said] == [2, 2]


def test_it_adds_no_postponement_when_moving_one_brands_dates_fails(tax, actors, monkeypatch):
    from calendars.models import Postponement
    from timekeeping.basics import wallclock as wall

    real, calls = clocks.postpone, []

    def postpone_then_fail(brand, postponement, **given):
        calls.append(brand.slug)
        if len(calls) == 2:
            raise RuntimeError("the database went away")
        return real(brand, postponement, **given)

    monkeypatch.setattr(postponing, "postpone", postpone_then_fail)
    with wall.fixed(START):
        jobs = two_brands_on_one_calendar(tax, actors)
        with pytest.raises(RuntimeError):
            clocks.add_postponement(calendar=tax[0].calendar, from_date=date(2028, 4, 1),
                                    through=date(2028, 4, 30), to=date(2028, 6, 15), where={},
                                    notice="Relief notice 8")
    assert len(calls) == 2  # the first brand's dates had moved when the second failed
    assert not Postponement.objects.exists()
    assert [due(job, "pay").due for job in jobs] == [date(2028, 4, 18)] * 2
    assert not Record.objects.filter(kind__in=["clock.moved", "calendar.postponed"]).exists()


@pytest.mark.parametrize("given, field", [
    ({"from_date": date(1850, 4, 1)}, "from"),
    ({"through": date(2028, 3, 31)}, "through"),
    ({"to": date(2300, 1, 1)}, "to"),
    ({"where": ["CA"]}, "where"),
    ({"notice": "   "}, "notice"),
    ({"test_clock_id": "tc_not_here"}, "test_clock"),
])
def test_it_refuses_a_postponement_naming_the_field_and_changes_nothing(tax, given, field):
    from calendars.models import Postponement

    job = order(tax)
    before = (Record.objects.count(), Timer.objects.count())
    arguments = {"calendar": tax[0].calendar, "from_date": date(2028, 4, 1),
                 "through": date(2028, 4, 30), "to": date(2028, 6, 15), "where": {},
                 "notice": "Relief notice 9", "test_clock_id": tax[1].pk, **given}
    with pytest.raises(clocks.OrderRefused) as refused:
        clocks.add_postponement(**arguments)
    assert refused.value.field == field
    assert not Postponement.objects.exists()
    assert (Record.objects.count(), Timer.objects.count()) == before
    assert due(job, "pay").due == date(2028, 4, 18)


def test_it_refuses_a_test_clock_of_a_brand_on_another_calendar(tax, actors):
    from timekeeping.models import Brand

    other = Brand.objects.create(name="Elsewhere", slug="elsewhere", owner=actors["staff"])
    theirs = TestClock.objects.create(brand=other, name="theirs", frozen_time=START)
    with pytest.raises(clocks.OrderRefused) as refused:
        clocks.add_postponement(calendar=tax[0].calendar, from_date=date(2028, 4, 1),
                                through=date(2028, 4, 30), to=date(2028, 6, 15), where={},
                                notice="Relief notice 10", test_clock_id=theirs.pk)
    assert refused.value.field == "test_clock"


def test_it_rerolls_open_dates_when_the_calendar_closes_a_day_and_keeps_some_saying_why(tax):
    brand, clock, _ = tax
    # The credit expiry, 2028-01-10, has passed on the test clock (2028-02-01) but not lapsed.
    job = order(tax, earliest_credit_expiry="2028-01-10")
    clocks.add_postponement(calendar=brand.calendar, from_date=date(2028, 5, 15),
                            through=date(2028, 5, 15), to=date(2028, 5, 16), where={},
                            notice="Relief notice NJ-1", test_clock_id=clock.pk)
    label = due(job, "file", "US").label
    before = list(Timer.objects.filter(owner_id=label, state="armed").values_list("pk",
                                                                                 flat=True))
    calendar = brand.calendar
    calendar.closed_dates = ["2028-01-10", "2028-04-18", "2028-05-16"]
    calendar.save(update_fields=["closed_dates"])

    rerolled = clocks.calendar_changed(calendar, by="admin ada")

    federal = due(job, "file", "US")
    assert (federal.due, federal.rolled_from) == (date(2028, 4, 19), date(2028, 4, 15))
    assert federal.roll_reasons[-1] == "2028-04-18 closed"
    assert federal.late_from == datetime(2028, 4, 20, 4, tzinfo=UTC)  # 23:59 New York + 1m
    assert due(job, "pay").due == date(2028, 4, 19)  # a hard date rolls with its calendar
    # Every live timer of the date was superseded and armed again on the new day's rings_at.
    assert set(Timer.objects.filter(pk__in=before).values_list("state", flat=True)) == {
        "superseded"}
    live = {t.key.split(":", 1)[1]: t.owed for t in Timer.objects.filter(owner_id=label,
                                                                          state="armed")}
    assert live == {"notice 90d": datetime(2028, 1, 20, 14, tzinfo=UTC),  # EST: 09:00 = 14Z
                    "notice 30d": datetime(2028, 3, 20, 13, tzinfo=UTC),  # EDT: 09:00 = 13Z
                    "run tentative 3d": datetime(2028, 4, 16, 13, tzinfo=UTC),
                    "ack daily 5d": datetime(2028, 4, 14, 13, tzinfo=UTC),
                    "date": datetime(2028, 4, 20, 4, tzinfo=UTC)}
    moved = Record.objects.get(kind="clock.moved", job=job.pk, data__item="US")
    assert {key: moved.data[key] for key in ("by", "who", "from", "to", "rolled_from")} == {
        "by": "calendar change", "who": "admin ada", "from": "2028-04-18", "to": "2028-04-19",
        "rolled_from": "2028-04-15"}
    assert moved.test_clock_id == clock.pk
    # The notice's date and the passed date stay, and the answer says why.
    assert due(job, "file", "US-NJ").due == date(2028, 5, 16)
    assert due(job, "credit-expiry").due == date(2028, 1, 10)
    assert len(rerolled.moved) == 4  # file US, US-CA, US-NY and pay
    assert sorted(line.split(": kept: ")[1] for line in rerolled.kept) == [
        "an authority's notice set its date", "its date has passed"]
    assert rerolled.said().startswith("Re-rolled 4 open dates; 2 kept as they are (")


def test_it_moves_nothing_when_a_calendar_change_leaves_every_date_where_it_was(tax):
    job = order(tax)
    before = (Record.objects.count(), Timer.objects.count())
    calendar = tax[0].calendar
    calendar.closed_dates = ["2028-07-05"]  # no date of the job falls on it
    calendar.save(update_fields=["closed_dates"])
    rerolled = clocks.calendar_changed(calendar, by="admin ada")
    assert (rerolled.moved, rerolled.kept) == ([], [])
    assert (Record.objects.count(), Timer.objects.count()) == before
    assert due(job, "file", "US").due == date(2028, 4, 18)


def test_it_rearms_the_date_on_every_clock_of_every_brand_when_the_calendar_closes_earlier(
        tax, actors):
    from timekeeping.basics import wallclock as wall

    on_test_clock = order(tax)
    with wall.fixed(START):
        on_real_clocks = two_brands_on_one_calendar(tax, actors)
        calendar = tax[0].calendar
        calendar.closes = "17:00"
        calendar.save(update_fields=["closes"])
        rerolled = clocks.calendar_changed(calendar, by="admin ada")
    for job in [on_test_clock, *on_real_clocks]:
        pay = due(job, "pay")
        assert (pay.due, pay.late_from) == (date(2028, 4, 18),
                                            datetime(2028, 4, 18, 21, 1, tzinfo=UTC))
        assert Timer.objects.get(key=f"{pay.label}:date", state="armed").owed == pay.late_from
    assert f"{due(on_test_clock, 'pay').clock.subject_id} pay 2028-04-18: late from " \
           "2028-04-19 04:00Z → 2028-04-18 21:01Z" in rerolled.moved


def test_a_refund_window_is_measured_from_the_filing_when_it_is_late(tax):
    """`after_kept`: three years from the day the US filing was kept in New York, or from its
    first due date when filed early; until it is filed, from that due date."""
    job = order(tax)
    assert due(job, "refund-window").due == date(2031, 4, 15)  # 2028-04-15 + 3 years
    early = order(tax, period="2026")
    TestClock.objects.filter(pk=tax[1].pk).update(frozen_time=datetime(2027, 3, 1, 14,
                                                                        tzinfo=UTC))
    assert gate.propose(job=Job.objects.get(pk=early.pk), step="file", items=["US"],
                        by="staff").committed
    window = due(early, "refund-window")  # filed before 2027-04-15: from the due date
    assert (window.due, window.moved_from) == (date(2030, 4, 15), None)
    # Filed late, at 23:30 on 11 July 2028 in New York (03:30Z the next day): the window moves
    # to three years after that New York day, recorded as a move by the filing.
    TestClock.objects.filter(pk=tax[1].pk).update(frozen_time=datetime(2028, 7, 12, 3, 30,
                                                                        tzinfo=UTC))
    assert gate.propose(job=Job.objects.get(pk=job.pk), step="file", items=["US-CA"],
                        by="staff").committed
    assert due(job, "refund-window").due == date(2031, 4, 15)  # another item: unmoved
    assert gate.propose(job=Job.objects.get(pk=job.pk), step="file", items=["US"],
                        by="staff").committed
    window = due(job, "refund-window")
    assert (window.due, window.moved_from, window.moved_by) == (
        date(2031, 7, 11), date(2031, 4, 15), "file kept")
    moved = Record.objects.get(kind="clock.moved", job=job.pk, data__name="refund-window")
    assert moved.data["to"] == "2031-07-11"
    # Its timers follow: the date is late from midnight after 11 July 2031 in New York.
    assert Timer.objects.get(owner_id=window.label, state="armed").owed == datetime(
        2031, 7, 12, 4, tzinfo=UTC)


@pytest.mark.parametrize(("change", "path"), [
    (lambda c: c["refund-window"].update(each={"of": "jurisdictions"}),
     "$.services.annual-return.clocks.refund-window.due.after_kept"),
    (lambda c: c["file"]["moves"].update(extend={"after_kept": {"clock": "pay",
                                                                "years": 1}}),
     "$.services.annual-return.clocks.file.moves.extend"),
    (lambda c: c["refund-window"]["due"]["after_kept"].update(years=0),
     "$.services.annual-return.clocks.refund-window.due.after_kept.years"),
    (lambda c: c["refund-window"]["due"]["after_kept"].update(clock="refund-window"),
     "$.services.annual-return.clocks.refund-window.due.after_kept.clock"),
    (lambda c: c["refund-window"]["due"]["after_kept"].update(when="now"),
     "$.services.annual-return.clocks.refund-window.due.after_kept"),
])
def test_after_kept_is_one_dates_own_rule_within_its_limits(change, path):
    document = copy.deepcopy(TAX)
    change(document["services"]["annual-return"]["clocks"])
    problems = manifests.check(document)
    assert path in {problem.path for problem in problems}, problems


@given(kept=st.one_of(st.none(), st.dates(date(1990, 1, 1), date(2150, 12, 31))),
       first=st.dates(date(1990, 1, 1), date(2150, 12, 31)), years=st.integers(1, 50))
def test_after_kept_gives_whole_years_after_the_later_of_the_keeping_and_the_due(
        kept, first, years):
    rule = {"after_kept": {"clock": "file", "item": "US", "years": years}}
    asked = []

    def other_kept(name, item):
        asked.append((name, item))
        return kept, first

    found = dues.evaluate(rule, dues.DueContext(period_end=None, job_input={}, item="",
                                                other_kept=other_kept))
    start = max(kept or first, first)
    assert asked == [("file", "US")]
    assert found >= start and found.year == start.year + years
    assert found.month == start.month and found.day in (start.day, 28)  # 29 Feb → 28 Feb
    assert dues.evaluate(rule, dues.DueContext(period_end=None, job_input={}, item="",
                                               other_kept=lambda *_: None)) is None


def test_a_tick_catching_up_over_a_moved_date_fires_only_its_new_date(brand, actors):
    """Down from February to 20 April: one tick finds the tentative rung (15 April) and the
    federal filing date (18 April) owed. The rung extends the filing to October, so the old
    date's timer, fetched in the same batch, is passed by, not lapsed; the hard date to pay,
    which no step moves, lapses."""
    from timekeeping.basics import wallclock
    from timekeeping.tick import phases

    manifests.load(brand, copy.deepcopy(TAX))
    brand.refresh_from_db()
    opened, down_until = datetime(2028, 2, 1, 14, tzinfo=UTC), datetime(2028, 4, 20, 14, tzinfo=UTC)
    with wallclock.fixed(opened):
        subject = Subject.objects.create(brand=brand, kind="taxpayer", key="11-1",
                                         name="Fernhill Tools", zone="America/New_York")
        job = clocks.order(brand=brand, service="annual-return", subject=subject,
                           period="2027", input={"jurisdictions": ["US"]})
    with wallclock.fixed(down_until):
        phases.run_once(now=down_until, sweep=False)
    federal = due(job, "file", "US")
    assert (federal.due, federal.status) == (date(2028, 10, 16), "open")
    assert due(job, "pay").status == "lapsed"
    lapsed = Record.objects.filter(job=job.pk, kind="clock.lapsed")
    assert [record.data["due"] for record in lapsed] == ["2028-04-18"]
    old = Timer.objects.get(key__endswith=":date", owed__lt=down_until,
                            payload__occurrence=federal.pk)
    assert old.state == "superseded"
