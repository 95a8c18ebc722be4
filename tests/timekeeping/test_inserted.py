"""New rows written in one statement (`timekeeping.basics.inserted`, issue 32): each value as
`bulk_create` would write it, on SQLite and on PostgreSQL; an automatic id set on each row in
the order sent; rows a unique index refuses skipped when asked, and the ids written answered."""

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext

from timekeeping import clocks, manifests
from timekeeping.basics import inserted, wallclock
from timekeeping.models import Delivery, Member, Occurrence, Subject

T0 = datetime(2027, 3, 28, 6, 30, tzinfo=UTC)
MANIFEST = {
    "calendar": {"zone": "Europe/Paris", "weekends": ["sat", "sun"]},
    "services": {"work": {"subject": {"kind": "client"}, "steps": {"file": {}},
                          "clocks": {"file": {"title": "file it", "due": {"input": "due"},
                                              "owner": "brand", "satisfied_by": ["file"]}}}},
}


@pytest.fixture
def opened(brand) -> Occurrence:
    """A date of a job ordered here: the clock the test's rows are dates of."""
    manifests.load(brand, MANIFEST)
    subject = Subject.objects.create(brand=brand, kind="client", key="1", name="Harbor",
                                     zone="Europe/Paris")
    with wallclock.fixed(T0):
        job = clocks.order(brand=brand, service="work", subject=subject, period="2026",
                           by="test", input={"due": "2027-06-30"})
    return Occurrence.objects.get(clock__job=job)


def _dates(like: Occurrence, n: int, seq: int) -> list[Occurrence]:
    paris = ZoneInfo("Europe/Paris")
    return [Occurrence(
        clock_id=like.clock_id, brand_id=like.brand_id, test_clock_id=None, hard=True,
        miss_cost=2**40 + k, miss_currency="EUR", item=f"é{k}", seq=seq + k,
        rule_due=date(2027, 6, 30), due=date(2027, 7, 1), rolled_from=None,
        roll_reasons=["Fête nationale", {"day": "14 July"}], moved_from=date(2027, 6, 1),
        moved_by="a \"notice\"\tof the authority",
        late_from=datetime(2027, 7, 1, 23, 59, 59, 999_999, tzinfo=paris),
        status=Occurrence.Status.OPEN, settled=None, settled_by="") for k in range(n)]


def _values(row: Occurrence) -> dict:
    return {name: value for name, value in model_to_dict(Occurrence.objects.get(pk=row.pk)).items()
            if name not in ("id", "seq", "item")}


def test_rows_are_written_as_bulk_create_writes_them_each_id_set_in_order(opened):
    by_django, by_insert = _dates(opened, 1, 10), _dates(opened, 3, 20)
    Occurrence.objects.bulk_create(by_django)
    with CaptureQueriesContext(connection) as sent:
        assert inserted.insert(by_insert) is None
    assert len(sent) == 1
    assert all(row.pk is not None and not row._state.adding for row in by_insert)
    assert [Occurrence.objects.get(pk=row.pk).seq for row in by_insert] == [20, 21, 22]
    assert _values(by_insert[0]) == _values(by_django[0])
    got = Occurrence.objects.get(pk=by_insert[0].pk)
    assert got.late_from == datetime(2027, 7, 1, 21, 59, 59, 999_999, tzinfo=UTC)
    assert got.roll_reasons == ["Fête nationale", {"day": "14 July"}]
    assert (got.miss_cost, got.item, got.moved_by) == (
        2**40, "é0", "a \"notice\"\tof the authority")
    assert inserted.insert([]) is None


def test_a_value_its_json_field_cannot_write_is_refused_and_nothing_written(opened):
    """`roll_reasons` has no encoder: a date in it is refused, as Django refuses it."""
    rows = _dates(opened, 2, 30)
    rows[1].roll_reasons = [{"day": date(2027, 7, 14)}]
    with pytest.raises(TypeError, match="date"), transaction.atomic():
        inserted.insert(rows)
    assert not Occurrence.objects.filter(seq__gte=30).exists()


def _delivery(brand, key: str) -> Delivery:
    return Delivery(brand=brand, channel=Delivery.Channel.EMAIL, idempotency_key=key,
                    payload={"to": ["a@example.test"], "at": T0, "n": 1}, next_attempt=T0,
                    created=T0 + timedelta(microseconds=7))


def test_rows_a_unique_index_refuses_are_skipped_and_the_written_answered(brand):
    first = _delivery(brand, "once")
    assert inserted.insert([first], skip_taken=True, returning=True) == {first.pk}
    again, other = _delivery(brand, "once"), _delivery(brand, "other")
    assert inserted.insert([again, other], skip_taken=True, returning=True) == {other.pk}
    assert set(Delivery.objects.values_list("pk", flat=True)) == {first.pk, other.pk}
    got = Delivery.objects.get(pk=other.pk)
    assert got.payload == {"to": ["a@example.test"], "at": "2027-03-28T06:30:00Z", "n": 1}
    assert got.created == T0 + timedelta(microseconds=7)


def test_a_naive_instant_is_refused_and_nothing_written(brand):
    naive = _delivery(brand, "naive")
    naive.next_attempt = datetime(2027, 3, 28, 6, 30)  # noqa: DTZ001 - the refused value
    if connection.vendor != "postgresql":
        pytest.skip("SQLite writes through bulk_create, which warns and writes it")
    with pytest.raises(ValueError, match="aware"):
        inserted.insert([naive, _delivery(brand, "fine")])
    assert not Delivery.objects.exists()


def test_a_related_row_saved_after_it_was_assigned_gives_its_id_and_an_unsaved_one_refuses(
        brand):
    """As `bulk_create`: the account a member names, saved after the member was made, is
    the one written; one never saved refuses the write, and nothing is written."""
    later = get_user_model()(username="later")
    member = Member(brand=brand, user=later, role=Member.Role.VIEWER)
    later.save()
    inserted.insert([member])
    assert Member.objects.get(pk=member.pk).user_id == later.pk
    never = Member(brand=brand, user=get_user_model()(username="never"))
    with pytest.raises(ValueError, match="unsaved related object"), transaction.atomic():
        inserted.insert([never])
    assert not Member.objects.filter(pk=never.pk).exists()


def test_more_rows_than_one_statement_carries_are_written_each_id_set_in_order(opened):
    rows = _dates(opened, inserted.ROWS * 2 + 50, 100)
    inserted.insert(rows)
    assert [row.seq for row in rows] == [
        Occurrence.objects.get(pk=row.pk).seq for row in rows]
    assert Occurrence.objects.filter(seq__gte=100).count() == len(rows)
