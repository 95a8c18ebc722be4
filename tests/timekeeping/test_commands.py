import gc
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from timekeeping.basics import wallclock
from timekeeping.models import Record, TestClock, Timer
from timekeeping.tick import collector, test_clocks
from timekeeping.timers import delays


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@delays.operation("tests.arm_two")
def arm_two(*, input, now, brand):
    delays.delay("timekeeping.note", {"soon": True}, brand=brand, at=now, owner=input["on"])
    delays.delay("timekeeping.note", {"later": True}, brand=brand, at=now + timedelta(days=3),
                 owner=input["on"])
    return "armed two"


def test_it_ticks_every_real_clock_and_prints_one_line(brand):
    delays.delay("timekeeping.note", {}, brand=brand, at=datetime(2020, 1, 1, tzinfo=UTC))
    line = run("tick")
    assert line.count("\n") == 1
    assert "1 fired" in line and "outbox 0 sent" in line


def test_a_tick_process_freezes_what_start_up_made_and_collects_its_young_less_often(brand):
    # What start-up made (Django, the product) is out of the collector's way for good, and a
    # batch's objects are not looked at every 700 allocations (issue 32, the no-op tick).
    call_command("tick", stdout=StringIO())
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold()[0] == collector.YOUNG


def test_it_advances_a_test_clock_and_prints_the_trace(brand, test_clock):
    start = test_clock.frozen_time
    delays.delay("tests.arm_two", {"on": "job_4Tx9"}, brand=brand, test_clock=test_clock,
                 at=start + timedelta(hours=2), owner="sbj_7Hq2")
    delays.delay("timekeeping.note", {}, brand=brand, test_clock=test_clock,
                 at=start + timedelta(hours=3), owner="sbj_other")
    out = run("tick", "--test-clock", test_clock.pk, "--to", "2028-03-01T20:00Z", "--trace",
              "--on", "sbj_7Hq2")
    lines = out.splitlines()
    assert lines[0] == (f"{test_clock.pk} · 2028-03-01 12:00Z → 20:00Z · UTC · 2 fired · "
                        "2 armed · 0 held · 2 passes")
    assert lines[1].split() == ["pass", "owed", "fired", "place", "kind", "on", "what"]
    assert lines[2].split()[:8] == ["1", "2028-03-01", "14:00Z", "2028-03-01", "14:00Z", "5",
                                    "delay", "sbj_7Hq2"]
    assert lines[3].split()[:6] == ["armed", "2", "2028-03-01", "14:00Z", "5", "delay"]
    assert lines[4].split()[:3] == ["2", "2028-03-01", "14:00Z"]
    assert "sbj_other" not in out  # --on leaves other owners out
    test_clock.refresh_from_db()
    assert test_clock.frozen_time == datetime(2028, 3, 1, 20, tzinfo=UTC)


def test_it_previews_with_dry_run_and_keeps_nothing(brand, test_clock):
    start = test_clock.frozen_time
    delays.delay("timekeeping.note", {}, brand=brand, test_clock=test_clock,
                 at=start + timedelta(hours=1))
    real = delays.delay("timekeeping.note", {}, brand=brand,
                        at=datetime(2030, 1, 1, tzinfo=UTC))
    out = run("tick", "--test-clock", test_clock.pk, "--to", "2028-03-02T00:00Z", "--dry-run",
              "--trace")
    assert " 1 fired" in out.splitlines()[0]
    preview = run("tick", "--dry-run", "--to", "2030-01-01T00:00Z")
    assert preview.startswith("dry run, nothing kept: ") and "1 fired" in preview
    test_clock.refresh_from_db()
    assert test_clock.frozen_time == start
    assert not Record.objects.exists()
    assert Timer.objects.get(pk=real).state == "armed"
    assert set(Timer.objects.values_list("state", flat=True)) == {"armed"}


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--to", "2030-01-01T00:00Z"], "--to: the real clock cannot be moved"),
        (["--test-clock", "tc_nothere", "--to", "2030-01-01T00:00Z"],
         "--test-clock: no test clock 'tc_nothere'"),
        (["--to", "soon", "--dry-run"], "--to: 'soon' is not an ISO 8601 instant"),
        (["--test-clock", "tc_x"], "--to: say where to advance"),
    ],
)
def test_it_names_the_bad_argument(db, args, words):
    with pytest.raises(CommandError, match=words.replace("'", ".")):
        call_command("tick", *args)


