"""The subjects list (issue 27): per subject its next date, its dates at risk and what they put
at stake per currency, its open jobs and who answers for it; sorted, filtered and paged from
the address; live subjects unless a test world is named; a bounded number of queries."""

import html
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.db.models import Q

from tests.words import engine_words, visible_text
from timekeeping import clocks
from timekeeping.basics import shown, wallclock
from timekeeping.console import test_mode
from timekeeping.models import Occurrence, Subject

# 10:00 in New York, eight days before the 2027 return's dates of 18 April 2028.
NOW = datetime(2028, 4, 10, 14, tzinfo=UTC)


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", visible_text(answer.content.decode())))


def _names(answer) -> list[str]:
    """The subjects' names, in the order the list shows them."""
    return re.findall(r'data-label="Name"><a href="[^"]+">([^<]+)</a>', answer.content.decode())


def _subject(desk, name: str, *, order: bool = True) -> Subject:
    made = Subject.objects.create(brand=desk.brand, kind="taxpayer", key=name.lower(),
                                  name=name, zone="America/New_York")
    if order:
        clocks.order(brand=desk.brand, service="annual-return", subject=made, period="2027",
                     input={"jurisdictions": ["US", "US-NJ"]})
    return made


@pytest.fixture
def listed(desk):
    """Three live subjects at NOW: Alder's 2027 return (its dates near, one assigned to the
    manager), Birch's priced in euros, Cedar with no job."""
    with wallclock.fixed(NOW):
        alder, birch, cedar = (_subject(desk, "Alder"), _subject(desk, "Birch"),
                               _subject(desk, "Cedar", order=False))
    first = Occurrence.objects.filter(clock__subject=alder).order_by("late_from", "pk").first()
    first.assignee = desk.manager
    first.save(update_fields=["assignee"])
    Occurrence.objects.filter(clock__subject=birch).update(miss_currency="EUR")
    for client in desk.clients.values():  # live: the desk's people start in test mode
        session = client.session
        session.pop(test_mode.SESSION_KEY + desk.brand.pk, None)
        session.save()
    return {"alder": alder, "birch": birch, "cedar": cedar}


def _get(desk, who="owner", **query):
    with wallclock.fixed(NOW):
        return desk.clients[who].get(desk.url("subjects/"), query)


def test_each_row_says_the_next_date_what_is_at_stake_the_jobs_and_who_answers(desk, listed):
    answer = _get(desk)
    text, body = _text(answer), answer.content.decode()
    near = Occurrence.objects.filter(Q(hard=True) | Q(late_from__lte=NOW + timedelta(days=14)),
                                     clock__subject=listed["alder"])
    total = sum(near.values_list("miss_cost", flat=True))
    at_risk = near.count()
    assert "Alder taxpayer file the 2027 return, US in 8 days" in text
    assert re.search(rf"{at_risk} dates \$[\d,]+ a month at stake", text)
    assert f"${total // 100:,} a month at stake" in text
    assert "€" in text and "annual return 2027" in text
    first = near.order_by("late_from").first()
    assert f'title="{shown.moment(first.late_from, "America/New_York")}">in 8 days' in body
    cedar = text[text.index("Cedar"):]
    assert cedar.startswith("Cedar taxpayer none ahead none none Northwind Filing")
    assert "Times are New York time." in text
    assert desk.manager.name in text
    assert engine_words(text) == []


def test_totals_are_per_currency_never_added_across(desk, listed):
    text = _text(_get(desk, q="birch"))
    assert "€" in text and "$" not in text.split("Birch", 1)[1]


def test_it_lists_live_subjects_unless_a_test_world_is_named(desk, listed):
    assert "Harbor Books" not in _names(_get(desk))
    answer = _get(desk, test=desk.test_clock.pk)
    assert _names(answer) == ["Harbor Books"]
    assert "test world spring" in _text(answer)
    assert f'href="{desk.url("subjects/")}?test=off">Show live subjects' in \
        answer.content.decode()  # the way back leaves test mode
    # A test world that is not the brand's (gone, or another brand's) shows the live list.
    for unknown in ("tc_nosuchclock", desk.other.pk):
        answer = _get(desk, test=unknown)
        assert answer.status_code == 200 and _names(answer) == ["Alder", "Birch", "Cedar"]
        assert "Test mode:" not in _text(answer)


def test_it_sorts_by_name_next_date_and_what_is_at_stake(desk, listed):
    assert _names(_get(desk)) == ["Alder", "Birch", "Cedar"]
    assert _names(_get(desk, sort="next"))[-1] == "Cedar"  # nothing ahead: last
    Occurrence.objects.filter(clock__subject=listed["birch"]).update(miss_cost=10 ** 9)
    assert _names(_get(desk, sort="risk")) == ["Birch", "Alder", "Cedar"]
    assert _names(_get(desk, sort="bogus")) == ["Alder", "Birch", "Cedar"]


def test_the_sort_by_what_is_at_stake_never_compares_two_currencies(desk, listed):
    # Birch's euros are one cent a date, Alder's dollars hundreds: each currency stands in its
    # own group (EUR before USD, by code), never ranked against the other's amounts.
    Occurrence.objects.filter(clock__subject=listed["birch"]).update(miss_cost=1)
    assert _names(_get(desk, sort="risk")) == ["Birch", "Alder", "Cedar"]
    text = _text(_get(desk, q="birch"))
    assert re.search(r"€0\.0\d a month at stake", text)


def test_it_filters_by_status_owner_and_kind(desk, listed):
    assert _names(_get(desk, status="risk")) == ["Alder", "Birch"]
    assert _names(_get(desk, status="late")) == []
    assert "No subject matches" in _text(_get(desk, status="missed"))
    assert _names(_get(desk, owner=desk.manager.pk)) == ["Alder"]
    assert _names(_get(desk, owner="nobody")) == ["Birch", "Cedar"]
    assert _names(_get(desk, kind="venue")) == []
    with wallclock.fixed(NOW):
        Occurrence.objects.filter(clock__subject=listed["alder"]).update(
            status=Occurrence.Status.LAPSED)
    assert _names(_get(desk, status="missed")) == ["Alder"]


def test_it_pages_by_50_and_keeps_the_filters_in_the_address(desk, listed):
    Subject.objects.bulk_create([Subject(brand=desk.brand, kind="venue", key=f"v{n:03d}",
                                         name=f"Venue {n:03d}") for n in range(60)])
    first = _get(desk, kind="venue")
    assert "Page 1 of 2 (60 in all)" in _text(first)
    assert 'href="?kind=venue&amp;page=2"' in first.content.decode()
    assert _names(_get(desk, kind="venue", page=2))[0] == "Venue 050"


def test_an_empty_list_says_how_subjects_come(desk):
    text = _text(_get(desk, test="off"))  # live: the desk's one subject is in its test world
    assert "No subjects yet." in text and "API key" in text


def test_the_page_costs_the_same_queries_for_3_or_33_subjects(desk, listed,
                                                              django_assert_max_num_queries):
    with wallclock.fixed(NOW):
        for n in range(30):
            made = _subject(desk, f"Extra {n:02d}")
            if n % 3 == 0:
                Occurrence.objects.filter(clock__subject=made).update(assignee=desk.manager)
    with django_assert_max_num_queries(14):
        answer = _get(desk, sort="risk")
    assert len(_names(answer)) == 33
