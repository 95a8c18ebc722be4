"""A job's charge on time: held when the job opens, released when the acceptance window closes
with no send-back (place 7), less the late price when its deadline went late, and returned when
the job lapses. On a New York test clock across the autumn change."""

from datetime import UTC, datetime, timedelta

import pytest

from money import ledger
from money.models import Posting
from timekeeping import clocks, manifests
from timekeeping.clocks import gate, history, subject_calendar
from timekeeping.jobs import lifecycle
from timekeeping.models import Job, Record, Subject
from timekeeping.recurring import charges
from timekeeping.tick import test_clocks

START = datetime(2027, 10, 25, 13, tzinfo=UTC)  # 09:00 EDT; EST from 7 November


def document(**price) -> dict:
    work = {"subject": {"kind": "client"}, "steps": {"file": {}},
            "price": {"amount": 180000, "currency": "USD", "final_after": "14d", **price}}
    return {"calendar": {"zone": "America/New_York", "weekends": []},
            "services": {"work": work}}


@pytest.fixture
def job_of(brand):
    def make(**price):
        manifests.load(brand, document(**price))
        clock = test_clocks.create(brand=brand, name="autumn", frozen_time=START)
        subject = Subject.objects.create(brand=brand, test_clock=clock, kind="client",
                                         key="1", name="Harbor", zone="America/New_York")
        return clock, clocks.order(brand=brand, service="work", subject=subject)
    return make


def _customer(job) -> str:
    return f"{job.brand_id}:customer:{job.subject_id}"


def _advance(clock, to):
    clock.refresh_from_db()
    test_clocks.advance(clock, to=to)


def test_the_charge_is_held_then_released_when_the_window_closes_unanswered(job_of):
    clock, job = job_of()
    assert ledger.balance(_customer(job), brand=job.brand_id) == -180000  # held from the customer
    delivered = START + timedelta(days=3)
    _advance(clock, delivered)
    lifecycle.end(Job.objects.get(pk=job.pk), by="owner")
    opened = Record.objects.get(kind="window.opened")
    # 14 calendar days from 09:00 EDT on 28 October is 09:00 EST on 11 November: 337 hours.
    closes = datetime(2027, 11, 11, 14, tzinfo=UTC)
    assert opened.data["closes"] == closes.isoformat().replace("+00:00", "Z")
    _advance(clock, closes - timedelta(seconds=1))
    assert ledger.balance(f"{job.brand_id}:earned:USD", brand=job.brand_id) == 0
    window = [line for line in subject_calendar.lines(job.subject) if line.kind == "window"]
    assert [(line.date, line.what, line.status) for line in window] == [
        (closes.date(), "the acceptance window of work closes",
         "open · a send-back reopens the work until it closes")]
    _advance(clock, closes)
    assert ledger.balance(f"{job.brand_id}:earned:USD", brand=job.brand_id) == 180000
    assert Record.objects.filter(kind="job.accepted").count() == 1
    assert [line.status for line in subject_calendar.lines(job.subject)
            if line.kind == "window"] == ["closed: accepted"]
    assert charges.release(Job.objects.get(pk=job.pk), closes) == \
        "the charge was settled already"  # once, whoever asks again


def test_a_send_back_inside_the_window_keeps_the_charge_until_the_next_delivery(job_of):
    clock, job = job_of()
    lifecycle.end(Job.objects.get(pk=job.pk), by="owner")
    _advance(clock, START + timedelta(days=5))
    sent = charges.send_back(Job.objects.get(pk=job.pk), by="customer")
    assert sent.state == Job.State.OPEN
    _advance(clock, START + timedelta(days=20))  # the first window would have closed
    assert ledger.balance(f"{job.brand_id}:earned:USD", brand=job.brand_id) == 0
    assert gate.propose(job=Job.objects.get(pk=job.pk), step="file").committed
    lifecycle.end(Job.objects.get(pk=job.pk), by="owner")
    _advance(clock, START + timedelta(days=40))
    assert ledger.balance(f"{job.brand_id}:earned:USD", brand=job.brand_id) == 180000
    with pytest.raises(clocks.OrderRefused):  # the window has closed
        charges.send_back(Job.objects.get(pk=job.pk), by="customer")


def test_a_late_deadline_takes_its_price_off_the_charge(job_of):
    clock, job = job_of(within="2d", late="20%")
    _advance(clock, START + timedelta(days=3))  # late on the second day
    lifecycle.end(Job.objects.get(pk=job.pk), by="owner")
    _advance(clock, START + timedelta(days=20))
    assert ledger.balance(f"{job.brand_id}:earned:USD", brand=job.brand_id) == 180000 - 36000
    assert ledger.balance(_customer(job), brand=job.brand_id) == -144000
    released = Record.objects.get(kind="charge.released")
    assert released.data["off"] == 36000


def test_a_lapsed_job_returns_its_hold(job_of, brand):
    clock, job = job_of()
    clocks.end_job(Job.objects.get(pk=job.pk), state=Job.State.LAPSED, by="test")
    assert ledger.balance(_customer(job), brand=job.brand_id) == 0
    assert Record.objects.get(kind="charge.returned").data["why"] == "job lapsed"
    assert not Posting.objects.filter(kind="take").exists()