def test_it_refuses_to_advance_backwards(brand, test_clock):
    with pytest.raises(CommandError, match="to: .* only moves forward"):
        call_command("tick", "--test-clock", test_clock.pk, "--to", "2028-01-01T00:00Z")
    assert TestClock.objects.get(pk=test_clock.pk).frozen_time == test_clock.frozen_time


def test_it_says_why_a_timer_has_not_fired(brand, test_clock):
    timer_id = delays.delay("timekeeping.note", {}, brand=brand, test_clock=test_clock,
                            at=test_clock.frozen_time + timedelta(hours=36))
    assert "armed and owed 2028-03-03 00:00:00Z, 1d 12h from now on test clock" in run(
        "timers", "why", timer_id)
    test_clocks.advance(test_clock, to=test_clock.frozen_time + timedelta(days=2))
    assert "fired at 2028-03-03 00:00:00Z" in run("timers", "why", timer_id)
    with pytest.raises(CommandError, match="timer_id: no timer 'tmr_nope'"):
        call_command("timers", "why", "tmr_nope")


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_it_loads_a_demo_whose_delays_fire_within_minutes(settings):
    settings.DEBUG = True  # the demo loads only in development
    loaded_at = datetime(2026, 11, 30, 9, 30, 20, tzinfo=UTC)
    with wallclock.fixed(loaded_at):
        call_command("demo", stdout=StringIO())
    armed = Timer.objects.filter(brand__slug="demo", state="armed")
    assert armed.count() == 10
    latest = max(armed.values_list("owed", flat=True))
    assert latest == datetime(2026, 11, 30, 9, 40, tzinfo=UTC)
    with wallclock.fixed(loaded_at + timedelta(seconds=30)):
        call_command("demo", stdout=StringIO())
    assert Timer.objects.filter(brand__slug="demo").count() == 10
    with wallclock.fixed(latest):
        run("tick")
    assert Record.objects.filter(brand__slug="demo", kind="note").count() == 10


class Terminal(StringIO):
    def isatty(self) -> bool:
        return True


def _walk_of_three(brand, test_clock) -> None:
    for hours in (2, 4, 6):  # 12:00 → 20:00 UTC: at a quarter, half and three quarters
        delays.delay("timekeeping.note", {"h": hours}, brand=brand, test_clock=test_clock,
                     at=test_clock.frozen_time + timedelta(hours=hours))


def test_a_walk_off_a_terminal_says_how_far_it_has_come_in_plain_lines(brand, test_clock,
                                                                       monkeypatch):
    from timekeeping.management.commands import tick as command

    monkeypatch.setattr(command, "PROGRESS_EVERY_S", 0.0)  # a line at each instant walked
    _walk_of_three(brand, test_clock)
    out, err = StringIO(), StringIO()
    call_command("tick", "--test-clock", test_clock.pk, "--to", "2028-03-01T20:00Z",
                 stdout=out, stderr=err)
    lines = err.getvalue().splitlines()
    assert [line.split(" · ")[0] for line in lines[:3]] == [
        "walked to 2028-03-01T14:00:00Z", "walked to 2028-03-01T16:00:00Z",
        "walked to 2028-03-01T18:00:00Z"]
    assert [line.split(" · ")[1] for line in lines[:3]] == ["1 fired", "2 fired", "3 fired"]
    assert [line.rsplit(" ", 1)[1] for line in lines[:3]] == ["(25%)", "(50%)", "(75%)"]
    assert len(lines) == 3
    assert out.getvalue().startswith(f"{test_clock.pk} · 2028-03-01T12:00:00Z → "
                                     "2028-03-01T20:00:00Z · 3 fired")


def test_a_walk_on_a_terminal_draws_one_bar_in_place(brand, test_clock, monkeypatch):
    from timekeeping.management.commands import tick as command

    monkeypatch.setattr(command, "BAR_EVERY_S", 0.0)
    _walk_of_three(brand, test_clock)
    out, err = StringIO(), Terminal()
    call_command("tick", "--test-clock", test_clock.pk, "--to", "2028-03-01T20:00Z",
                 stdout=out, stderr=err)
    bar = err.getvalue()
    assert bar.endswith("\n") and bar.count("\n") == 1
    draws = bar.rstrip("\n").split("\r")[1:]
    assert [draw[:37] for draw in draws] == [
        "[" + "#" * 8 + "-" * 22 + "]  25%", "[" + "#" * 15 + "-" * 15 + "]  50%",
        "[" + "#" * 22 + "-" * 8 + "]  75%", "[" + "#" * 30 + "] 100%"]
    assert draws[-1].endswith("3 fired · done")
    assert out.getvalue().startswith(f"{test_clock.pk} · ")
