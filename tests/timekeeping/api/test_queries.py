"""One page shape and one way to filter, for every list (timekeeping/api/queries.py)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.timekeeping.api.pages import every, ids
from timekeeping import clocks
from timekeeping.models import Subject, Timer

LISTS = ["/api/subjects", "/api/jobs", "/api/clocks", "/api/timers", "/api/records",
         "/api/schedules", "/api/test_clocks", "/api/owner/calendar/postponements"]


@pytest.mark.parametrize("path", LISTS)
def test_it_pages_every_list_in_one_order_without_losing_or_repeating_a_row(reading, path):
    whole = reading.get("owner_a", path, limit=200).json()
    paged = every(reading, "owner_a", path, limit=1)
    assert [row["id"] for row in paged] == [row["id"] for row in whole["results"]]
    assert len(paged) == whole["count"] > 0


def test_it_says_where_the_next_and_previous_pages_are(reading):
    first = reading.get("owner_a", "/api/timers", limit=5).json()
    assert first["previous"] is None and first["next"].endswith("/api/timers?limit=5&offset=5")
    second = reading.get("owner_a", "/api/timers", limit=5, offset=5, kind="clock").json()
    assert "kind=clock" in second["next"] and "offset=10" in second["next"]
    assert "kind=clock" in second["previous"] and "offset" not in second["previous"]


def test_it_gives_fifty_rows_by_default_and_at_most_two_hundred(reading):
    before = reading.get("owner_a", "/api/timers", limit=200).json()["count"]
    for n in range(60):
        Timer.objects.create(brand=reading.brand, key=f"extra-{n}", kind="delay", place=4,
                             owed=reading.late.owed, owner_opened=reading.late.owed)
    assert len(reading.get("owner_a", "/api/timers").json()["results"]) == 50
    assert len(reading.get("owner_a", "/api/timers", limit=200).json()["results"]) == \
        before + 60 <= 200
    too_many = reading.get("owner_a", "/api/timers", limit=201)
    assert too_many.status_code == 400 and "1 to 200" in too_many.json()["limit"][0]


@pytest.mark.parametrize("query, named", [
    ({"limit": "0"}, "limit"), ({"limit": "ten"}, "limit"), ({"limit": "-1"}, "limit"),
    ({"limit": "1_0"}, "limit"), ({"offset": "-5"}, "offset"), ({"offset": "9" * 30}, "offset"),
    ({"offset": "x"}, "offset"),
])
def test_it_names_a_page_size_or_offset_out_of_range(reading, query, named):
    answer = reading.get("owner_a", "/api/subjects", **query)
    assert answer.status_code == 400 and list(answer.json()) == [named]


def test_an_offset_past_the_end_is_an_empty_page(reading):
    body = reading.get("owner_a", "/api/subjects", offset=10**17).json()
    assert body["results"] == [] and body["count"] == 2 and body["next"] is None


def test_it_names_an_unknown_filter_and_the_filters_there_are(reading):
    answer = reading.get("owner_a", "/api/subjects", stat="open")
    assert answer.status_code == 400
    assert answer.json() == {"stat": ["'stat' is not a filter here; the filters are: brand, "
                                      "kind, limit, offset, q, test_clock"]}


def test_it_names_every_bad_filter_at_once(reading):
    answer = reading.get("owner_a", "/api/timers", place="9", late="maybe", owed_from="soon")
    assert answer.status_code == 400 and set(answer.json()) == {"place", "late", "owed_from"}


def test_it_refuses_a_filter_given_twice(reading):
    answer = reading.get("owner_a", "/api/jobs", state=["open", "ended"])
    assert answer.status_code == 400 and answer.json() == {"state": ["given more than once"]}


def test_an_empty_filter_is_no_filter(reading):
    assert ids(every(reading, "owner_a", "/api/subjects", kind="")) == ids(
        every(reading, "owner_a", "/api/subjects"))


def _queries(reading, path: str) -> int:
    with CaptureQueriesContext(connection) as asked:
        assert reading.get("key_a", path, limit=200).status_code == 200
    return len(asked)


@pytest.mark.parametrize("path", [*LISTS, "/api/jobs/{job}", "/api/clocks/{clock}"])
def test_a_page_asks_the_database_the_same_number_of_times_whatever_it_holds(reading, path):
    path = path.format(job=reading.job.pk, clock=reading.job.clocks.get(name="file").pk)
    _queries(reading, path)  # the key's first use of the minute also notes when it was used
    few = _queries(reading, path)
    for n in range(5):
        subject = Subject.objects.create(brand=reading.brand, kind="taxpayer", key=f"m{n}",
                                         name=f"More {n}", input={"jurisdictions": ["US"]})
        clocks.order(brand=reading.brand, service="annual-return", subject=subject,
                     period="2027", input={"jurisdictions": ["US", "US-NY"]})
    assert _queries(reading, path) == few
