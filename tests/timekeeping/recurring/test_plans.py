"""Plans a subject subscribes to: cycles counted from the anchor (place 1), allowances counted
per cycle with no reset job (T2), and schedules that mint a job per period (place 2) with
their catch_up after a gap, in New York across daylight saving."""

import json
from datetime import UTC, date, datetime, timedelta

import pytest

from calendars.periods import cycle_date
from money import ledger
from timekeeping import clocks, manifests
from timekeeping.basics import wallclock
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Job, Record, Subject, Subscription, Timer
from timekeeping.recurring import plans
from timekeeping.tick import phases, test_clocks


def document(catch_up: str = "last", every: str = "1mo", when: dict | None = None) -> dict:
    books = {"subject": {"kind": "client", "period": {"of": "month"}}, "steps": {"close": {}}}
    plan = {"subject": {"kind": "client"},
            "price": {"every": every, "amount": 9900, "currency": "USD",
                      "includes": {"books": 1}},
            "on": {"schedule": {"monthly": {"order": "books", "each": "month",
                                            "at": "start", "catch_up": catch_up,
                                            **({"when": when} if when else {})}}}}
    return {"calendar": {"zone": "America/New_York", "weekends": [], "rings_at": "09:00"},
            "services": {"books": books, "plan": plan}}


@pytest.fixture
def client_of(brand):
    def make(**input) -> Subject:
        return Subject.objects.create(brand=brand, kind="client", key=str(len(input)),
                                      name="Harbor", zone="America/New_York", input=input)
    return make


def test_a_cycle_anchored_on_the_31st_renews_on_each_months_last_day_for_24_months(
        brand, client_of):
    manifests.load(brand, document())
    spring = test_clocks.create(brand=brand, name="years",
                                frozen_time=datetime(2027, 1, 31, 14, tzinfo=UTC))
    subject = client_of()
    subject.test_clock = spring
    subject.save()
    subscription = plans.subscribe(subject=subject, service="plan")
    assert subscription.anchor == date(2027, 1, 31)
    test_clocks.advance(spring, to=datetime(2029, 1, 31, 15, tzinfo=UTC))
    renewed = Record.objects.filter(kind="cycle.renewed").order_by("instant")
    expected = [cycle_date(date(2027, 1, 31), "1mo", n) for n in range(1, 25)]
    # Each at 09:00 New York time: 14:00Z in winter, 13:00Z in summer.
    assert [(r.instant.date(), r.instant.hour) for r in renewed] == [
        (day, 13 if date(2027, 3, 14) <= day < date(2027, 11, 7)
         or date(2028, 3, 12) <= day < date(2028, 11, 5) else 14) for day in expected]
    assert [r.data["cycle"] for r in renewed] == list(range(2, 26))
    assert Subscription.objects.get(pk=subscription.pk).cycle == 25
    assert ledger.balance(f"{brand.pk}:owed:{subject.pk}", brand=brand.pk) == 25 * 9900
    assert ledger.balance(f"{brand.pk}:revenue", brand=brand.pk) == -25 * 9900


def test_an_allowance_counts_per_cycle_and_starts_afresh_with_no_reset(brand, client_of):
    manifests.load(brand, document())
    subject = client_of()
    with wallclock.fixed(datetime(2027, 1, 15, 15, tzinfo=UTC)):
        subscription = plans.subscribe(subject=subject, service="plan")
    # The February mint.
    phases.run_once(now=datetime(2027, 2, 1, 14, 0, 30, tzinfo=UTC), phases=False)
    minted = Record.objects.get(kind="schedule.minted")
    assert minted.data["period"] == "2027-02" and minted.data["inside"] is True
    assert Job.objects.get(pk=minted.job).period == "2027-02"
    at = datetime(2027, 2, 10, 15, tzinfo=UTC)
    assert plans.allowances(subscription, at=at) == [
        {"service": "books", "included": 1, "used": 1, "left": 0, "cycle": 1,
         "resets_on": date(2027, 2, 15)}]
    # Used again in the same cycle: beyond the allowance, said, not refused.
    assert plans.use(subscription, "books", at) == (1, 2, 1)
    # Read in the next cycle before any renewal has fired: nothing used yet.
    later = plans.allowances(subscription, at=datetime(2027, 2, 16, 15, tzinfo=UTC))
    assert later[0]["used"] == 0 and later[0]["cycle"] == 2


