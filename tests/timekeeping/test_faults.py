"""Fault isolation in the tick: a broken brand clock, connection or phase is recorded once,
its owner told once, and everything else in the tick goes on (timekeeping.timers.faults)."""

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from tests.processes import ROOT
from timekeeping import manifests
from timekeeping.models import (
    Brand,
    Connection,
    Delivery,
    Fault,
    Record,
    TickRun,
    Timer,
)
from timekeeping.schedules import engine as schedules
from timekeeping.tick import phases
from timekeeping.tick.engine import Engine
from timekeeping.timers import delays, records

T0 = datetime(2026, 11, 30, 14, tzinfo=UTC)
VENUE = json.loads((Path(__file__).resolve().parents[2] / "timekeeping" / "manifests" /
                    "examples" / "venue.json").read_text())


@delays.operation("tests.bad_record")
def bad_record(*, input, now, brand):
    """A handler whose record cannot be stored: a set is not JSON."""
    records.write("note", brand=brand, instant=now, data={"tags": {"a", "b"}})
    return "wrote"


@pytest.fixture
def other(db):
    owner = get_user_model().objects.create_user("other", email="other@example.test")
    return Brand.objects.create(name="Other Filing", slug="other", owner=owner)


@pytest.fixture
def owned(brand, actors):
    actors["owner"].email = "owner@example.test"
    actors["owner"].save(update_fields=["email"])
    return Brand.objects.select_related("owner").get(pk=brand.pk)


def note(brand, n, at=T0):
    return delays.delay("timekeeping.note", {"n": n}, brand=brand, at=at, key=f"note:{n}")


def fault_emails(brand):
    return Delivery.objects.filter(brand=brand, idempotency_key__startswith="fault:")


def test_it_records_a_firing_whose_record_cannot_be_stored_and_fires_the_rest(brand, other):
    bad = delays.delay("tests.bad_record", {}, brand=brand, at=T0 - timedelta(minutes=1))
    good = note(brand, 1)
    elsewhere = note(other, 2)
    result = phases.run_once(now=T0)
    failed = Timer.objects.get(pk=bad)
    assert (failed.state, failed.attempts) == ("armed", 1)
    assert "TypeError" in failed.last_error
    record = Record.objects.get(kind="timer.failed", timer=bad)
    assert record.data["error"].startswith("TypeError")
    assert Timer.objects.get(pk=good).state == "fired"
    assert Timer.objects.get(pk=elsewhere).state == "fired"
    assert result.total("failed") == 1 and result.faults == []


# Transactional, as a real tick runs: each brand clock's work commits on its own, so the run
# of a clock that failed stays, marked failed (inside one test transaction the guard's
# savepoint would take it back).
@pytest.mark.django_db(transaction=True)
def test_a_broken_brand_clock_is_recorded_once_and_the_others_fire(owned, other, monkeypatch):
    # Every firing of a clock starts here, in a group of small clocks or alone: a clock that
    # breaks here breaks beyond the batch's isolation of one timer.
    firing = Engine._firing

    def broken(engine, instant, pass_no):
        if engine.brand.pk == owned.pk:
            raise RuntimeError("the brand's clock is broken")
        return firing(engine, instant, pass_no)

    monkeypatch.setattr(Engine, "_firing", broken)
    stuck, fine = note(owned, 1), note(other, 2)
    first = phases.run_once(now=T0)
    second = phases.run_once(now=T0 + timedelta(minutes=1))
    assert Timer.objects.get(pk=fine).state == "fired"
    assert Timer.objects.get(pk=stuck).state == "armed"
    fault = Fault.objects.get(phase="timers", where=owned.pk)
    assert (fault.count, fault.resolved, fault.brand_id) == (2, None, owned.pk)
    assert "the brand's clock is broken" in fault.error
    assert Record.objects.filter(brand=owned, kind="tick.failed").count() == 1
    assert fault_emails(owned).count() == 1
    assert fault_emails(owned).get().payload["to"] == ["owner@example.test"]
    assert [f.where for f in first.faults] == [owned.pk] == [f.where for f in second.faults]
    assert "FAILED timers" in first.summary()
    runs = TickRun.objects.filter(brand=owned).order_by("started")
    assert [bool(run.error and run.finished) for run in runs] == [True, True]

    monkeypatch.setattr(Engine, "_firing", firing)
    third = phases.run_once(now=T0 + timedelta(minutes=2))
    assert Timer.objects.get(pk=stuck).state == "fired"
    assert third.faults == []
    fault.refresh_from_db()
    assert fault.resolved == T0 + timedelta(minutes=2)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_a_connection_whose_database_cannot_be_reached_stops_only_its_minute(owned, other):
    manifests.load(owned, VENUE)
    Connection.objects.filter(brand=owned).update(database="nowhere")  # its alias was removed
    pending = Delivery.objects.create(brand=other, channel="email", idempotency_key="k1",
                                      payload={"to": ["a@example.test"], "subject": "s",
                                               "body": "b"}, next_attempt=T0)
    fine = note(other, 1)
    result = phases.run_once(now=T0)
    # Two minutes on: past the connection's first wait (about a minute, ±10%, issue 31).
    phases.run_once(now=T0 + timedelta(minutes=2))
    fault = Fault.objects.get(phase="moves")
    assert (fault.where, fault.count, fault.brand_id) == (owned.connection.pk, 2, owned.pk)
    assert "nowhere" in fault.error
    assert Timer.objects.get(pk=fine).state == "fired"
    pending.refresh_from_db()
    assert pending.state == "succeeded"
    assert result.sweep is not None and result.sweep.sent >= 1
    assert Record.objects.filter(brand=owned, kind="tick.failed").count() == 1


def test_a_failing_phase_leaves_the_later_phases_to_run(brand, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("schedules are broken")

    monkeypatch.setattr(schedules, "run_due", broken)
    pending = Delivery.objects.create(brand=brand, channel="email", idempotency_key="k2",
                                      payload={"to": ["a@example.test"], "subject": "s",
                                               "body": "b"}, next_attempt=T0)
    result = phases.run_once(now=T0)
    assert [(f.phase, f.where, f.brand_id) for f in result.faults] == [
        ("schedules", "schedules", None)]
    pending.refresh_from_db()
    assert pending.state == "succeeded"
    assert result.housekeeping is not None


def test_a_clock_ticked_again_marks_the_run_a_killed_tick_left_unfinished(brand):
    left = TickRun.objects.create(brand=brand, instant=T0, started=T0, holder="gone:1:x")
    note(brand, 1)
    phases.run_once(now=T0 + timedelta(minutes=1))
    left.refresh_from_db()
    assert left.finished is not None and left.error.startswith("abandoned")


def test_housekeeping_marks_unfinished_runs_of_clocks_nobody_ticks(brand):
    old = TickRun.objects.create(brand=brand, instant=T0, started=T0, holder="gone:1:x")
    recent = TickRun.objects.create(brand=brand, instant=T0, started=T0 + timedelta(hours=2),
                                    holder="gone:1:y")
    phases.run_once(now=T0 + timedelta(hours=2, minutes=30))
    old.refresh_from_db()
    recent.refresh_from_db()
    assert old.error.startswith("abandoned") and old.finished is not None
    assert recent.finished is None


def test_the_tick_exits_non_zero_when_its_database_is_gone():
    gone = subprocess.run(
        [sys.executable, "manage.py", "tick"], cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "DEBUG": "true",
             "DATABASE_URL": "postgres://postgres@127.0.0.1:1/nowhere"}, timeout=120)
    assert gone.returncode != 0
    assert "127.0.0.1" in gone.stderr and "port 1" in gone.stderr
