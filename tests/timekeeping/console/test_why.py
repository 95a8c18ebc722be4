"""The Why box: a timer, a schedule, a clock's dates or a table row, answered in sentences, in
the words of `timers why` and `schedules why`; another brand's id answers as a missing one."""

import html
import re
from datetime import UTC, datetime, timedelta

import pytest

from timekeeping.basics import wallclock
from timekeeping.console import why
from timekeeping.models import Schedule, SetAside, Timer
from timekeeping.schedules import operate
from timekeeping.timers import arming

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def _schedule(brand, name: str, test_clock=None) -> Schedule:
    scope = f"{brand.pk}:{test_clock.pk if test_clock else '-'}"
    return Schedule.objects.create(key=f"{scope}:{name}", name=name, brand=brand,
                                   test_clock=test_clock,
                                   action="timekeeping.schedules.pulses.nothing",
                                   every_s=3600, next_due=NOW + timedelta(minutes=20))


def test_a_timer_is_explained_as_timers_why_explains_it(desk):
    timer = Timer.objects.filter(brand=desk.brand, payload__rung="notice 14d").select_related(
        "brand", "test_clock").get()
    said = why.why(desk.brand, f"  {timer.pk} ")
    assert said[0] == arming.explain(timer)
    assert said[1] == f"It belongs to occurrence {timer.owner_id}."


def test_a_schedule_by_id_or_name_in_the_words_of_schedules_why(desk):
    real = _schedule(desk.brand, "nightly")
    _schedule(desk.brand, "nightly", desk.test_clock)
    _schedule(desk.other, "nightly")
    with wallclock.fixed(NOW):
        by_id = why.why(desk.brand, real.pk)
        by_name = why.why(desk.brand, "nightly")
    assert by_id == [operate.why(real, now=NOW)]
    assert "in 20m" in by_id[0]
    assert len(by_name) == 2 and by_name[0] == by_id[0]
    assert by_name[1].startswith(f"On test clock {desk.test_clock.pk}: nightly runs")


def test_a_clocks_dates_with_their_timers(desk):
    row = desk.job.clocks.get(name="file")
    said = why.why(desk.brand, f"{row.pk} US")
    assert said[0] == (f"{row.pk} is 'file the 2027 return' of job {desk.job.pk}, subject "
                       f"{desk.subject.pk} on test clock {desk.test_clock.pk}.")
    assert said[1] == (f"{row.pk}#US is open, due 2028-04-18 (rolled from 2028-04-15: "
                       "2028-04-15 Saturday; 2028-04-16 Sunday, Emancipation Day; 2028-04-17 "
                       "Emancipation Day (observed)); late from Wed 19 Apr 2028, 00:00 "
                       "EDT (in 8 days).")
    assert any(line.startswith("· notice 30d: ") and "fired at 2028-03-19" in line
               for line in said)
    assert any(line.startswith("· its date: ") and "is armed and owed" in line for line in said)
    assert len([line for line in why.why(desk.brand, row.pk) if "#US-NJ is open" in line]) == 1
    assert why.why(desk.brand, f"{row.pk}#US-TX") == [f"No such date {row.pk}#US-TX in this "
                                                       "brand."]


def test_another_brands_things_answer_as_missing_ones(desk):
    theirs = Timer.objects.filter(brand=desk.other).first() or Timer.objects.create(
        brand=desk.other, key="k", kind="delay", place=4, owed=NOW, owner_opened=NOW)
    mine_missing = why.why(desk.brand, "tmr_Missing00000000")
    assert why.why(desk.brand, theirs.pk) == [f"No such timer {theirs.pk} in this brand."]
    assert mine_missing == ["No such timer tmr_Missing00000000 in this brand."]
    other_schedule = _schedule(desk.other, "weekly")
    assert why.why(desk.brand, other_schedule.pk) == [
        f"No such schedule {other_schedule.pk} in this brand."]
    assert why.why(desk.brand, "weekly") == ["No such schedule named 'weekly' in this brand."]
    assert why.why(desk.brand, "orders:1") == ["No such table row orders:1 in this brand."]
    assert why.why(desk.brand, "what?") == [why.HELP]


def test_the_why_page_answers_in_sentences_and_keeps_the_question(desk):
    row = desk.job.clocks.get(name="pay")
    page = desk.clients["viewer"].get(desk.url("why"), {"q": row.pk})
    text = html.unescape(re.sub(r"<[^>]+>", " ", page.content.decode()))
    assert page.status_code == 200 and f"{row.pk} is open, due 2028-04-18" in text
    assert f'value="{row.pk}"' in page.content.decode()
    assert "tmr_" in desk.clients["viewer"].get(desk.url("why")).content.decode()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_a_table_row_says_its_state_its_timed_move_and_whether_it_is_set_aside(world):
    order = world.orders[0]
    with wallclock.fixed(NOW):
        said = why.why(world.brand, f"orders:{order}")
    assert said[0] == f"orders:{order} is placed."
    assert "timed move 1 (placed → cancelled, at its pickup_at)" in said[1]
    link = world.brand.connection
    SetAside.objects.create(brand_id=link.brand_id, connection=link,
                            table="orders", row=order, rule=1,
                            code="STATE_MOVE_REFUSED", until=NOW + timedelta(minutes=40))
    with wallclock.fixed(NOW):
        said = why.why(world.brand, f"orders:{order}")
    assert said[-1] == ("It is set aside until Tue 1 Dec 2026, 07:40 EST (in 40 "
                        "minutes): timed move 1 was refused (STATE_MOVE_REFUSED); the job tries "
                        "it again then.")
    assert why.why(world.brand, "orders:999999") == ["No such table row orders:999999 in this "
                                                      "brand."]
    assert why.why(world.other, f"orders:{order}") != said  # B's own table, not A's row
