"""The tick's housekeeping prunes spent one-time form tokens (issue 27) a day after they were
spent: a form is posted again within moments (a double click), not a day later. Times are
Chicago time."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from timekeeping.basics import wallclock
from timekeeping.models import SpentToken
from timekeeping.tick import phases

pytestmark = pytest.mark.django_db
NOW = datetime(2027, 6, 1, 9, tzinfo=ZoneInfo("America/Chicago"))


def test_the_tick_removes_tokens_spent_more_than_a_day_ago():
    SpentToken.objects.bulk_create(
        [SpentToken(token=f"old-{n}", spent=NOW - timedelta(days=1, minutes=n + 1))
         for n in range(3)]
        + [SpentToken(token="recent", spent=NOW - timedelta(hours=23))])
    with wallclock.fixed(NOW):
        result = phases.run_once(now=NOW)
    assert result.housekeeping.deleted == {"spent form tokens": 3}
    assert list(SpentToken.objects.values_list("token", flat=True)) == ["recent"]


def test_a_token_spent_a_minute_before_the_tick_is_kept():
    with wallclock.fixed(NOW):
        SpentToken.objects.create(token="just-now")
        phases.run_once(now=NOW + timedelta(minutes=1))
    assert SpentToken.objects.filter(token="just-now", spent=NOW).exists()
