"""Reads compiled once (`timekeeping.basics.compiled`, issue 32): each call reads what the ORM
would read with its values, in one statement, compiling its shape only the first time."""

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import connection, transaction
from django.db.models import Count, F, Q
from django.db.transaction import TransactionManagementError
from django.test.utils import CaptureQueriesContext

from tests.timekeeping.prepared import prepared_statements
from timekeeping.basics import compiled
from timekeeping.models import Brand, Timer
from timekeeping.timers.arming import OWNERS_TIMERS

pytestmark = pytest.mark.django_db

NEW_YORK = ZoneInfo("America/New_York")
# Across the autumn change in New York: 01:30 happens twice that night.
OWED = [datetime(2027, 11, 7, 1, 30, tzinfo=NEW_YORK),
        datetime(2027, 11, 7, 1, 30, fold=1, tzinfo=NEW_YORK),
        datetime(2027, 11, 8, 9, tzinfo=NEW_YORK)]


def _timers(brand, test_clock=None, owner="occ-1"):
    return [Timer.objects.create(
        brand=brand, test_clock=test_clock, key=f"{owner}:rung {n}", kind="delay", place=3,
        owed=owed, owner_id=owner, owner_opened=OWED[0], payload={"n": n})
        for n, owed in enumerate(OWED)]


def _by_owner(brand, owner, test_clock):
    return Timer.objects.filter(brand_id=brand, owner_id=owner, test_clock_id=test_clock
                                ).order_by("owed", "key").values_list("key", "owed", "payload")


def _by_keys(brand, keys):
    return Timer.objects.filter(brand_id=brand, key__in=keys).order_by("key").values_list(
        "key", flat=True)


def test_a_read_gives_what_the_orm_gives_with_each_calls_values(brand, test_clock):
    _timers(brand)
    _timers(brand, owner="occ-2")
    _timers(brand, test_clock)
    read = compiled.Read(_by_owner)
    for owner, clock in [("occ-1", None), ("occ-2", None), ("occ-1", test_clock.pk),
                         ("occ-3", None)]:
        got = read(brand=brand.pk, owner=owner, test_clock=clock)
        assert got == list(_by_owner(brand.pk, owner, clock))
    first = read(brand=brand.pk, owner="occ-1", test_clock=None)
    # Instants come back aware and exact, both 01:30s of the night the clocks go back (in UTC:
    # an instant in the repeated hour never equals one of another zone, PEP 495).
    assert [owed for _, owed, _ in first] == [owed.astimezone(UTC) for owed in OWED]
    assert first[1][1] - first[0][1] == timedelta(hours=1)
    assert first[0][2] == {"n": 0}


def test_it_compiles_each_shape_once_and_sends_one_statement_a_call(brand, test_clock):
    _timers(brand)
    built = []

    def build(brand, owner, test_clock):
        built.append(owner)
        return _by_owner(brand, owner, test_clock)

    read = compiled.Read(build)
    read(brand=brand.pk, owner="occ-1", test_clock=None)
    with CaptureQueriesContext(connection) as sent:
        assert len(read(brand=brand.pk, owner="occ-1", test_clock=None)) == 3
        assert read(brand=brand.pk, owner="occ-9", test_clock=None) == []
    assert len(sent) == 2
    assert all("compiled:" not in query["sql"] for query in sent.captured_queries)
    # A None is another statement (IS NULL against = %s): compiled once more.
    read(brand=brand.pk, owner="occ-1", test_clock=test_clock.pk)
    read(brand=brand.pk, owner="occ-2", test_clock=test_clock.pk)
    assert len(built) == 2


def test_a_list_of_another_length_is_another_shape_and_an_empty_one_reads_nothing(brand):
    _timers(brand)
    read = compiled.Read(_by_keys)
    keys = ["occ-1:rung 0", "occ-1:rung 2", "occ-1:rung 9"]
    assert read(brand=brand.pk, keys=keys) == ["occ-1:rung 0", "occ-1:rung 2"]
    assert read(brand=brand.pk, keys=keys[1:]) == ["occ-1:rung 2"]
    assert read(brand=brand.pk, keys=("occ-1:rung 1",)) == ["occ-1:rung 1"]
    with CaptureQueriesContext(connection) as sent:
        assert read(brand=brand.pk, keys=[]) == []
    assert len(sent) == 0
    assert len(read.shapes) == 3 + 1


