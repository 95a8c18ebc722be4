from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from timekeeping.basics import wallclock


def test_it_reads_the_real_clock_in_utc():
    before = datetime.now(UTC)
    read = wallclock.wall_now()
    assert read.tzinfo is UTC
    assert before <= read <= datetime.now(UTC)


def test_it_returns_the_fixed_instant_inside_fixed_in_utc():
    local = datetime(2026, 11, 1, 1, 30, fold=1, tzinfo=ZoneInfo("America/New_York"))
    with wallclock.fixed(local):
        assert wallclock.wall_now() == datetime(2026, 11, 1, 6, 30, tzinfo=UTC)
        assert wallclock.now() == datetime(2026, 11, 1, 6, 30, tzinfo=UTC)
    assert abs(wallclock.wall_now() - datetime.now(UTC)) < timedelta(seconds=5)


def test_it_refuses_to_fix_a_naive_instant():
    with pytest.raises(ValueError, match="aware"):
        with wallclock.fixed(datetime(2026, 1, 1)):  # noqa: DTZ001 - the naive value is the point
            pass


def test_it_reads_a_brand_real_clock_as_the_wall_clock(brand):
    at = datetime(2027, 4, 15, 13, tzinfo=UTC)
    with wallclock.fixed(at):
        assert wallclock.now(brand=brand) == at


def test_it_reads_a_test_clock_as_its_frozen_time_whatever_the_wall_says(brand, test_clock):
    with wallclock.fixed(datetime(2030, 1, 1, tzinfo=UTC)):
        assert wallclock.now(brand=brand, test_clock=test_clock) == datetime(
            2028, 3, 1, 12, tzinfo=UTC)


def test_it_refuses_a_test_clock_of_another_brand(brand, test_clock, db):
    from timekeeping.models import Brand

    other = Brand.objects.create(name="Other", slug="other")
    with pytest.raises(ValueError, match="does not belong"):
        wallclock.now(brand=other, test_clock=test_clock)
