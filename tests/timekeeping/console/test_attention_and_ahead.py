"""What needs attention (failures first, recent, bounded) and what falls due in the next days
(per day in the brand's zone, by kind)."""

from datetime import UTC, date, datetime, timedelta

from timekeeping.attention import lists
from timekeeping.console import ahead
from timekeeping.console.chart import chart
from timekeeping.models import (
    Connection,
    Delivery,
    Fault,
    Schedule,
    ScheduleRun,
    SetAside,
    TickRun,
    Timer,
)

from .conftest import START

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def _timer(brand, key: str, **fields) -> Timer:
    fields.setdefault("owed", NOW - timedelta(hours=2))
    return Timer.objects.create(brand=brand, key=key, kind=fields.pop("kind", "delay"), place=4,
                                owner_type="job", owner_id="job_Somewhere",
                                owner_opened=NOW - timedelta(days=30), **fields)


def _troubles(brand) -> None:
    Fault.objects.create(brand=brand, phase=Fault.Phase.TIMERS, where=brand.pk,
                         error="ValueError: the handler broke", count=3,
                         first_seen=NOW - timedelta(hours=5), last_seen=NOW - timedelta(hours=1))
    _timer(brand, "failing", attempts=2, last_error="Traceback …\nKeyError: 'rung'")
    TickRun.objects.create(brand=brand, instant=NOW - timedelta(hours=3), runaway=True,
                           started=NOW - timedelta(hours=3), passes=33, fired=640)
    nightly = Schedule.objects.create(key=f"{brand.pk}:-:nightly", name="nightly", brand=brand,
                                      action="timekeeping.schedules.pulses.nothing", every_s=86400)
    for days, outcome in ((1, "failed"), (2, "skipped"), (8, "failed"), (1, "succeeded")):
        ScheduleRun.objects.create(schedule=nightly, due=NOW - timedelta(days=days),
                                   tick=NOW - timedelta(days=days), outcome=outcome,
                                   reason=f"{outcome} {days}d ago")
    for key, state, age in (("gone", "failed", 30), ("stuck", "pending", 120),
                            ("fresh", "pending", 10)):
        Delivery.objects.create(brand=brand, channel="email", idempotency_key=f"{brand.pk}:{key}",
                                state=state,
                                payload={"subject": f"mail {key}"}, attempts=10,
                                next_attempt=NOW, created=NOW - timedelta(minutes=age),
                                last_error="SMTPServerDisconnected: no")
    for key, late, days in (("late", 10, 1), ("barely", 2, 1), ("long-ago", 30, 8)):
        _timer(brand, key, state=Timer.State.FIRED, fired=NOW - timedelta(days=days),
               late_by=timedelta(minutes=late))
    link = Connection.objects.create(brand=brand)
    for row, until in ((7, NOW + timedelta(minutes=30)), (8, NOW - timedelta(minutes=1))):
        SetAside.objects.create(brand_id=link.brand_id, connection=link,
                                table="orders", row=row, rule=1,
                                code="STATE_MOVE_REFUSED", until=until,
                                created=until - timedelta(hours=1))


def test_it_lists_what_failed_first_then_what_is_slow_recent_only_and_of_the_brand(desk):
    _troubles(desk.brand)
    _troubles(desk.other)
    found = lists.attention(desk.brand, now=NOW)
    kinds = [(item.kind, item.failure) for item in found.items]
    assert kinds == [("undelivered", True), ("fault", True), ("failed timer", True),
                     ("runaway", True), ("failed run", True), ("set aside", False),
                     ("undelivered", False), ("late", False), ("skipped run", False)]
    said = " | ".join(item.text for item in found.items)
    details = " | ".join(item.details for item in found.items)
    # The owner's words on the page; the engine's (ids, codes, errors) under Details.
    assert "failed 3 times and has not worked since" in said
    assert "ValueError: the handler broke" in details and "ValueError" not in said
    assert "A scheduled task failed 2 times in a row; it is tried again later" in said
    assert "KeyError: 'rung'" in details
    assert "A scheduled task ran 10m late" in said and "fired 10m late" in details
    assert "barely" not in details and "long-ago" not in details
    assert "Couldn't move row 7 of orders: a rule of the table holds it back. Change the row " \
        "or the rule, or move it by hand; it is tried again after the hour" in said
    assert "orders:8" not in details and "STATE_MOVE_REFUSED" in details
    assert "STATE_MOVE_REFUSED" not in said and "tmr_" not in said
    assert "mail stuck" in said and "mail fresh" not in said
    assert "skipped 2d ago" in details and "8d ago" not in details
    assert found.failures == 5 and found.more == []


