"""The tick's timers phase takes brands in turn (issue 31, "Fair shares"): one brand's backlog
of owed timers cannot take the whole budget from another brand's."""

from datetime import datetime, timedelta
from types import SimpleNamespace
from zoneinfo import ZoneInfo

from timekeeping.models import Brand, Record
from timekeeping.tick import engine, groups, phases
from timekeeping.timers import delays

T0 = datetime(2027, 3, 14, 9, 30, tzinfo=ZoneInfo("Europe/Berlin"))
# The tick's time, moved by the firings (a second each), never by the real clock.
SECONDS = SimpleNamespace(now=0.0)


@delays.operation("tests.fair.slow")
def slow(*, input, now, brand):
    SECONDS.now += 1.0
    return "a second's work"


def backlog(name: str, count: int) -> Brand:
    brand = Brand.objects.create(name=name, slug=name.lower())
    for n in range(count):
        delays.delay("tests.fair.slow", {"n": n}, brand=brand,
                     at=T0 - timedelta(minutes=1, seconds=n), key=f"k{n}")
    return brand


def fired(brand: Brand) -> int:
    return Record.objects.filter(brand=brand, kind="timer.fired").count()


def test_a_large_backlog_leaves_the_other_large_clocks_their_share_of_the_budget(db,
                                                                                  monkeypatch):
    clock = SimpleNamespace(monotonic=lambda: SECONDS.now)
    monkeypatch.setattr(phases, "time", clock)
    monkeypatch.setattr(engine, "time", clock)
    monkeypatch.setattr("timekeeping.tick.clock.time", clock)
    SECONDS.now = 0.0
    first, second = sorted([backlog("Loud", 300), backlog("Quiet", groups.GROUP_OWED + 20)],
                           key=lambda brand: brand.pk)
    phases.run_once(now=T0, budget=timedelta(seconds=100), batch_size=10, phases=False,
                    sweep=False)
    # Each fires its share (fifty seconds of the hundred), to the batch.
    assert 50 <= fired(first) <= 60
    assert fired(second) >= 40
