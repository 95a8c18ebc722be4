import pytest
from django.core.exceptions import ValidationError

from timekeeping.basics.public_ids import RANDOM_LENGTH, new_id
from timekeeping.models import Brand, TestClock


def test_it_makes_ids_of_prefix_and_random_base62():
    made = {new_id("tmr") for _ in range(2000)}
    assert len(made) == 2000
    for value in made:
        prefix, rest = value.split("_")
        assert prefix == "tmr"
        assert len(rest) == RANDOM_LENGTH
        assert rest.isalnum() and rest.isascii()


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
