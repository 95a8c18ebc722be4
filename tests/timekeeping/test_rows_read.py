"""A row read becomes its model without Django's `__init__` (`timekeeping.models.base`,
issue 32), and is the same model Django would have made: every field, the state of a saved
row, its relations read and cached as before. A row read in part, or a model whose init
signals someone hears, goes through Django's own `from_db`. A new row made by `fresh` is the
one Django's `__init__` makes, and saves as it does; what `fresh` does not know, Django's
`__init__` makes or refuses."""

from datetime import UTC, datetime

import pytest
from django.db import models
from django.db.models.signals import post_init

from timekeeping.models import Brand, Occurrence, TestClock, Timer
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


def _made(instance) -> dict:
    """What Django's `__init__` leaves on a new instance, but its new public id."""
    return {**{name: value for name, value in instance.__dict__.items()
               if name not in ("_state", "id")},
            "state": (instance._state.adding, instance._state.db,
                      dict(instance._state.fields_cache))}


def test_a_fresh_row_is_the_one_djangos_init_makes_and_saves_as_it_does(brand):
    clock = TestClock.objects.create(brand=brand, name="a year", frozen_time=OWED)
    given = {"brand": brand, "key": "k:fresh", "kind": "delay", "place": 3, "owed": OWED,
             "owner_id": "o", "owner_opened": OWED, "armed_at": OWED}
    for test_clock in (None, clock):
        made, djangos = Timer.fresh(**given, test_clock=test_clock), Timer(**given,
                                                                           test_clock=test_clock)
        assert _made(made) == _made(djangos)
        assert made.pk.startswith("tmr_") and made.pk != djangos.pk
        assert made.test_clock is test_clock and made.brand is brand
    by_id = Timer.fresh(**{**given, "brand": None, "brand_id": brand.pk})
    assert _made(by_id) == _made(Timer(**{**given, "brand": None, "brand_id": brand.pk}))
    made.save()
    read = Timer.objects.get(pk=made.pk)
    assert _fields(read) == _fields(made) and read.payload == {} and read.state == "armed"


def test_what_fresh_does_not_know_django_makes_or_refuses(brand):
    with pytest.raises(TypeError, match="unexpected keyword"):
        Timer.fresh(brand=brand, nothing=1)
    with pytest.raises(ValueError, match="must be a \"Brand\" instance"):
        Timer.fresh(brand=Occurrence(), key="k")
    unsaved = Brand(name="Unsaved", slug="unsaved")
    made = Timer.fresh(brand=unsaved, key="k")  # Django's: the brand's database chosen
    assert made.brand is unsaved and unsaved._state.db == "default"
    heard = []
    post_init.connect(lambda sender, instance, **kwargs: heard.append(instance), sender=Timer,
                      weak=False, dispatch_uid="fresh-heard")
    try:
        made = Timer.fresh(brand=brand, key="k")
    finally:
        post_init.disconnect(sender=Timer, dispatch_uid="fresh-heard")
    assert heard == [made]
