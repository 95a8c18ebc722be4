"""Several keys armed again at once (`arming.rearm_keys`, issue 32: an ask's reminder and
expiry when its link opens again): what `arming.rearm` leaves key by key, in one statement
however many keys on PostgreSQL (three elsewhere), on the real clock and on a test clock."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from timekeeping.models import Brand, TestClock, Timer
from timekeeping.timers import arming

pytestmark = pytest.mark.django_db

NEW_YORK = ZoneInfo("America/New_York")
# The night New York's clocks go back: 01:30 comes twice, an hour apart.
FIRST = datetime(2027, 11, 7, 1, 30, tzinfo=NEW_YORK)
AGAIN = datetime(2027, 11, 7, 1, 30, fold=1, tzinfo=NEW_YORK)
LATER = datetime(2027, 11, 8, 9, tzinfo=NEW_YORK)


def _arm(brand, test_clock, key, owed, state=Timer.State.ARMED):
    timer = arming.arm(brand=brand, test_clock=test_clock, kind="delay", key=key, owed=owed,
                       owner_type="job", owner_id="job_1", owner_opened=FIRST,
                       payload={"operation": "timekeeping.noop", "input": {}})
    if state != Timer.State.ARMED:
        Timer.objects.filter(pk=timer.pk).update(state=state)


def _world(name, on_test_clock):
    """A brand whose keys hold each case `rearm` answers: a live timer owed then, one owed
    at the other 01:30, a key that rang at the instant wanted (and has a live one besides),
    a key that rang at another instant, and a key with nothing under it."""
    brand = Brand.objects.create(name=name, slug=name)
    test_clock = (TestClock.objects.create(brand=brand, name="a year", frozen_time=FIRST)
                  if on_test_clock else None)
    _arm(brand, test_clock, "same", AGAIN)
    _arm(brand, test_clock, "moved", FIRST)
    _arm(brand, test_clock, "rang", AGAIN, Timer.State.FIRED)
    _arm(brand, test_clock, "rang", LATER)
    _arm(brand, test_clock, "rang before", FIRST, Timer.State.FIRED)
    _arm(brand, test_clock, "aside", LATER)  # the owner's, under a key not wanted: left
    return brand, test_clock


WANTED = {"same": AGAIN, "moved": AGAIN, "rang": AGAIN, "rang before": AGAIN, "new": LATER}


def _left(brand):
    return sorted((timer.key, timer.owed, timer.state, timer.ended_by, timer.payload)
                  for timer in Timer.objects.filter(brand=brand))


@pytest.mark.parametrize("on_test_clock", [False, True], ids=["real clock", "test clock"])
def test_it_leaves_what_rearm_leaves_key_by_key_in_one_statement_or_three(on_test_clock,
                                                                          monkeypatch):
    one_by_one, at_once = _world("by-key", on_test_clock), _world("at-once", on_test_clock)
    fields = {"kind": "delay", "why": "the link opened again", "owner_type": "job",
              "owner_id": "job_1", "owner_opened": FIRST}
    payload = {"operation": "timekeeping.noop", "input": {"again": True}}
    for key, owed in WANTED.items():
        arming.rearm(brand=one_by_one[0], test_clock=one_by_one[1], key=key, owed=owed,
                     payload=payload, **fields)
    with CaptureQueriesContext(connection) as sent:
        arming.rearm_keys(brand=at_once[0], test_clock=at_once[1],
                          wanted={key: (owed, payload) for key, owed in WANTED.items()},
                          **fields)
    # On PostgreSQL the superseded ended, saying which, and then the new written, each key
    # looked up as it is, in one statement ("moved" is written though its live timer held
    # the key when the statement began); elsewhere the keys read first.
    assert len(sent) == (1 if connection.vendor == "postgresql" else 3)
    assert _left(at_once[0]) == _left(one_by_one[0])
    live = dict(Timer.objects.filter(brand=at_once[0], state=Timer.State.ARMED).values_list(
        "key", "owed"))
    # In UTC: an instant of the hour that happens twice never equals one of another zone.
    assert live == {key: owed.astimezone(UTC) for key, owed in [
        ("same", AGAIN), ("moved", AGAIN), ("new", LATER), ("rang before", AGAIN),
        ("aside", LATER)]}
    assert live["moved"] - FIRST.astimezone(UTC) == timedelta(hours=1)
    # The timer already owed at the second 01:30 is kept, not armed again at the same instant.
    assert Timer.objects.filter(brand=at_once[0], key="same").count() == 1
    if connection.vendor != "postgresql":
        return
    read_first = _world("read-first", on_test_clock)
    monkeypatch.setattr(arming, "looked_up_in_one", lambda: False)
    with CaptureQueriesContext(connection) as sent:
        arming.rearm_keys(brand=read_first[0], test_clock=read_first[1],
                          wanted={key: (owed, payload) for key, owed in WANTED.items()},
                          **fields)
    assert len(sent) == 3
    assert _left(read_first[0]) == _left(at_once[0])


def test_a_naive_instant_is_refused_before_anything_is_written():
    brand, _ = _world("naive", False)
    with pytest.raises(ValueError, match="aware"):
        arming.rearm_keys(brand=brand, test_clock=None, kind="delay", why="x",
                          wanted={"new": (datetime(2027, 1, 1), {})},  # noqa: DTZ001
                          owner_id="job_1")
    assert not Timer.objects.filter(brand=brand, key="new").exists()


def _many(brand, test_clock, payload):
    """`rearm_many` for job_1: the cases of `WANTED`, and besides them a key of job_1 it no
    longer wants (`_world_of_many`)."""
    arming.rearm_many(brand=brand, test_clock=test_clock, kind="delay",
                      wanted={key: (owed, payload) for key, owed in WANTED.items()},
                      why="the date moved", owner_id="job_1", owner_type="job",
                      owner_opened=FIRST)


def _world_of_many(name, on_test_clock):
    """`_world`, with a live timer of job_1 under a key it will no longer want, and a live
    timer of another owner under a key it wants ("new")."""
    brand, test_clock = _world(name, on_test_clock)
    _arm(brand, test_clock, "unwanted", LATER)
    arming.arm(brand=brand, test_clock=test_clock, kind="delay", key="new", owed=FIRST,
               owner_type="job", owner_id="job_2", owner_opened=FIRST, payload={})
    return brand, test_clock


@pytest.mark.parametrize("on_test_clock", [False, True], ids=["real clock", "test clock"])
def test_many_keys_of_an_owner_are_armed_again_as_rearm_leaves_them(on_test_clock,
                                                                     monkeypatch):
    """`rearm_many` (a date's rungs when it moves, issue 32): the owner's live timers it no
    longer wants and those owed at another time superseded, the live one owed then kept, a
    key that rang for that very instant not armed again. On PostgreSQL in one statement (the
    update says what it superseded, then the insert looks up each key), elsewhere in three;
    on PostgreSQL both ways leave the same timers."""
    payload = {"operation": "timekeeping.noop", "input": {"again": True}}
    brand, test_clock = _world_of_many("many", on_test_clock)
    with CaptureQueriesContext(connection) as sent:
        _many(brand, test_clock, payload)
    assert len(sent) == (1 if connection.vendor == "postgresql" else 3)
    live = dict(Timer.objects.filter(brand=brand, state=Timer.State.ARMED).values_list(
        "key", "owed"))
    assert live == {key: owed.astimezone(UTC) for key, owed in [
        ("same", AGAIN), ("moved", AGAIN), ("new", LATER), ("rang before", AGAIN)]}
    assert Timer.objects.filter(brand=brand, key="same").count() == 1
    superseded = Timer.objects.filter(brand=brand, state=Timer.State.SUPERSEDED)
    assert sorted((timer.key, timer.ended_by) for timer in superseded) == [
        ("aside", "the date moved"), ("moved", "the date moved"), ("new", "the date moved"),
        ("unwanted", "the date moved")]
    if connection.vendor != "postgresql":
        return
    read_first = _world_of_many("read-first", on_test_clock)
    monkeypatch.setattr(arming, "looked_up_in_one", lambda: False)
    with CaptureQueriesContext(connection) as sent:
        _many(*read_first, payload)
    assert len(sent) == 3
    assert _left(read_first[0]) == _left(brand)