def test_past_its_bound_a_read_compiles_each_call_and_reads_the_same(brand, monkeypatch):
    _timers(brand)
    monkeypatch.setattr(compiled, "SHAPES", 2)
    read = compiled.Read(_by_keys)
    for length in range(1, 5):
        keys = [f"occ-1:rung {n}" for n in range(length)]
        assert read(brand=brand.pk, keys=keys) == sorted(keys[:3])
    assert len(read.shapes) == 2


def test_rows_of_a_model_are_its_instances_with_their_annotations(brand):
    made = _timers(brand)
    read = compiled.Read(lambda brand, owner: Timer.objects.filter(
        brand_id=brand, owner_id=owner).annotate(days=Count("id"), later=F("owed")
                                                 ).order_by("owed"), model=Timer)
    rows = read(brand=brand.pk, owner="occ-1")
    assert [row.pk for row in rows] == [timer.pk for timer in made]
    assert [(row.later, row.days) for row in rows] == [(owed.astimezone(UTC), 1)
                                                         for owed in OWED]
    rows[0].state = Timer.State.CANCELLED
    rows[0].save(update_fields=["state"])  # an instance like any other, as read from the database
    assert Timer.objects.get(pk=made[0].pk).state == Timer.State.CANCELLED


def test_rows_of_a_model_alone_are_what_its_queryset_reads(brand):
    # Its own columns alone (a tick's batch): each value converted as Django converts it (the
    # payload's JSON), each row an instance as read from the database.
    _timers(brand)
    read = compiled.Read(lambda brand: Timer.objects.filter(brand_id=brand).order_by("owed"),
                         model=Timer)
    rows = read(brand=brand.pk)
    expected = list(Timer.objects.filter(brand_id=brand.pk).order_by("owed"))

    def values(timer):
        return {name: value for name, value in vars(timer).items() if name != "_state"}

    assert [values(row) for row in rows] == [values(timer) for timer in expected]
    assert [row.payload for row in rows] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert {(row._state.adding, row._state.db) for row in rows} == {(False, "default")}


@pytest.mark.django_db(transaction=True)
def test_a_locking_read_is_refused_outside_a_transaction(brand):
    _timers(brand)
    read = compiled.Read(lambda brand: Timer.objects.select_for_update().filter(
        brand_id=brand), model=Timer)
    with transaction.atomic():
        assert len(read(brand=brand.pk)) == 3
    with pytest.raises(TransactionManagementError):
        read(brand=brand.pk)


@pytest.mark.parametrize("value", [True, date(2027, 1, 1), 1.5, {"a": 1}])
def test_an_argument_it_cannot_stand_in_for_is_refused_by_name(brand, value):
    read = compiled.Read(lambda brand, owner: Timer.objects.filter(
        brand_id=brand, owner_id=owner).values_list("pk"))
    with pytest.raises(TypeError, match="owner must be a text, a whole number, an instant"):
        read(brand=brand.pk, owner=value)
    with pytest.raises(TypeError, match="give brand, owner"):
        read(brand=brand.pk)


def test_an_instant_is_read_as_the_orm_reads_it_across_the_autumn_change(brand, test_clock):
    """An instant passed, in any zone, reads what the ORM reads with it: both 01:30s of the
    night New York's clocks go back, and one a microsecond apart."""
    _timers(brand)
    _timers(brand, test_clock)
    read = compiled.Read(lambda brand, test_clock, owed, until: Timer.objects.filter(
        brand_id=brand, test_clock_id=test_clock).filter(
        Q(owed=owed) | Q(owed__gt=until)).order_by("owed").values_list("key", "owed"))
    tries = [(OWED[0], OWED[1]), (OWED[1], OWED[2]), (OWED[0].astimezone(UTC), OWED[0]),
             (OWED[2] + timedelta(microseconds=1), OWED[0] - timedelta(microseconds=1))]
    for clock in (None, test_clock.pk):
        for owed, until in tries:
            got = read(brand=brand.pk, test_clock=clock, owed=owed, until=until)
            assert got == list(Timer.objects.filter(brand_id=brand.pk, test_clock_id=clock)
                               .filter(Q(owed=owed) | Q(owed__gt=until)).order_by("owed")
                               .values_list("key", "owed"))
    assert [key for key, _ in read(brand=brand.pk, test_clock=None, owed=OWED[1],
                                   until=OWED[2])] == ["occ-1:rung 1"]
    assert len(read.shapes) == 2  # the test clock's None and its id: the instants key nothing


