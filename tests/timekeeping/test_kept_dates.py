"""A job's dates as a firing batch read them, kept through what cannot have changed them
(`timekeeping.clocks.kept`, issue 32): a step's commit, a deadline's move, and a move made
through the very row read; forgotten through any other record of the job, a move made through
another row among them; and, of the dates a step may move, put in the order a read would give
them now, or read again when that order is not known."""

from datetime import UTC, date, datetime
from types import SimpleNamespace

import pytest

from timekeeping.clocks import kept
from timekeeping.models import Occurrence, TickRun
from timekeeping.timers import in_progress, records
from timekeeping.timers.firing import Firing

APRIL, OCTOBER, NOVEMBER = date(2027, 4, 15), date(2027, 10, 15), date(2027, 11, 15)
JOB = SimpleNamespace(pk="job_kept")  # what the batch keeps the dates under: the job's id


def _date(pk: int, clock: str, item: str, due: date) -> Occurrence:
    return Occurrence(pk=pk, clock_id=clock, item=item, due=due)


def _moved(date_read: Occurrence, before: date, to: date) -> records.Entry:
    return records.Entry("clock.moved", job=JOB.pk, data={
        "clock": date_read.clock_id, "item": date_read.item, "from": before, "to": to})


def test_a_move_leaves_a_date_read_only_when_made_through_it():
    us, ca = _date(1, "clk_file", "US", OCTOBER), _date(2, "clk_file", "US-CA", APRIL)
    assert kept.dates_stand(us, _moved(us, APRIL, OCTOBER))  # its day is the new one
    assert not kept.dates_stand(ca, _moved(ca, APRIL, NOVEMBER))  # moved through another row
    assert kept.dates_stand(ca, _moved(us, APRIL, OCTOBER))  # another date's move
    assert not kept.dates_stand(us, _moved(us, OCTOBER, OCTOBER))  # no day to tell it by
    for stands in ("step.committed", "deadline.moved"):
        assert kept.dates_stand(ca, records.Entry(stands, job=JOB.pk))
    for forgets in ("clock.satisfied", "clock.lapsed", "clock.reopened", "ask.opened"):
        assert not kept.dates_stand(ca, records.Entry(forgets, job=JOB.pk))
    # The dates a step may move, with their days when read: the same, date by date.
    assert kept.dates_stand(([us, ca], {1: APRIL, 2: APRIL}), _moved(us, APRIL, OCTOBER))
    assert not kept.dates_stand(([us, ca], {1: APRIL, 2: APRIL}), _moved(ca, APRIL, OCTOBER))


@pytest.fixture
def batch(brand):
    firing = Firing(brand=brand, test_clock=None, instant=datetime(2027, 4, 12, 16, tzinfo=UTC),
                    run=TickRun(brand=brand), pass_no=1, first_seq=0)
    token = in_progress.enter(firing)
    yield firing
    in_progress.leave(token)


def _read(*dates: Occurrence) -> list[Occurrence]:
    """Dates as a read gives them, and kept for the batch as read now."""
    kept.keep_movable(JOB, list(dates), {one.pk: one.due for one in dates}, kept.mark())
    return list(dates)


def _move(batch: Firing, date_read: Occurrence, to: date) -> None:
    before, date_read.due = date_read.due, to
    batch.record("clock.moved", job=JOB.pk, data=_moved(date_read, before, to).data)


@pytest.mark.django_db
def test_the_dates_a_step_may_move_are_taken_in_the_order_a_read_would_give_them(batch):
    us, ca = _date(1, "clk_file", "US", APRIL), _date(2, "clk_file", "US-CA", APRIL)
    franchise = _date(3, "clk_franchise", "", OCTOBER)
    _read(us, ca, franchise)
    _move(batch, us, NOVEMBER)
    batch.record("step.committed", job=JOB.pk, data={"step": "extend"})
    batch.record("clock.notice", job=JOB.pk)  # one that tells
    assert kept.movable(JOB) == [ca, franchise, us]  # by day: the move put it last
    assert kept.movable(JOB) is None  # taken once
    # Two now share a day that did not when read: the database orders them by their clocks,
    # which the batch does not know; read again.
    _read(ca, franchise, us)
    _move(batch, ca, OCTOBER)
    assert kept.movable(JOB) is None
    # Moved through another row (a date that follows another, read on its own), or anything
    # else of the job's dates on the record: read again.
    _read(us, franchise)
    batch.record("clock.moved", job=JOB.pk, data=_moved(franchise, OCTOBER, NOVEMBER).data)
    assert kept.movable(JOB) is None
    _read(us, franchise)
    batch.record("clock.satisfied", job=JOB.pk, data={"clock": "clk_franchise", "item": ""})
    assert kept.movable(JOB) is None
    # Another job's records leave them.
    _read(us, franchise)
    batch.record("clock.satisfied", job="job_other", data={})
    assert kept.movable(JOB) == [franchise, us]
