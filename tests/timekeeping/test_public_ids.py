import os
import threading
import time
from collections import Counter

import pytest
from django.core.exceptions import ValidationError

from timekeeping.basics import public_ids
from timekeeping.basics.public_ids import BASE62, RANDOM_LENGTH, new_id
from timekeeping.models import Brand, TestClock


def test_it_makes_ids_of_prefix_and_random_base62():
    made = {new_id("tmr") for _ in range(2000)}
    assert len(made) == 2000
    for value in made:
        prefix, rest = value.split("_")
        assert prefix == "tmr"
        assert len(rest) == RANDOM_LENGTH
        assert rest.isalnum() and rest.isascii()


def test_each_digit_is_as_likely_as_any_other():
    seen = Counter("".join(new_id("tmr")[4:] for _ in range(20_000)))
    assert set(seen) == set(BASE62)
    expected = 20_000 * RANDOM_LENGTH / 62
    # Pearson's chi-squared over 61 degrees of freedom: above 120 about once in 10**6 runs
    # of uniform digits; a digit twice as likely as the others gives thousands.
    assert sum((n - expected) ** 2 / expected for n in seen.values()) < 120


def test_bytes_it_passes_by_are_drawn_again(monkeypatch):
    public_ids._forget()  # no digits drawn before
    drawn = iter([bytes([255] * 20 + [0, 1, 2, 63]), bytes(range(61, 85))])
    monkeypatch.setattr(public_ids.os, "urandom", lambda n: next(drawn))
    # 0, 1, 2 and 63 (63 % 62 = 1) name 0, 1, 2, 1; then 61 and 62… (61, 0, 1, …) the rest.
    assert new_id("tmr") == "tmr_0121z0123456789A"


def test_threads_never_take_the_same_digits(monkeypatch):
    drawn = public_ids._drawn

    def slow_draw():  # another thread runs while one draws, as a slow random source lets it
        time.sleep(0)
        return drawn()[:64]  # a draw every few ids

    monkeypatch.setattr(public_ids, "_drawn", slow_draw)
    made: list[list[str]] = [[] for _ in range(8)]

    def make(into):
        into.extend(new_id("rec") for _ in range(2000))

    threads = [threading.Thread(target=make, args=(into,)) for into in made]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len({value for into in made for value in into}) == 8 * 2000


def test_a_forked_process_hands_out_none_of_its_parents_digits():
    new_id("rec")  # the parent holds digits drawn ahead
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's, reported through the pipe
        try:
            os.write(writing, new_id("rec").encode())
        finally:
            os._exit(0)
    os.close(writing)
    os.waitpid(child, 0)
    with os.fdopen(reading) as pipe:
        childs = pipe.read()
    parents = [new_id("rec") for _ in range(300)]  # past the block the child would share
    assert childs.startswith("rec_") and childs not in parents


def test_it_gives_each_model_its_own_prefix(brand, test_clock):
    assert brand.id.startswith("brd_")
    assert test_clock.id.startswith("tc_")


@pytest.mark.django_db
def test_it_keeps_an_explicit_id_with_the_right_prefix():
    brand = Brand.objects.create(id="brd_demo1", name="Demo", slug="demo1")
    clock = TestClock(id="tc_7Hq4", brand=brand, name="seed", frozen_time="2028-01-01T00:00Z")
    clock.full_clean()
    clock.save()
    assert TestClock.objects.get(pk="tc_7Hq4").brand == brand


@pytest.mark.django_db
def test_it_refuses_an_id_with_another_prefix():
    brand = Brand(id="tc_wrong", name="Demo", slug="demo2")
    with pytest.raises(ValidationError) as error:
        brand.full_clean()
    assert "id" in error.value.message_dict
    assert "'brd_'" in error.value.message_dict["id"][0]