@pytest.mark.parametrize(("catch_up", "minted"), [
    ("open", ["2027-02", "2027-03", "2027-04"]),
    ("all", ["2027-02", "2027-03", "2027-04"]),
    ("last", ["2027-04"]),
    ("none", []),
])
def test_catch_up_says_what_a_gap_of_three_periods_mints(brand, client_of, catch_up, minted):
    manifests.load(brand, document(catch_up=catch_up))
    subject = client_of()
    with wallclock.fixed(datetime(2027, 1, 15, 15, tzinfo=UTC)):
        plans.subscribe(subject=subject, service="plan")
    # No tick ran from the subscription until 10 April: three months' mints are owed.
    phases.run_once(now=datetime(2027, 4, 10, 15, tzinfo=UTC), phases=False)
    assert sorted(Job.objects.filter(subject=subject).values_list("period", flat=True)) == minted
    # The periods skipped are named on one record (S23), none when nothing was skipped.
    skipped = [record.data["periods"] for record in Record.objects.filter(
        kind="schedule.catch_up_skipped")]
    assert skipped == ([sorted({"2027-02", "2027-03", "2027-04"} - set(minted))]
                       if catch_up not in ("open", "all") else [])
    following = Timer.objects.get(kind="schedule", state="armed")
    assert following.payload["period"] == "2027-05"  # the chain goes on
    assert following.owed == datetime(2027, 5, 1, 13, tzinfo=UTC)  # 09:00 EDT


def test_the_seeds_own_annual_line_opens_every_tax_year_a_gap_owes(brand):
    """`annual: {…, each: 'tax_year', at: '1mo after end', catch_up: 'open'}`: the tick that
    comes after three years without one opens each year's return, oldest first."""
    document = json.loads(TAX_MANIFEST.read_text())
    annual = document["services"]["tax-plan"]["on"]["schedule"]["annual"]
    annual["catch_up"] = "open"
    assert not manifests.check(document)
    manifests.load(brand, document)
    subject = Subject.objects.create(
        brand=brand, kind="taxpayer", key="98-7654321", name="Harbor Robotics",
        zone="America/New_York", input={"jurisdictions": ["US"], "entity": "S corp"})
    with wallclock.fixed(datetime(2027, 1, 15, 15, tzinfo=UTC)):
        plans.subscribe(subject=subject, service="tax-plan")
    phases.run_once(now=datetime(2030, 3, 1, 15, tzinfo=UTC), phases=False)
    minted = Record.objects.filter(kind="schedule.minted", data__schedule="annual")
    assert [r.data["period"] for r in minted.order_by("data__period")] == [
        "2026", "2027", "2028", "2029"]
    assert sorted(Job.objects.filter(subject=subject, service="annual-return")
                  .values_list("period", flat=True)) == ["2026", "2027", "2028", "2029"]
    assert not Record.objects.filter(kind="schedule.skipped", data__schedule="annual").exists()
    following = Timer.objects.get(kind="schedule", state="armed", payload__schedule="annual")
    assert following.payload["period"] == "2030"  # minted on 2031-02-01, the chain goes on


def test_when_mints_only_for_a_subject_it_holds_for(brand, client_of):
    manifests.load(brand, document(when={"entity": "C corp"}))
    corp, other = client_of(entity="C corp"), client_of(entity="LLC", x=1)
    with wallclock.fixed(datetime(2027, 1, 15, 15, tzinfo=UTC)):
        for subject in (corp, other):
            plans.subscribe(subject=subject, service="plan")
    phases.run_once(now=datetime(2027, 2, 1, 14, 0, 30, tzinfo=UTC), phases=False)
    assert Job.objects.filter(subject=corp).count() == 1
    assert not Job.objects.filter(subject=other).exists()
    assert Record.objects.get(kind="schedule.skipped", subject=other.pk).data["why"] == \
        "its 'when' does not hold for the subject"


def test_a_plan_is_refused_naming_the_field(brand, client_of):
    manifests.load(brand, document())
    subject = client_of()
    with pytest.raises(clocks.OrderRefused) as no_plan:
        plans.subscribe(subject=subject, service="books")
    assert no_plan.value.field == "service" and "no plan" in no_plan.value.message
    plans.subscribe(subject=subject, service="plan")
    with pytest.raises(clocks.OrderRefused) as twice:
        plans.subscribe(subject=subject, service="plan")
    assert "already" in twice.value.message


def test_cancelling_at_the_cycles_end_stops_renewing_and_minting(brand, client_of):
    manifests.load(brand, document())
    subject = client_of()
    with wallclock.fixed(datetime(2027, 1, 15, 15, tzinfo=UTC)):
        subscription = plans.subscribe(subject=subject, service="plan")
        plans.cancel_at_cycle_end(subscription, by="the customer")
    # Inside cycle 1, February mints; then cycle 2 would start on 15 February.
    phases.run_once(now=datetime(2027, 2, 1, 14, 0, 30, tzinfo=UTC), phases=False)
    phases.run_once(now=datetime(2027, 2, 15, 14, 0, 30, tzinfo=UTC), phases=False)
    subscription.refresh_from_db()
    assert subscription.state == Subscription.State.CANCELLED
    assert Record.objects.filter(kind="subscription.ended").count() == 1
    assert not Timer.objects.filter(owner_id=subscription.pk, state="armed").exists()
    phases.run_once(now=datetime(2027, 3, 2, 14, tzinfo=UTC), phases=False)
    assert Job.objects.filter(subject=subject).count() == 1
    # One cycle charged.
    assert ledger.balance(f"{brand.pk}:owed:{subject.pk}", brand=brand.pk) == 9900


