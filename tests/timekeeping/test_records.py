import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from timekeeping.models import Record
from timekeeping.models.record import AppendOnlyError
from timekeeping.timers import records

AT = datetime(2028, 4, 18, 4, tzinfo=UTC)


@pytest.fixture
def record(brand):
    return Record.objects.create(
        kind="note", instant=AT, brand=brand, subject="sbj_7Hq2", data={"at": AT}
    )


def test_it_keeps_a_record_with_its_references_and_data(record):
    stored = Record.objects.get(pk=record.pk)
    assert stored.id.startswith("rec_")
    assert stored.subject == "sbj_7Hq2"
    assert stored.data == {"at": "2028-04-18T04:00:00Z"}


def test_it_refuses_to_change_a_saved_record(record):
    record.kind = "edited"
    with pytest.raises(AppendOnlyError):
        record.save()
    assert Record.objects.get(pk=record.pk).kind == "note"


def test_it_refuses_updates_and_deletes_through_querysets(record):
    with pytest.raises(AppendOnlyError):
        Record.objects.filter(pk=record.pk).update(kind="edited")
    with pytest.raises(AppendOnlyError):
        Record.objects.filter(pk=record.pk).delete()
    with pytest.raises(AppendOnlyError):
        record.delete()
    assert Record.objects.filter(pk=record.pk, kind="note").exists()


def test_it_removes_records_only_with_their_whole_brand(record, brand):
    brand.delete()
    assert not Record.objects.exists()


ORDER = ("kind", "key", "place", "owed", "late_by_s", "owner", "pass", "run", "seq", "what")
TEXTS = st.text(alphabet=st.characters(exclude_categories=[]) | st.sampled_from('\ud800"\\\n'))
FIRED = st.fixed_dictionaries({
    "kind": TEXTS, "key": TEXTS, "place": st.integers(), "owed": TEXTS,
    "late_by_s": st.floats(allow_nan=False, allow_infinity=False), "owner": TEXTS,
    "pass": st.integers(), "run": TEXTS, "seq": st.integers(), "what": TEXTS}
).map(lambda data: {key: data[key] for key in ORDER})  # as the firing makes it
ODD = st.none() | st.booleans() | st.floats() | st.integers() | TEXTS | st.lists(st.integers())


@given(FIRED)
def test_a_fired_timers_record_is_written_as_the_encoder_writes_it(data):
    assert records.encode_fired(data) == records.encode(data)
    assert json.loads(records.encode_fired(data)) == data


@given(FIRED, st.sampled_from(["place", "late_by_s", "what", "run", "extra", "owed"]), ODD)
def test_a_record_of_another_shape_goes_through_the_encoder(data, name, value):
    odd = {**data, name: value}
    assert records.encode_fired(odd) == records.encode(odd)
    del odd["kind"]
    assert records.encode_fired(odd) == records.encode(odd)


@pytest.mark.parametrize("late_by_s", [float("nan"), float("inf"), -float("inf")])
def test_a_number_that_is_no_finite_one_is_written_as_the_encoder_writes_it(late_by_s):
    data = dict.fromkeys(ORDER, "")
    data.update({"place": 5, "pass": 1, "run": "tick_7", "seq": 3, "late_by_s": late_by_s})
    assert records.encode_fired(data) == records.encode(data)
    assert ("NaN" if late_by_s != late_by_s else "Infinity") in records.encode_fired(data)


def test_a_tick_writes_its_fired_timers_records_by_the_format_string(brand, monkeypatch):
    # The record every fired timer writes, as a real tick makes it (its run's id a text), is
    # written by `encode_fired` itself: the encoder is not asked. A record of the run's id
    # taken for a number went through the encoder on every fired timer (issue 32).
    from timekeeping.tick import phases
    from timekeeping.timers import delays

    delays.delay("timekeeping.note", {"n": 1}, brand=brand, at=AT, key="a")
    asked = []
    general = records.encode
    monkeypatch.setattr(records, "encode", lambda data: asked.append(data) or general(data))
    phases.run_once(now=AT, sweep=False)
    fired = Record.objects.get(brand=brand, kind="timer.fired")
    assert fired.data["key"] == "a" and fired.data["run"].startswith("tick_")
    assert [data.get("key") for data in asked if data.get("run")] == []