def test_each_source_shows_a_bounded_few_and_says_there_are_more(desk):
    for n in range(lists.SHOWN + 2):
        _timer(desk.brand, f"failing-{n}", attempts=1, last_error="boom")
    found = lists.attention(desk.brand, now=NOW)
    assert len(found.items) == lists.SHOWN and found.more == ["failed timers"]


def test_the_next_days_count_dates_and_timers_per_day_in_the_brands_zone(desk):
    # 03:30Z on the 12th is still the 11th in New York: it counts there.
    _timer(desk.brand, "evening", test_clock=desk.test_clock,
           owed=datetime(2028, 4, 12, 3, 30, tzinfo=UTC))
    found = ahead.ahead(desk.brand, now=NOW, test_clock=desk.test_clock)
    days = {day.day: day for day in found.days}
    assert found.now == START and found.zone == "America/New_York"
    assert (found.days[0].day, found.days[-1].day) == (date(2028, 4, 10), date(2028, 5, 9))
    assert days[date(2028, 4, 18)].counts == {"hard date": 1, "date": 1}
    assert [d.clock.title for d in days[date(2028, 4, 18)].dates] == [
        "file the 2027 return", "pay the 2027 tax"]
    assert days[date(2028, 4, 11)].counts == {"delay": 1}
    assert days[date(2028, 4, 15)].counts["rung"] >= 2
    assert found.kinds == ["hard date", "date", "rung", "deadline", "delay"]
    assert all("clock" not in day.counts for day in found.days)  # a date is counted once


def test_the_real_clock_has_its_own_next_days(desk):
    found = ahead.ahead(desk.brand, now=NOW)
    assert found.total == 0 and found.days[0].day == date(2026, 12, 1)


def test_the_chart_stacks_each_days_kinds_with_titles_and_a_description(desk):
    drawn = chart(ahead.ahead(desk.brand, now=NOW, test_clock=desk.test_clock))
    titles = [bar.title for bar in drawn.bars]
    assert "Tue 18 Apr: 1 fixed date" in titles and "Tue 18 Apr: 1 date" in titles
    assert drawn.title == "What falls due per day, 10 Apr to 9 May (New York time)"
    assert [label.text for label, _ in drawn.legend][:3] == ["fixed dates", "dates", "reminders"]
    assert "the busiest day is" in drawn.description
    assert all(0 <= bar.y <= drawn.baseline for bar in drawn.bars)


def test_the_chart_names_its_axes_and_ticks_and_has_the_same_counts_as_a_table(desk):
    coming = ahead.ahead(desk.brand, now=NOW, test_clock=desk.test_clock)
    drawn = chart(coming)
    assert [label.text for label in drawn.axes] == ["Count", "Day"]
    tallest = max(day.total for day in coming.days)
    assert [label.text for _, label in drawn.ticks][0] == "0"
    assert [label.text for _, label in drawn.ticks][-1] == str(tallest)
    assert drawn.ticks[0][0] == drawn.baseline and drawn.ticks[-1][0] == drawn.top
    assert drawn.columns[:3] == ["Fixed dates", "Dates", "Reminders"]
    assert len(drawn.rows) == len(coming.days) == 30
    eighteenth = next(row for row in drawn.rows if row.day == "Tue 18 Apr")
    assert eighteenth.counts[:2] == [1, 1] and eighteenth.total == sum(eighteenth.counts)


def test_the_home_shows_the_chart_with_a_table_to_read_instead(desk):
    html = desk.clients["owner"].get(
        desk.url(), {"world": desk.test_clock.pk}).content.decode()
    assert 'role="img" aria-labelledby="chart-title chart-desc"' in html
    assert "<summary>Show as a table</summary>" in html
    assert '<th scope="row">Tue 18 Apr</th>' in html