def test_a_naive_instant_is_refused_and_one_a_field_rewrites_is_refused_at_once(brand):
    read = compiled.Read(lambda brand, owed: Timer.objects.filter(
        brand_id=brand, owed=owed).values_list("pk"))
    with pytest.raises(TypeError, match="owed must be an aware instant"):
        read(brand=brand.pk, owed=datetime(2027, 1, 1))  # noqa: DTZ001 - naive on purpose
    as_text = compiled.Read(lambda brand, owner: Timer.objects.filter(
        brand_id=brand, owner_id=owner).values_list("pk"))
    with pytest.raises(ValueError, match="does not carry owner as given"):
        as_text(brand=brand.pk, owner=datetime(2027, 1, 1, tzinfo=UTC))


def test_a_lookup_that_rewrites_its_value_is_refused_at_once(brand):
    read = compiled.Read(lambda brand, prefix: Timer.objects.filter(
        brand_id=brand, key__startswith=prefix).values_list("pk"))
    with pytest.raises(ValueError, match="does not carry prefix as given"):
        read(brand=brand.pk, prefix="occ-1:")


def test_a_query_of_rows_must_say_what_it_reads(brand):
    with pytest.raises(TypeError, match="build a values_list, or give model="):
        compiled.Read(lambda brand: Timer.objects.filter(brand_id=brand))(brand=brand.pk)
    with pytest.raises(TypeError, match="name the related rows it reads"):
        compiled.Read(lambda brand: Timer.objects.filter(brand_id=brand).select_related(
            "brand"), model=Timer)(brand=brand.pk)


def test_rows_of_a_model_carry_the_related_rows_it_names(brand, test_clock):
    _timers(brand, test_clock)
    _timers(brand, owner="occ-2")
    read = compiled.Read(lambda brand: Timer.objects.filter(brand_id=brand).order_by(
        "owner_id", "owed"), model=Timer, related=("brand", "test_clock"))
    rows = read(brand=brand.pk)
    with CaptureQueriesContext(connection) as sent:
        seen = [(row.owner_id, row.brand.name, row.test_clock and row.test_clock.name)
                for row in rows]
    assert len(sent) == 0
    assert seen == [("occ-1", "Northwind Filing", "spring")] * 3 + [
        ("occ-2", "Northwind Filing", None)] * 3
    assert rows[0].test_clock.frozen_time == test_clock.frozen_time


def test_a_related_row_may_be_reached_through_another(brand, test_clock, actors):
    _timers(brand, test_clock)
    _timers(brand, owner="occ-2")
    read = compiled.Read(lambda brand: Timer.objects.filter(brand_id=brand).order_by(
        "owner_id", "owed"), model=Timer, related=("brand", "brand__owner", "test_clock",
                                                   "test_clock__brand"))
    rows = read(brand=brand.pk)
    with CaptureQueriesContext(connection) as sent:
        seen = [(row.brand.owner.username, row.test_clock and row.test_clock.brand.slug)
                for row in rows]
    assert len(sent) == 0
    assert seen == [(actors["owner"].username, "northwind")] * 3 + [
        (actors["owner"].username, None)] * 3
    assert rows[0].brand.owner == actors["owner"]


def test_a_path_names_the_row_it_reaches_through_first(brand):
    with pytest.raises(TypeError, match="name brand before brand__owner"):
        compiled.Read(lambda brand: Timer.objects.filter(brand_id=brand), model=Timer,
                      related=("brand__owner",))(brand=brand.pk)
    with pytest.raises(TypeError, match="key is not a foreign key"):
        compiled.Read(lambda brand: Timer.objects.filter(brand_id=brand), model=Timer,
                      related=("key",))(brand=brand.pk)


