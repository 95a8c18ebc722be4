"""Timers written in one statement that says which it wrote (`timekeeping.timers.stored`,
issue 32): a live key already held is skipped, on SQLite and on PostgreSQL, one timer or many."""

from datetime import UTC, datetime, timedelta

from timekeeping.models import Timer
from timekeeping.timers import delays
from timekeeping.timers.stored import store

T0 = datetime(2027, 3, 28, 6, 30, tzinfo=UTC)


def _timer(brand, key: str, owed: datetime) -> Timer:
    return Timer(brand=brand, key=key, kind="delay", place=4, owed=owed, armed_at=T0,
                 owner_opened=T0, payload={"operation": "timekeeping.note", "input": {}})


def test_it_writes_the_timers_whose_keys_are_free_and_answers_their_ids(brand):
    held = delays.delay("timekeeping.note", {"n": 1}, brand=brand, at=T0, key="taken")
    many = [_timer(brand, key, T0 + timedelta(hours=n))
            for n, key in enumerate(["free:1", "taken", "free:2"])]
    assert store(many) == {many[0].pk, many[2].pk}
    assert set(Timer.objects.filter(brand=brand).values_list("key", "pk")) == {
        ("taken", held), ("free:1", many[0].pk), ("free:2", many[2].pk)}
    assert Timer.objects.get(pk=many[2].pk).owed == T0 + timedelta(hours=2)


def test_one_timer_is_written_or_answered_none(brand):
    delays.delay("timekeeping.note", {"n": 1}, brand=brand, at=T0, key="taken")
    free, taken = _timer(brand, "free", T0), _timer(brand, "taken", T0)
    assert store([free]) == {free.pk}
    assert store([taken]) == set()
    assert store([]) == set()
    assert not Timer.objects.filter(pk=taken.pk).exists()


def test_a_key_whose_timer_was_superseded_is_free_again(brand):
    gone = delays.delay("timekeeping.note", {"n": 1}, brand=brand, at=T0, key="moved")
    Timer.objects.filter(pk=gone).update(state=Timer.State.SUPERSEDED)
    again, other = _timer(brand, "moved", T0 + timedelta(days=1)), _timer(brand, "other", T0)
    assert store([again, other]) == {again.pk, other.pk}
    assert Timer.objects.filter(key="moved").count() == 2
