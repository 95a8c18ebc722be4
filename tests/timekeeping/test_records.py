from datetime import UTC, datetime

import pytest

from timekeeping.models import Record
from timekeeping.models.record import AppendOnlyError

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
