"""A row read becomes its model without Django's `__init__` (`timekeeping.models.base`,
issue 32), and is the same model Django would have made: every field, the state of a saved
row, its relations read and cached as before. A row read in part, or a model whose init
signals someone hears, goes through Django's own `from_db`."""

from datetime import UTC, datetime

import pytest
from django.db import models
from django.db.models.signals import post_init

from timekeeping.models import Brand, Timer
from timekeeping.timers import arming

pytestmark = pytest.mark.django_db
OWED = datetime(2027, 4, 15, 13, 30, 15, 250000, tzinfo=UTC)


@pytest.fixture
def timer(brand):
    return arming.arm(brand=brand, kind="delay", key="k:read", owed=OWED,
                      owner_type="brand", owner_id=brand.pk, owner_opened=OWED,
                      payload={"operation": "timekeeping.noop", "input": {"n": [1, 2]}})


def _fields(instance) -> dict:
    return {field.attname: getattr(instance, field.attname)
            for field in type(instance)._meta.concrete_fields}


def test_a_row_read_is_the_model_django_makes(timer):
    read = Timer.objects.get(pk=timer.pk)
    row = Timer.objects.filter(pk=timer.pk).values_list(
        *[field.attname for field in Timer._meta.concrete_fields]).get()
    djangos = models.Model.from_db.__func__(Timer, "default", None, row)
    assert _fields(read) == _fields(djangos) == _fields(timer)
    assert read.owed == OWED and read.payload["input"] == {"n": [1, 2]}
    assert (read._state.adding, read._state.db) == (False, "default")
    assert read.brand.pk == timer.brand_id and read.brand is read.brand  # fetched once, kept


def test_a_row_read_saves_as_an_update_and_reads_its_relations_again(timer, brand):
    read = Timer.objects.select_related("brand").get(pk=timer.pk)
    assert read.brand.name == brand.name
    other = Brand.objects.create(name="Other", slug="other")
    read.brand_id = other.pk
    assert read.brand == other  # the cached brand is let go when its id changes
    read.key = "k:moved"
    read.save(update_fields=["key", "brand"])
    assert Timer.objects.filter(brand=other, key="k:moved").count() == 1


def test_a_row_read_in_part_loads_the_rest_when_asked(timer):
    read = Timer.objects.only("id", "key").get(pk=timer.pk)
    assert read.get_deferred_fields() >= {"owed", "payload"}
    assert read.owed == OWED


def test_a_model_whose_init_is_heard_goes_through_djangos_from_db(timer):
    heard = []

    def hear(sender, instance, **kwargs):
        heard.append(instance.pk)

    post_init.connect(hear, sender=Timer)
    try:
        read = Timer.objects.get(pk=timer.pk)
    finally:
        post_init.disconnect(hear, sender=Timer)
    assert heard == [timer.pk] and read.owed == OWED
