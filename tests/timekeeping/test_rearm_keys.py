"""Several keys armed again at once (`arming.rearm_keys`, issue 32: an ask's reminder and
expiry when its link opens again): what `arming.rearm` leaves key by key, in three statements
however many keys, on the real clock and on a test clock."""

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
    return brand, test_clock


WANTED = {"same": AGAIN, "moved": AGAIN, "rang": AGAIN, "rang before": AGAIN, "new": LATER}


def _left(brand):
    return sorted((timer.key, timer.owed, timer.state, timer.ended_by, timer.payload)
                  for timer in Timer.objects.filter(brand=brand))


@pytest.mark.parametrize("on_test_clock", [False, True], ids=["real clock", "test clock"])
def test_it_leaves_what_rearm_leaves_key_by_key_in_three_statements(on_test_clock):
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
    assert len(sent) == 3  # the keys read, the superseded ended, the new written
    assert _left(at_once[0]) == _left(one_by_one[0])
    live = dict(Timer.objects.filter(brand=at_once[0], state=Timer.State.ARMED).values_list(
        "key", "owed"))
    # In UTC: an instant of the hour that happens twice never equals one of another zone.
    assert live == {key: owed.astimezone(UTC) for key, owed in [
        ("same", AGAIN), ("moved", AGAIN), ("new", LATER), ("rang before", AGAIN)]}
    assert live["moved"] - FIRST.astimezone(UTC) == timedelta(hours=1)
    # The timer already owed at the second 01:30 is kept, not armed again at the same instant.
    assert Timer.objects.filter(brand=at_once[0], key="same").count() == 1


def test_a_naive_instant_is_refused_before_anything_is_written():
    brand, _ = _world("naive", False)
    with pytest.raises(ValueError, match="aware"):
        arming.rearm_keys(brand=brand, test_clock=None, kind="delay", why="x",
                          wanted={"new": (datetime(2027, 1, 1), {})},  # noqa: DTZ001
                          owner_id="job_1")
    assert not Timer.objects.filter(brand=brand, key="new").exists()
