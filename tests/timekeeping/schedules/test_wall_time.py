"""Schedules at a wall time in a zone (T8): Mondays 09:00 in London, across the change to
summer time; late, a run happens once and is told the moment it was due; never a backlog."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from timekeeping import manifests
from timekeeping.manifests import check
from timekeeping.models import Schedule, ScheduleRun, TestClock
from timekeeping.schedules import action, engine, operate
from timekeeping.schedules.declare import next_wall, parse_at
from timekeeping.schedules.engine import context
from timekeeping.tick import test_clocks

TOLD: list[datetime] = []


@action("reports.weekly")
def weekly() -> int:
    TOLD.append(context().due)
    return 1


def document(**spec) -> dict:
    return {"calendar": {"zone": "America/New_York"},
            "schedules": {"reports": {"weekly": {"run": "weekly", **spec}}}}


@pytest.fixture
def march(brand):
    TOLD.clear()
    # Thursday 18 March 2027; London moves to summer time on Sunday 28 March.
    return TestClock.objects.create(brand=brand, name="spring",
                                    frozen_time=datetime(2027, 3, 18, 12, tzinfo=UTC))


def test_mondays_at_nine_in_london_follow_the_wall_clock_across_the_change(brand, march):
    manifests.load(brand, document(at="mon 09:00", zone="Europe/London"))
    test_clocks.advance(TestClock.objects.get(pk=march.pk),
                        to=datetime(2027, 4, 6, tzinfo=UTC))
    dues = [run.due for run in ScheduleRun.objects.filter(schedule__test_clock=march)
            .order_by("due")]
    assert dues == [datetime(2027, 3, 22, 9, tzinfo=UTC),   # 09:00 GMT
                    datetime(2027, 3, 29, 8, tzinfo=UTC),   # 09:00 BST
                    datetime(2027, 4, 5, 8, tzinfo=UTC)]
    assert TOLD == dues
    row = Schedule.objects.get(test_clock=march)
    assert row.at == "mon 09:00 Europe/London" and row.every_s == 0
    assert "runs reports.weekly at mon 09:00 Europe/London" in operate.why(row)


def test_a_zone_left_out_is_the_manifest_calendars(brand, march):
    manifests.load(brand, document(at="weekdays 17:30"))
    test_clocks.advance(TestClock.objects.get(pk=march.pk),
                        to=datetime(2027, 3, 20, tzinfo=UTC))
    # Thursday and Friday 17:30 in New York (daylight time already: UTC-4).
    assert [run.due for run in ScheduleRun.objects.filter(schedule__test_clock=march)
            .order_by("due")] == [datetime(2027, 3, 18, 21, 30, tzinfo=UTC),
                                  datetime(2027, 3, 19, 21, 30, tzinfo=UTC)]


def test_late_it_runs_once_at_the_next_tick_and_is_told_when_it_was_due(brand, march):
    manifests.load(brand, document(at="mon 09:00", zone="Europe/London"))
    test_clocks.advance(TestClock.objects.get(pk=march.pk), to=march.frozen_time)  # sees it
    row = Schedule.objects.get(test_clock=march)
    assert row.next_due == datetime(2027, 3, 22, 9, tzinfo=UTC)
    # No tick from Thursday until Wednesday 31 March, 14:00: two Mondays passed.
    late = datetime(2027, 3, 31, 14, tzinfo=UTC)
    claims, skips = engine.claim_due([row], now=late, holder="h",
                                     lease_until=late + timedelta(minutes=5))
    engine.run_inline(claims, tick=late)
    runs = list(ScheduleRun.objects.filter(schedule=row))
    assert [(run.due, run.tick) for run in runs] == [(datetime(2027, 3, 22, 9, tzinfo=UTC), late)]
    assert TOLD == [datetime(2027, 3, 22, 9, tzinfo=UTC)] and skips == []
    row.refresh_from_db()
    assert row.next_due == datetime(2027, 4, 5, 8, tzinfo=UTC)  # the next Monday, in BST


@pytest.mark.parametrize(("spec", "code", "path"), [
    ({"at": "monday 09:00"}, "schedule.at_invalid", "$.schedules.reports.weekly.at"),
    ({"at": "mon 24:00"}, "schedule.at_invalid", "$.schedules.reports.weekly.at"),
    ({"at": "mon,mon 09:00"}, "schedule.at_invalid", "$.schedules.reports.weekly.at"),
    ({"at": "mon 09:00", "zone": "Mars/Olympus"}, "schedule.zone_invalid",
     "$.schedules.reports.weekly.zone"),
    ({"at": "mon 09:00", "zone": "Europe"}, "schedule.zone_invalid",  # a directory
     "$.schedules.reports.weekly.zone"),
    ({"at": "mon 09:00", "every": "1d"}, "schedule.item_invalid",
     "$.schedules.reports.weekly.every"),
    ({"zone": "Europe/London"}, "schedule.at_invalid", "$.schedules.reports.weekly.at"),
])
def test_the_check_names_the_field_and_the_rule(spec, code, path):
    assert (code, path) in {(p.code, p.path) for p in check(document(**spec))}


def test_a_wall_time_daylight_saving_skips_runs_at_the_next_minute_that_exists():
    # 02:30 does not exist in New York on Sunday 14 March 2027: it runs at 03:00 EDT, the
    # next minute that exists.
    at = parse_at("sun 02:30", "America/New_York")
    assert next_wall(at, datetime(2027, 3, 10, tzinfo=UTC)) == datetime(2027, 3, 14, 7,
                                                                         tzinfo=UTC)


@given(st.text(max_size=40), st.sampled_from(["UTC", "Europe/London", "Nope/Nowhere", ""]))
def test_parse_at_answers_a_canonical_form_or_none(text, zone):
    found = parse_at(text, zone)
    assert found is None or parse_at(" ".join(found.split(" ")[:2]), zone) == found


@given(st.integers(min_value=946_684_800, max_value=3_786_825_600).map(  # 2000 to 2090
           lambda seconds: datetime.fromtimestamp(seconds, UTC)),
       st.sampled_from(["daily 00:00", "weekdays 09:00", "sun 02:30", "sat,sun 23:59"]),
       st.sampled_from(["UTC", "Europe/London", "America/New_York", "Australia/Lord_Howe"]))
def test_the_next_wall_time_is_after_and_within_eight_days(after, days_time, zone):
    found = next_wall(parse_at(days_time, zone), after)
    assert after < found and (found - after).days <= 8


def test_a_schedule_in_code_takes_every_or_at_and_refuses_a_bad_one():
    from timekeeping.schedules import declare, schedule

    schedule(at="daily 06:00", zone="Europe/London", name="reports.morning")(weekly)
    try:
        assert [(d.at, d.every_s) for d in declare.code_schedules()
                if d.name == "reports.morning"] == [("daily 06:00 Europe/London", 0)]
    finally:  # a code schedule runs in every deployment: not in the other tests' world
        declare._code_schedules.pop("reports.morning")
    for wrong in ({"at": "mon 25:00"}, {"at": "mon 09:00", "zone": "Nope/None"},
                  {"every": "1d", "at": "mon 09:00"}, {}):
        with pytest.raises(ValueError):
            schedule(**wrong)
