"""Period arithmetic (calendars.periods): the examples of the design's public API, leap years,
month ends, ISO weeks and fiscal years, and properties over any day."""

from datetime import date, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from calendars.periods import Period, at, cycle_date, offset, period, period_of

D = date


@pytest.mark.parametrize(("kind", "label", "starts", "start", "end"), [
    ("tax_year", "2027", None, D(2027, 1, 1), D(2028, 1, 1)),
    ("year", "2027", None, D(2027, 1, 1), D(2028, 1, 1)),
    ("fiscal_year", "2027", "07-01", D(2026, 7, 1), D(2027, 7, 1)),
    ("fiscal_year", "2027", "01-01", D(2027, 1, 1), D(2028, 1, 1)),
    ("tax_year", "2028", "04-06", D(2027, 4, 6), D(2028, 4, 6)),  # a year from 6 April
    ("quarter", "2027-Q2", None, D(2027, 4, 1), D(2027, 7, 1)),
    ("quarter", "2027-Q1", "07-01", D(2026, 7, 1), D(2026, 10, 1)),
    ("quarter", "2027-Q4", "07-01", D(2027, 4, 1), D(2027, 7, 1)),
    ("month", "2027-02", None, D(2027, 2, 1), D(2027, 3, 1)),
    ("month", "2028-02", None, D(2028, 2, 1), D(2028, 3, 1)),
    ("week", "2027-W05", None, D(2027, 2, 1), D(2027, 2, 8)),
    ("week", "2026-W53", None, D(2026, 12, 28), D(2027, 1, 4)),  # 2026 has 53 ISO weeks
    ("week", "2027-W01", None, D(2027, 1, 4), D(2027, 1, 11)),
])
def test_each_kind_of_period_spans_its_days(kind, label, starts, start, end):
    found = period(kind, label, starts=starts)
    assert (found.start, found.end) == (start, end)
    assert found.last == end - timedelta(days=1)
    assert period_of(start, kind, starts=starts) == found
    assert period_of(found.last, kind, starts=starts) == found


def test_at_an_edge_and_the_seeds_schedule_dates():
    tax_2026 = period("tax_year", "2026")
    assert at(tax_2026, "1mo after end") == D(2027, 2, 1)  # the 2026 return is minted
    assert at(tax_2026, "end") == D(2027, 1, 1) and at(tax_2026, "start") == D(2026, 1, 1)
    assert at(period("quarter", "2027-Q1"), "15d after end") == D(2027, 4, 16)
    assert at(period("month", "2027-03"), "1mo before end") == D(2027, 3, 1)
    assert at(period("month", "2027-01"), "1mo after start") == D(2027, 2, 1)


def test_offsets_clamp_to_the_months_last_day():
    assert offset(D(2027, 1, 31), "+1mo") == D(2027, 2, 28)
    assert offset(D(2028, 1, 31), "+1mo") == D(2028, 2, 29)
    assert offset(D(2028, 2, 29), "+1y") == D(2029, 2, 28)
    assert offset(D(2027, 3, 31), "-1mo") == D(2027, 2, 28)
    assert offset(D(2027, 1, 1), "-10d") == D(2026, 12, 22)
    assert offset(D(2027, 1, 1), "+2w") == D(2027, 1, 15)


def test_a_cycle_anchored_on_the_31st_never_drifts_for_24_months():
    renewals = [cycle_date(D(2027, 1, 31), "1mo", n) for n in range(25)]
    assert renewals[:5] == [D(2027, 1, 31), D(2027, 2, 28), D(2027, 3, 31), D(2027, 4, 30),
                            D(2027, 5, 31)]
    assert renewals[13] == D(2028, 2, 29)  # a leap year
    assert renewals[24] == D(2029, 1, 31)
    assert cycle_date(D(2028, 2, 29), "1y", 4) == D(2032, 2, 29)
    assert cycle_date(D(2028, 2, 29), "1y", 1) == D(2029, 2, 28)


def test_neighbours_follow_on_without_a_gap():
    assert period("quarter", "2027-Q4").next() == period("quarter", "2028-Q1")
    assert period("week", "2027-W01").previous() == period("week", "2026-W53")
    assert period("fiscal_year", "2027", starts="07-01").next().start == D(2027, 7, 1)


@pytest.mark.parametrize(("call", "named"), [
    (lambda: period("season", "2027"), "kind"),
    (lambda: period("quarter", "2027-Q5"), "label"),
    (lambda: period("month", "2027-13"), "label"),
    (lambda: period("week", "2027-W53"), "label"),  # 2027 has 52 ISO weeks
    (lambda: period("year", "0001"), "label"),
    (lambda: period("fiscal_year", "2027"), "starts"),
    (lambda: period("fiscal_year", "2027", starts="02-29"), "starts"),
    (lambda: period("month", "2027-02", starts="07-01"), "starts"),
    (lambda: offset(D(2027, 1, 1), "1mo"), "offset"),
    (lambda: offset(D(2027, 1, 1), "+1q"), "offset"),
    (lambda: at(period("year", "2027"), "1mo past end"), "at"),
    (lambda: cycle_date(D(2027, 1, 31), "0d", 3), "every"),
    (lambda: cycle_date(D(2027, 1, 31), "1mo", -1), "n"),
    (lambda: offset(D(9999, 12, 1), "+1mo"), "offset"),
])
def test_a_bad_argument_is_named_with_its_rule(call, named):
    with pytest.raises(ValueError) as refused:
        call()
    assert str(refused.value).startswith(f"{named}: ")


days = st.dates(min_value=D(3, 1, 1), max_value=D(9997, 12, 31))
kinds = st.sampled_from(["tax_year", "year", "quarter", "month", "week"])
fiscal = st.sampled_from([None, "07-01", "04-06", "10-01", "02-28", "12-31"])


@settings(max_examples=400, deadline=None, derandomize=True)
@given(day=days, kind=kinds, starts=fiscal)
def test_the_period_of_a_day_holds_it_and_its_neighbours_touch_it(day, kind, starts):
    if kind in ("year", "month", "week"):
        starts = None
    found = period_of(day, kind, starts=starts)
    assert isinstance(found, Period) and day in found
    assert found == period(kind, found.label, starts=starts)  # its label names it
    assert found.next().start == found.end and found.previous().end == found.start
    if kind in ("tax_year", "year"):
        assert found.last.year == int(found.label)  # named by the year its last day is in


@settings(max_examples=300, deadline=None, derandomize=True)
@given(anchor=st.dates(min_value=D(1900, 1, 1), max_value=D(2100, 12, 31)),
       n=st.integers(0, 120))
def test_monthly_cycle_dates_keep_the_anchors_day_or_the_months_last(anchor, n):
    renewal = cycle_date(anchor, "1mo", n)
    month_end = (renewal.replace(day=1) + timedelta(days=32)).replace(day=1) - timedelta(days=1)
    assert renewal.day == min(anchor.day, month_end.day)
    assert (renewal.year - anchor.year) * 12 + renewal.month - anchor.month == n
