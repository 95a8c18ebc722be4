"""The tick holds one batch at a time (issue 16, DESIGN decision 4): what a tick or a walk
returns holds no per-timer objects, whatever the backlog, and a trace is handed over batch by
batch as it is made, never gathered. (`bench/memory.py` measures the process's memory.)"""

import gc
from collections import Counter
from datetime import UTC, datetime, timedelta
from io import StringIO
from types import BuiltinFunctionType, FunctionType, MethodType, ModuleType

import pytest
from django.core.management import call_command
from hypothesis import given
from hypothesis import strategies as st

from calendars.moments import shift
from timekeeping.basics import wallclock
from timekeeping.models import Brand, TestClock, Timer, Walk
from timekeeping.tick import phases, results, test_clocks
from timekeeping.timers import delays

T0 = datetime(2026, 11, 30, 14, tzinfo=UTC)
NY = "America/New_York"
PER_TIMER = {"Timer", "TraceRow", "Firing", "Entry", "Delivery", "Record"}


@delays.operation("tests.nine_in_new_york")
def nine_in_new_york(*, input, now, brand):
    """Re-arms itself a calendar day later at 09:00 in New York, `left` more times."""
    if input["left"]:
        delays.delay("tests.nine_in_new_york", {"left": input["left"] - 1}, brand=brand,
                     at=shift(now, NY, days=1), key=f"ny:{input['left']}")
    return "nine"


def reachable(root) -> Counter:
    """The objects `root` holds, by type name: everything reachable from it, stopping at
    classes, modules and functions (which every object reaches through its type)."""
    seen: set[int] = set()
    found: Counter = Counter()
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type | ModuleType | FunctionType | MethodType
                                         | BuiltinFunctionType):
            continue
        seen.add(id(obj))
        found[type(obj).__name__] += 1
        stack.extend(gc.get_referents(obj))
    return found


def owed(brand, count: int, *, at: datetime = T0) -> None:
    for n in range(count):
        delays.delay("timekeeping.note", {"n": n}, brand=brand,
                     at=at - timedelta(seconds=1 + n % 600), owner=f"ord_{n % 7}")


def test_a_ticks_result_holds_the_same_whatever_it_fired(brand):
    owed(brand, 12)
    few = phases.run_once(now=T0, batch_size=5, phases=False, sweep=False)
    owed(brand, 240, at=T0 + timedelta(minutes=1))
    many = phases.run_once(now=T0 + timedelta(minutes=1), batch_size=5, phases=False,
                           sweep=False)
    assert (few.total("fired"), many.total("fired")) == (12, 240)
    small, large = reachable(few), reachable(many)
    assert not PER_TIMER & (set(small) | set(large))
    # The same objects, but for the numbers in them: 48 batches left nothing more than 3.
    assert {name: n for name, n in large.items() if name not in ("int", "float")} == {
        name: n for name, n in small.items() if name not in ("int", "float")}


def test_a_ticks_result_keeps_a_sample_of_its_clocks_and_the_figures_of_all(db):
    brands = [Brand.objects.create(name=f"Shop {n}", slug=f"shop-{n}")
              for n in range(results.SAMPLE + 20)]
    for brand in brands:
        owed(brand, 2)
    result = phases.run_once(now=T0, phases=False, sweep=False)
    assert len(result.clocks) == results.SAMPLE + 20
    assert len(list(result.clocks)) == results.SAMPLE
    assert result.total("fired") == 2 * len(brands) and result.passes_max == 1
    held = reachable(result)
    assert held["TickRun"] == results.SAMPLE and not PER_TIMER & set(held)
    assert f"{results.SAMPLE + 20} clock(s)" in result.summary()
    assert result.as_dict()["clocks"] == results.SAMPLE + 20


def test_the_trace_is_handed_over_batch_by_batch_and_not_kept(brand):
    owed(brand, 120)
    batches = []
    result = phases.run_once(now=T0, batch_size=50, phases=False, sweep=False,
                             trace=lambda run, rows: batches.append((run.brand_id, len(rows))))
    assert batches == [(brand.pk, 50), (brand.pk, 50), (brand.pk, 20)]
    assert not PER_TIMER & set(reachable(result))