def test_get_gives_the_one_row_or_raises_as_the_orm_does(brand):
    made = _timers(brand)
    read = compiled.Read(lambda owner: Timer.objects.filter(owner_id=owner), model=Timer)
    one = compiled.Read(lambda pk: Timer.objects.filter(pk=pk), model=Timer)
    assert one.get(pk=made[1].pk).owed == OWED[1].astimezone(UTC)
    with pytest.raises(Timer.DoesNotExist):
        one.get(pk="tmr_none")
    with pytest.raises(Timer.MultipleObjectsReturned):
        read.get(owner="occ-1")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL prepares")
@pytest.mark.django_db(transaction=True)
def test_a_read_by_id_asked_to_is_prepared_and_nothing_else_is(brand, settings):
    made = _timers(brand)
    connection.close()  # a connection of its own: what earlier tests prepared is gone
    by_id = compiled.Read(lambda pk: Timer.objects.filter(pk=pk).order_by(), model=Timer,
                          related=("brand",), prepared=True)
    by_owner = compiled.Read(lambda owner: Timer.objects.filter(owner_id=owner).values_list(
        "pk", flat=True))
    with CaptureQueriesContext(connection) as sent:
        read = [by_id.get(pk=timer.pk) for timer in made]
        by_owner(owner="occ-1")
        list(Timer.objects.filter(owner_id="occ-1"))
    assert len(sent) == 5  # each counted where Django counts its own, with its values
    assert f"'{made[0].pk}'" in sent.captured_queries[0]["sql"]
    assert [(row.pk, row.owed, row.brand.slug) for row in read] == [
        (timer.pk, timer.owed.astimezone(UTC), "northwind") for timer in made]
    prepared = prepared_statements()
    assert len(prepared) == 1 and '"timekeeping_brand"' in prepared[0]
    settings.PREPARED_STATEMENTS = False
    connection.close()  # a new connection, which nothing has prepared on
    assert by_id.get(pk=made[0].pk).pk == made[0].pk
    assert prepared_statements() == []


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL prepares")
def test_what_django_sends_is_not_counted_for_preparing(brand):
    # psycopg counts each statement toward preparing it only while a prepared read is sent:
    # Django's own, each with its values written in, would be kept (its last 100) otherwise.
    made = _timers(brand)
    by_id = compiled.Read(lambda pk: Timer.objects.filter(pk=pk), model=Timer, prepared=True)
    by_id.get(pk=made[0].pk)
    list(Timer.objects.filter(owner_id="occ-1"))
    assert connection.connection.prepare_threshold is None
    assert not connection.connection._prepared._counts  # noqa: SLF001 - psycopg's own count


def test_reached_names_each_row_a_select_related_path_passes_through():
    assert compiled.reached("job__brand__owner", "job__subject", "holder__user") == (
        "job", "job__brand", "job__brand__owner", "job__subject", "holder", "holder__user")


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL prepares")
def test_an_owners_timers_read_prepared_answer_as_django_once_one_plan_is_kept(
        brand, test_clock, actors):
    # PostgreSQL plans a prepared statement for its values five times, then may keep one plan
    # made without them: the answers after must be each owner's own, on either clock.
    other = Brand.objects.create(name="Harbor Books", slug="harbor", owner=actors["staff"])
    asked = [(brand, None, "occ-1"), (other, None, "occ-1"), (brand, test_clock, "occ-2"),
             (brand, None, "occ-2")]
    for where, clock, owner in asked:
        _timers(where, clock, owner)
    ended = Timer.objects.filter(brand=brand, owner_id="occ-2", test_clock=None).first()
    Timer.objects.filter(pk=ended.pk).update(state=Timer.State.SUPERSEDED)
    keys = ["occ-1:rung 1", "occ-2:rung 0"]
    for _ in range(3):
        for where, clock, owner in asked:
            read = OWNERS_TIMERS(brand=where.pk, test_clock=getattr(clock, "pk", None),
                                 owner=owner, keys=keys)
            expected = Timer.objects.filter(brand=where, test_clock=clock).filter(
                Q(state__in=[Timer.State.ARMED, Timer.State.HELD])
                & (Q(owner_id=owner) | Q(key__in=keys))
                | Q(state=Timer.State.FIRED, key__in=keys)).values_list(
                    "id", "key", "owed", "state")
            assert sorted(read) == sorted(expected) and read
    assert any('"timekeeping_timer"."owner_id" = $' in statement
               for statement in prepared_statements())
