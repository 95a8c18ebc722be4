"""An update held back to ride in a statement after it (`basics.riding`, issue 32: a moved
date's UPDATE rides in the statement that arms its rungs again, and a job's for a step it took
with it). What reads its table reads it changed; what takes it sends it in its own round trip,
beside any other held; whatever else happens it is sent once, unless the database failed the
transaction. A firing batch parks updates for its whole length (`riding.parked`)."""

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
            assert riding.take(connection.alias, TestClock._meta.db_table) == []
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


def _brand_renamed(brand, name="Renamed brand"):
    brand.name = name
    return update_held(brand, ["name"])


def _brand_name(brand):
    return type(brand).objects.values_list("name", flat=True).get(pk=brand.pk)


def test_two_held_are_each_sent_at_the_end_of_its_own_block(test_clock, brand):
    with riding.held(_renamed(test_clock, "first")):
        with CaptureQueriesContext(connection) as sent, riding.held(_brand_renamed(brand)):
            pass
        assert _brand_name(brand) == "Renamed brand"  # sent as its block ended
        assert len(sent) == 1
        assert _name(test_clock) == "first"  # a read of its table: sent before it


def test_a_row_held_again_sends_what_was_held_for_it_first(test_clock):
    with CaptureQueriesContext(connection) as sent, riding.held(_renamed(test_clock, "first")):
        with riding.held(_renamed(test_clock, "second")):
            assert len(sent) == 1  # the first, before the second is held
    assert [query["sql"].split()[0] for query in sent.captured_queries] == ["UPDATE"] * 2
    assert _name(test_clock) == "second"


@POSTGRESQL
def test_all_held_ride_in_one_statement_each_in_a_part_of_its_own(brand, test_clock):
    with CaptureQueriesContext(connection) as sent, riding.held(_renamed(test_clock)):
        with riding.held(_brand_renamed(brand)):
            supersede_and_store(brand.pk, None, "job_1", {"job_1:date": T0}, "moved",
                                [_timer(brand, "job_1:date", T0)])
    assert len(sent) == 1
    assert '"riding"' in sent.captured_queries[0]["sql"]
    assert '"riding1"' in sent.captured_queries[0]["sql"]
    assert (_name(test_clock), _brand_name(brand)) == ("renamed", "Renamed brand")


def test_parked_waits_for_the_end_of_its_block_or_a_read_of_its_table(test_clock, brand):
    assert not riding.park(_renamed(test_clock, "not parked"))  # no block open: not held
    assert _name(test_clock) == "spring"
    with CaptureQueriesContext(connection) as sent:
        with riding.parked(connection.alias):
            assert riding.park(_renamed(test_clock, "parked"))
            assert riding.park(_brand_renamed(brand))
            list(Timer.objects.filter(brand=brand))  # another table: both stay held
            assert _name(test_clock) == "parked"  # its table: sent before the read
            assert len(sent) == 3
        assert _brand_name(brand) == "Renamed brand"  # sent as the block ended
    assert [query["sql"].split()[0] for query in sent.captured_queries] == [
        "SELECT", "UPDATE", "SELECT", "UPDATE", "SELECT"]


def test_parked_is_left_unsent_by_the_databases_failure_and_sent_by_any_other(test_clock):
    with pytest.raises(DatabaseError), riding.parked(connection.alias):
        riding.park(_renamed(test_clock, "lost"))
        raise DatabaseError("the transaction is lost")
    assert _name(test_clock) == "spring"
    with pytest.raises(ValueError), riding.parked(connection.alias):
        riding.park(_renamed(test_clock, "kept"))
        raise ValueError("the handler's own")
    assert _name(test_clock) == "kept"


@POSTGRESQL
@pytest.mark.parametrize("riders", [1, 2])
def test_a_row_gone_is_refused_as_a_save_is_and_nothing_of_the_statement_stays(
        brand, test_clock, riders):
    update = _renamed(test_clock)  # the second rider, when two ride, is of a row still there
    TestClock.objects.filter(pk=test_clock.pk).delete()
    with pytest.raises(DatabaseError, match="did not affect any rows"), transaction.atomic(), \
            riding.held(_brand_renamed(brand) if riders == 2 else None):
        with riding.held(update):
            supersede_and_store(brand.pk, None, "job_1", {"job_1:date": T0}, "moved",
                                [_timer(brand, "job_1:date", T0 + timedelta(days=1))])
    assert not Timer.objects.filter(key="job_1:date").exists()


def test_a_savepoint_opened_sends_what_is_held_and_nothing_is_parked_inside_one(test_clock,
                                                                                brand):
    with transaction.atomic(), riding.parked(connection.alias):
        assert riding.park(_renamed(test_clock, "parked"))
        with CaptureQueriesContext(connection) as sent, transaction.atomic():
            assert sent.captured_queries[0]["sql"].startswith("UPDATE")  # before SAVEPOINT
            # Rolled back, a savepoint would not take a parked update with it: saved now.
            assert not riding.park(_brand_renamed(brand))
            transaction.set_rollback(True)
    assert _name(test_clock) == "parked"