def released_on_file() -> dict:
    work = {"subject": {"kind": "client"}, "steps": {"file": {}},
            "clocks": {"closes": {"title": "the filing window closes", "hard": True,
                                  "due": {"input": "closes"}, "owner": "brand",
                                  "bars": ["file"], "satisfied_by": ["file"]}},
            "price": {"amount": 180000, "currency": "USD", "release": "file"}}
    return {"calendar": {"zone": "America/New_York", "weekends": []},
            "services": {"work": work}}


@pytest.fixture
def filing(brand):
    manifests.load(brand, released_on_file())
    clock = test_clocks.create(brand=brand, name="autumn", frozen_time=START)
    subject = Subject.objects.create(brand=brand, test_clock=clock, kind="client", key="1",
                                     name="Harbor", zone="America/New_York")
    job = clocks.order(brand=brand, service="work", subject=subject,
                       input={"closes": "2027-11-05"})
    return clock, job


def test_a_charge_released_by_a_step_releases_when_the_step_commits(filing):
    clock, job = filing
    assert gate.propose(job=job, step="file", by="owner").committed
    assert ledger.balance(f"{job.brand_id}:earned:USD", brand=job.brand_id) == 180000
    lifecycle.end(Job.objects.get(pk=job.pk), by="owner")  # delivered: nothing more moves
    assert ledger.balance(f"{job.brand_id}:earned:USD", brand=job.brand_id) == 180000
    assert not Record.objects.filter(kind="charge.returned").exists()


def test_a_charge_waiting_on_a_step_a_hard_date_bars_never_releases(filing):
    clock, job = filing
    # 5 November closes at 23:59 New York time: the step is barred from then on.
    _advance(clock, datetime(2027, 11, 6, 12, tzinfo=UTC))
    refused = gate.propose(job=job, step="file", by="owner")
    assert not refused.committed and refused.code == "date_passed"
    assert ledger.balance(f"{job.brand_id}:earned:USD", brand=job.brand_id) == 0
    lifecycle.end(Job.objects.get(pk=job.pk), by="owner")
    returned = Record.objects.get(kind="charge.returned")
    assert returned.data["why"] == ("its release step 'file' is barred: the hard date closes "
                                    "2027-11-05 passed")
    assert ledger.balance(_customer(job), brand=job.brand_id) == 0 and \
        ledger.balance(f"{job.brand_id}:earned:USD", brand=job.brand_id) == 0


@pytest.mark.parametrize(("price", "code"), [
    ({"release": "nope"}, "price.release_unknown"),
    ({"release": "file", "final_after": "7d"}, "price.release_without_charge"),
])
def test_the_release_step_is_checked(price, code):
    found = released_on_file()
    found["services"]["work"]["price"].update(price)
    assert code in {problem.code for problem in manifests.check(found)}


@pytest.mark.parametrize("state", [Job.State.LAPSED, Job.State.CANCELLED])
def test_a_job_ended_before_delivery_is_charged_the_paid_acts_it_committed(brand, state):
    document = released_on_file()
    work = document["services"]["work"]
    work["steps"]["prepare"] = {}
    work["price"] = {"amount": 180000, "currency": "USD", "acts": {"prepare": 60000,
                                                                   "file": 120000}}
    manifests.load(brand, document)
    clock = test_clocks.create(brand=brand, name="autumn", frozen_time=START)
    subject = Subject.objects.create(brand=brand, test_clock=clock, kind="client", key="1",
                                     name="Harbor", zone="America/New_York")
    job = clocks.order(brand=brand, service="work", subject=subject,
                       input={"closes": "2027-11-05"})
    assert gate.propose(job=job, step="prepare", by="owner").committed
    clocks.end_job(Job.objects.get(pk=job.pk), state=state, by="test")
    charged = Record.objects.get(kind="acts.charged")
    assert charged.data["acts"] == {"prepare": 60000} and charged.data["amount"] == 60000
    # The hold back, the act charged.
    assert ledger.balance(_customer(job), brand=job.brand_id) == -60000
    assert ledger.balance(f"{job.brand_id}:earned:USD", brand=job.brand_id) == 60000
    told = [said.text for said in history.history(subject)]
    assert "The acts already taken were charged: prepare, $600.00." in told


@pytest.mark.parametrize(("acts", "code"), [
    ({"nope": 100}, "price.acts_unknown"),
    ({"file": 0}, "price.acts_invalid"),
    ({"file": 180001}, "price.acts_invalid"),
    ({"file": 100000, "prepare": 100000}, "price.acts_invalid"),  # more than the charge
    ([], "price.acts_invalid"),
])
def test_paid_acts_are_checked(acts, code):
    found = released_on_file()
    found["services"]["work"]["steps"]["prepare"] = {}
    found["services"]["work"]["price"] = {"amount": 180000, "currency": "USD", "acts": acts}
    assert code in {problem.code for problem in manifests.check(found)}