def test_the_command_writes_the_trace_as_it_goes_clock_by_clock(brand):
    other = Brand.objects.create(name="Second Shop", slug="second")
    owed(brand, 3)
    owed(other, 2)
    out = StringIO()
    with wallclock.fixed(T0):
        call_command("tick", "--trace", "--on", "ord_1,ord_0", stdout=out)
    lines = out.getvalue().splitlines()
    first, second = sorted([brand.pk, other.pk])
    assert lines[0] == f"{first} real clock · 2026-11-30 14:00Z · UTC"
    assert lines[1].split() == ["pass", "owed", "fired", "place", "kind", "on", "what"]
    shown = {brand.pk: 2, other.pk: 2}  # ord_0 and ord_1 of each
    assert [line.split()[7] for line in lines[2:2 + shown[first]]] == ["ord_1", "ord_0"]
    assert lines[2 + shown[first]] == (f"{first} real clock · {shown[first]} fired · 0 armed · "
                                       "0 held · 1 passes")
    assert lines[3 + shown[first]] == f"{second} real clock · 2026-11-30 14:00Z · UTC"
    assert lines[-2] == f"{second} real clock · 2 fired · 0 armed · 0 held · 1 passes"
    assert lines[-1].startswith("tick 2026-11-30 14:00:00Z · 2 clock(s) · 5 fired")


def test_a_dry_run_writes_the_trace_and_keeps_nothing(brand):
    owed(brand, 4)
    out = StringIO()
    call_command("tick", "--dry-run", "--to", "2026-11-30T14:00Z", "--trace", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == f"{brand.pk} real clock · 2026-11-30 14:00Z · UTC"
    assert lines[-2] == f"{brand.pk} real clock · 4 fired · 0 armed · 0 held · 1 passes"
    assert lines[-1].startswith("dry run, nothing kept: ")
    assert set(Timer.objects.values_list("state", flat=True)) == {"armed"}


@pytest.mark.parametrize("days", [3, 40])
def test_a_walk_across_a_dst_change_returns_figures_not_firings(brand, days):
    """New York springs forward on 14 March 2027: nine o'clock is 14:00Z, then 13:00Z."""
    start = datetime(2027, 3, 12, 12, tzinfo=UTC)
    test_clock = TestClock.objects.create(brand=brand, name="spring", frozen_time=start)
    delays.delay("tests.nine_in_new_york", {"left": days}, brand=brand, test_clock=test_clock,
                 at=datetime(2027, 3, 12, 14, tzinfo=UTC), key="ny:first")
    handed = []
    ticked = test_clocks.advance(test_clock, to=start + timedelta(days=days, hours=4),
                                 batch_size=1, trace=lambda run, rows: handed.append(
                                     [row.fired for row in rows]))
    assert ticked.run.fired == days + 1 and all(len(rows) == 1 for rows in handed)
    assert [rows[0] for rows in handed[:4]] == [
        datetime(2027, 3, 12, 14, tzinfo=UTC), datetime(2027, 3, 13, 14, tzinfo=UTC),
        datetime(2027, 3, 14, 13, tzinfo=UTC), datetime(2027, 3, 15, 13, tzinfo=UTC)]
    assert not PER_TIMER & set(reachable(ticked))
    walk = Walk.objects.get(test_clock=test_clock)
    assert (walk.fired, walk.line_count) == (days + 1, days + 1)


def test_the_tick_lists_the_clocks_owing_a_page_at_a_time(db, monkeypatch):
    monkeypatch.setattr(phases, "CLOCK_PAGE", 3)
    brands = [Brand.objects.create(name=f"Shop {n}", slug=f"shop-{n}") for n in range(8)]
    for brand in brands:
        owed(brand, 1 + brands.index(brand) % 2)
    pages = []
    listed = phases.owed_clocks

    def listing(*args, **kwargs):
        page = listed(*args, **kwargs)
        pages.append([brand.pk for brand in page])
        return page

    monkeypatch.setattr(phases, "owed_clocks", listing)
    late = phases.run_once(now=T0, budget=timedelta(0), phases=False, sweep=False)
    # Past the budget at once: the first page is not reached, the rest only counted.
    assert len(pages) == 1 and len(late.unreached) == 8 and late.total("fired") == 0
    pages.clear()
    result = phases.run_once(now=T0, phases=False, sweep=False)
    in_order = sorted(brand.pk for brand in brands)
    assert pages == [in_order[:3], in_order[3:6], in_order[6:]]
    assert [t.run.brand_id for t in result.clocks] == in_order
    assert result.total("fired") == 12 and not result.unreached


@given(st.lists(st.integers(), max_size=3 * results.SAMPLE), st.integers(0, 3))
def test_a_sample_counts_everything_and_keeps_the_first(items, splits):
    sample = results.Sample(items[:splits])
    for item in items[splits:]:
        sample.add(item)
    assert len(sample) == len(items) and bool(sample) == bool(items)
    assert list(sample) == items[:results.SAMPLE]
