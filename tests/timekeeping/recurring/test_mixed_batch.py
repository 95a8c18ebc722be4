"""A mixed batch fires in the tick's fixed order, whatever its handlers write in bulk (issue 32).

A tax practice's February tick in New York: the Tax Plan's mints (place 2) and notes (delays,
place 4) owed at one instant, and the minted returns' 90-day notices (clock timers, place 6,
owed since 15 January) that the mints arm, fired in the tick's second pass. Each order
inside a mint gathers its timers and writes them together; the firings still come out in the
tie order (pass, then owed, place, when the owner opened, key), one `timer.fired` each, and
each mint's job opened once."""

import json
from datetime import UTC, datetime, timedelta

import pytest

from timekeeping import manifests
from timekeeping.basics import wallclock
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Brand, Record, Subject, Timer
from timekeeping.recurring import plans
from timekeeping.tick import phases
from timekeeping.timers import delays

SUBSCRIBED = datetime(2028, 1, 25, 14, tzinfo=UTC)  # 09:00 in New York
MINT = datetime(2028, 2, 1, 14, tzinfo=UTC)  # the Tax Plan's mint: 09:00 New York
TICK = MINT + timedelta(minutes=5)
CLIENT = {"jurisdictions": ["US", "US-CA"], "earliest_credit_expiry": "2046-12-31"}

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def practice(actors):
    brand = Brand.objects.create(name="Mixed Practice", slug="mixed", owner=actors["owner"],
                                 plan="team")
    manifests.load(brand, json.loads(TAX_MANIFEST.read_text()))
    with wallclock.fixed(SUBSCRIBED):
        for n in range(4):
            subject = Subject.objects.create(brand=brand, kind="taxpayer", key=f"c{n}",
                                             name=f"Client {n}", zone="America/New_York",
                                             input=CLIENT)
            plans.subscribe(subject=subject, service="tax-plan", anchor=SUBSCRIBED.date())
        for n in range(3):
            delays.delay("timekeeping.note", {}, brand=brand, at=MINT, key=f"note:{n}")
    return brand


def test_a_mixed_batch_fires_in_tie_order_each_timer_once(practice):
    with wallclock.fixed(TICK):
        phases.run_once(now=TICK, brand_ids=[practice.pk], sweep=False)
    fired = list(Record.objects.filter(brand=practice, kind="timer.fired"))
    fired.sort(key=lambda record: record.data["seq"])
    timers = {timer.id: timer for timer in Timer.objects.filter(brand=practice)}
    in_order = [timers[record.timer] for record in fired]
    assert {timer.kind for timer in in_order} == {"schedule", "delay", "clock"}
    assert [record.data["pass"] for record in fired] == sorted(
        record.data["pass"] for record in fired)
    for pass_no in {record.data["pass"] for record in fired}:
        fired_then = [timers[r.timer] for r in fired if r.data["pass"] == pass_no]
        assert fired_then == sorted(fired_then, key=lambda t: (
            t.owed, t.place, t.owner_opened, t.key.encode()))
    assert len({record.timer for record in fired}) == len(fired)  # each once
    # The mints came first (place 2), then the notes (4); the notices in the next pass.
    assert [t.kind for t in in_order[:7]] == ["schedule"] * 4 + ["delay"] * 3
    assert all(t.kind == "clock" for t in in_order[7:]) and len(in_order) > 7
    minted = Record.objects.filter(brand=practice, kind="schedule.minted")
    opened = Record.objects.filter(brand=practice, kind="job.opened")
    assert minted.count() == opened.count() == 4
    assert {r.job for r in minted} == {r.job for r in opened}
