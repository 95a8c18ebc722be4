"""An update held back to ride in a statement after it (`basics.riding`, issue 32: a moved
date's UPDATE rides in the statement that arms its rungs again). What reads its table reads it
changed; what takes it sends it in its own round trip; whatever else happens it is sent once,
unless the database failed the transaction."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext

from timekeeping.basics import riding
from timekeeping.models import TestClock, Timer
from timekeeping.models.base import update_held
from timekeeping.timers.stored import supersede_and_store

pytestmark = pytest.mark.django_db
T0 = datetime(2027, 4, 12, 16, tzinfo=UTC)
POSTGRESQL = pytest.mark.skipif(connection.vendor != "postgresql",
                                reason="a statement carries it on PostgreSQL")


def _renamed(test_clock, name="renamed"):
    test_clock.name = name
    return update_held(test_clock, ["name"])


def _name(test_clock):
    return TestClock.objects.values_list("name", flat=True).get(pk=test_clock.pk)


def _timer(brand, key, owed):
    return Timer(brand=brand, key=key, kind="delay", place=4, owed=owed, armed_at=T0,
                 owner_id="job_1", owner_opened=T0,
                 payload={"operation": "timekeeping.note", "input": {}})


@POSTGRESQL
def test_it_rides_in_the_statement_that_arms_again_one_round_trip(brand, test_clock):
    update = _renamed(test_clock)
    with CaptureQueriesContext(connection) as sent, riding.held(update):
        ended, written = supersede_and_store(brand.pk, None, "job_1", {"job_1:date": T0},
                                             "moved", [_timer(brand, "job_1:date", T0)])
    assert len(sent) == 1 and '"riding"' in sent.captured_queries[0]["sql"]
    assert _name(test_clock) == "renamed"
    assert (ended, len(written)) == ([], 1)


def test_a_statement_that_names_its_table_reads_it_changed(test_clock):
    update = _renamed(test_clock)
    with CaptureQueriesContext(connection) as sent, riding.held(update):
        assert _name(test_clock) == "renamed"
    assert [query["sql"].split()[0] for query in sent.captured_queries] == ["UPDATE", "SELECT"]


def test_one_nothing_took_is_sent_at_the_end_and_only_once(brand, test_clock):
    update = _renamed(test_clock)
    with CaptureQueriesContext(connection) as sent:
        with riding.held(update):
            list(Timer.objects.filter(brand=brand))  # another table: it stays held
            assert riding.take(connection.alias, TestClock._meta.db_table) is None
        assert _name(test_clock) == "renamed"
    assert [query["sql"].split()[0] for query in sent.captured_queries] == [
        "SELECT", "UPDATE", "SELECT"]


def test_a_failure_not_the_databases_sends_it_first(test_clock):
    with pytest.raises(ValueError, match="the handler's own"), riding.held(_renamed(test_clock)):
        raise ValueError("the handler's own")
    assert _name(test_clock) == "renamed"


def test_the_databases_failure_leaves_it_unsent(test_clock):
    update = _renamed(test_clock)
    with CaptureQueriesContext(connection) as sent:
        with pytest.raises(DatabaseError, match="lost"), riding.held(update):
            raise DatabaseError("the transaction is lost")
    assert len(sent) == 0 and _name(test_clock) == "spring"


def test_a_second_held_sends_the_first_before_it(test_clock, brand):
    first, second = _renamed(test_clock, "first"), None
    with riding.held(first):
        brand.name = "Renamed brand"
        second = update_held(brand, ["name"])
        with CaptureQueriesContext(connection) as sent, riding.held(second):
            pass
    assert [query["sql"].split()[0] for query in sent.captured_queries] == ["UPDATE"] * 2
    assert _name(test_clock) == "first"
    assert type(brand).objects.get(pk=brand.pk).name == "Renamed brand"


@POSTGRESQL
def test_a_row_gone_is_refused_as_a_save_is_and_nothing_of_the_statement_stays(brand,
                                                                             test_clock):
    update = _renamed(test_clock)
    TestClock.objects.filter(pk=test_clock.pk).delete()
    with pytest.raises(DatabaseError, match="did not affect any rows"), transaction.atomic():
        with riding.held(update):
            supersede_and_store(brand.pk, None, "job_1", {"job_1:date": T0}, "moved",
                                [_timer(brand, "job_1:date", T0 + timedelta(days=1))])
    assert not Timer.objects.filter(key="job_1:date").exists()