def test_the_first_period_is_the_earliest_minted_on_or_after_the_anchor(brand, client_of):
    document_ = document()
    document_["services"]["plan"]["on"]["schedule"]["monthly"]["at"] = "1mo after end"
    manifests.load(brand, document_)
    with wallclock.fixed(datetime(2027, 1, 15, 15, tzinfo=UTC)):
        subscription = plans.subscribe(subject=client_of(), service="plan")
    first = Timer.objects.get(owner_id=subscription.pk, kind="schedule")
    # December 2026 is minted 1 February 2027, after the anchor; November's was before it.
    assert first.payload["period"] == "2026-12"
    assert first.owed - datetime(2027, 2, 1, 14, tzinfo=UTC) == timedelta(0)


def test_the_subjects_calendar_lists_mints_and_renewals_done_and_ahead(brand, client_of):
    from timekeeping.clocks import subject_calendar

    manifests.load(brand, document())
    subject = client_of()
    with wallclock.fixed(datetime(2027, 1, 15, 15, tzinfo=UTC)):
        plans.subscribe(subject=subject, service="plan")
    phases.run_once(now=datetime(2027, 2, 20, 15, tzinfo=UTC), phases=False)
    job = Job.objects.get(subject=subject)
    lines = [(line.date.isoformat(), line.what, line.kind, line.status)
             for line in subject_calendar.lines(subject) if line.kind in ("cycle", "schedule")]
    assert lines == [
        ("2027-02-01", "the 2027-02 books opens", "schedule", "opened"),
        ("2027-02-15", "the plan renews", "cycle", "renewed, cycle 2"),
        ("2027-03-01", "the 2027-03 books opens", "schedule", "ahead"),
        ("2027-03-15", "the plan renews", "cycle", "ahead · cycle 3"),
    ]
    feed = subject_calendar.feed(subject, stamp=datetime(2027, 2, 20, tzinfo=UTC)).decode()
    assert "SUMMARY:the plan renews" in feed and "SUMMARY:the 2027-03 books opens" in feed
    assert job.state == "open"  # the schedule opened it


def test_a_schedule_mints_n_days_before_a_clock_of_the_minted_service(brand):
    """The seed's estimates: each quarter, ten days before the quarter's payment is due."""
    estimate = {"subject": {"kind": "client", "period": {"of": "quarter"}},
                "steps": {"pay": {}},
                "clocks": {"pay": {"title": "pay the estimate", "owner": "buyer",
                                   "due": {"after_period": {"months": 1, "day": 15}},
                                   "satisfied_by": ["pay"]}}}
    plan = {"subject": {"kind": "client"}, "price": {"every": "1y"},
            "on": {"schedule": {"estimate": {"order": "estimate", "each": "quarter",
                                             "at": "10d before pay", "catch_up": "all",
                                             "when": {"entity": "C corp"}}}}}
    manifests.load(brand, {"calendar": {"zone": "America/New_York", "weekends": []},
                           "services": {"estimate": estimate, "plan": plan}})
    subject = Subject.objects.create(brand=brand, kind="client", key="c", name="Acme",
                                     zone="America/New_York", input={"entity": "C corp"})
    with wallclock.fixed(datetime(2027, 1, 20, 15, tzinfo=UTC)):
        subscription = plans.subscribe(subject=subject, service="plan")
    first = Timer.objects.get(owner_id=subscription.pk, kind="schedule")
    # Q1 2027 ends 03-31; its payment is due 04-15: minted on 04-05 at 09:00 EDT.
    assert first.payload["period"] == "2027-Q1"
    assert first.owed == datetime(2027, 4, 5, 13, tzinfo=UTC)
    phases.run_once(now=datetime(2027, 4, 5, 13, 0, 30, tzinfo=UTC), phases=False)
    job = Job.objects.get(subject=subject)
    assert job.period == "2027-Q1"
    assert job.clocks.get(name="pay").occurrences.get().due == date(2027, 4, 15)
    following = Timer.objects.get(owner_id=subscription.pk, kind="schedule", state="armed")
    assert following.owed == datetime(2027, 7, 5, 13, tzinfo=UTC)  # Q2: 07-15 less 10 days
