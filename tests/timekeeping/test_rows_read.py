"""A row read becomes its model without Django's `__init__` (`timekeeping.models.base`,
issue 32), and is the same model Django would have made: every field, the state of a saved
row, its relations read and cached as before. A row read in part, or a model whose init
signals someone hears, goes through Django's own `from_db`. A new row made by `fresh` is the
one Django's `__init__` makes, and saves as it does; what `fresh` does not know, Django's
`__init__` makes or refuses. A save of some fields is one UPDATE made once, and an insert
forced one INSERT made once, writing what Django's `save` writes; what they do not know,
Django's `save` does."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import DatabaseError, IntegrityError, connection, models, transaction
from django.db.models import F, Value
from django.db.models.signals import post_init, post_save
from django.db.models.sql.compiler import SQLInsertCompiler
from django.test.utils import CaptureQueriesContext

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


def test_a_save_of_some_fields_writes_what_djangos_writes_in_one_statement(timer, brand):
    """Each kind of value a handler saves (a state, an instant in another zone, a span, JSON,
    a related row by its field, None): the row read back is the row Django's save writes."""
    other = Brand.objects.create(name="Other", slug="other")
    changes = {"state": Timer.State.HELD, "owed": datetime(2027, 11, 7, 1, 30, fold=1,
                                                           tzinfo=ZoneInfo("America/New_York")),
               "late_by": timedelta(days=2, microseconds=7), "payload": {"n": [3], "at": OWED},
               "brand": other, "next_attempt": None, "ended_by": "moved"}
    twin = arming.arm(brand=brand, kind="delay", key="k:twin", owed=OWED, owner_type="brand",
                      owner_id=brand.pk, owner_opened=OWED, payload={})
    for name, value in changes.items():
        setattr(timer, name, value)
        setattr(twin, name, value)
    with CaptureQueriesContext(connection) as sent:
        timer.save(update_fields=list(changes))
    models.Model.save(twin, update_fields=list(changes))  # Django's own
    assert len(sent) == 1 and sent[0]["sql"].startswith("UPDATE")
    ours, djangos = Timer.objects.get(pk=timer.pk), Timer.objects.get(pk=twin.pk)
    own = {"id": None, "key": None, "armed_at": None}  # each timer's own
    assert {**_fields(ours), **own} == {**_fields(djangos), **own}
    assert ours.brand_id == other.pk and ours.late_by == changes["late_by"]
    assert ours.payload == {"n": [3], "at": "2027-04-15T13:30:15.250Z"}  # Django's encoder
    assert (timer._state.adding, timer._state.db) == (False, "default")


def test_a_save_that_finds_no_row_is_refused_as_django_refuses_it(timer):
    Timer.objects.filter(pk=timer.pk).delete()
    timer.state = Timer.State.CANCELLED
    with pytest.raises(DatabaseError, match="did not affect any rows"), transaction.atomic():
        timer.save(update_fields=["state"])


def test_what_the_fast_save_does_not_know_djangos_save_does(timer):
    timer.attempts = F("attempts") + 2
    timer.save(update_fields=["attempts"])  # an expression
    assert Timer.objects.get(pk=timer.pk).attempts == 2
    with pytest.raises(ValueError, match="do not exist in this model"):
        timer.save(update_fields=["nothing"])
    heard = []
    post_save.connect(lambda sender, instance, **kwargs: heard.append(kwargs["update_fields"]),
                      sender=Timer, weak=False, dispatch_uid="save-heard")
    try:
        timer.save(update_fields=["key"])
    finally:
        post_save.disconnect(sender=Timer, dispatch_uid="save-heard")
    assert heard == [frozenset({"key"})]


def test_an_insert_forced_writes_what_djangos_writes_in_one_statement(brand, monkeypatch):
    """A row made and inserted (`objects.create`): each kind of value (a state, an instant in
    the hour that happens twice, a span, JSON with an instant, a related row, None, text), read
    back, is the row Django's own insert writes."""
    values = {"brand": brand, "kind": "delay", "place": 1, "state": Timer.State.HELD,
              "owed": datetime(2027, 11, 7, 1, 30, fold=1, tzinfo=ZoneInfo("America/New_York")),
              "late_by": timedelta(days=2, microseconds=7), "payload": {"n": [3], "at": OWED},
              "next_attempt": None, "owner_type": "brand", "owner_id": brand.pk,
              "owner_opened": OWED, "armed_at": OWED}
    compiled, insert = [], SQLInsertCompiler.execute_sql

    def compiling(compiler, *args, **kwargs):
        compiled.append(compiler.query.model)
        return insert(compiler, *args, **kwargs)

    monkeypatch.setattr(SQLInsertCompiler, "execute_sql", compiling)
    with CaptureQueriesContext(connection) as sent:
        ours = Timer.objects.create(key="k:ours", **values)
    assert compiled == []  # the statement made once, not compiled by Django
    twin = Timer(key="k:twin", **values)
    models.Model.save(twin, force_insert=True)  # Django's own
    assert compiled == [Timer]
    assert len(sent) == 1 and sent[0]["sql"].startswith("INSERT")
    own = {"id": None, "key": None}
    read, djangos = Timer.objects.get(pk=ours.pk), Timer.objects.get(pk=twin.pk)
    assert {**_fields(read), **own} == {**_fields(djangos), **own}
    assert read.owed == datetime(2027, 11, 7, 6, 30, tzinfo=UTC)  # the second 01:30
    assert read.payload == {"n": [3], "at": "2027-04-15T13:30:15.250Z"}  # Django's encoder
    assert (ours._state.adding, ours._state.db) == (False, "default")


def _created(brand, key: str, **more) -> Timer:
    return Timer.objects.create(brand=brand, kind="delay", place=1, owner_opened=OWED, key=key,
                                owed=OWED, **more)


def test_an_insert_the_database_refuses_is_refused_and_marks_the_transaction(brand):
    _created(brand, "k:taken")
    marked = []
    with pytest.raises(IntegrityError), transaction.atomic():
        try:
            _created(brand, "k:taken")
        finally:
            marked.append(transaction.get_rollback())  # as Django's own insert leaves it
    assert marked == [True]
    assert Timer.objects.filter(key="k:taken").count() == 1


def test_what_the_fast_insert_does_not_know_djangos_save_does(brand):
    heard = []
    post_save.connect(lambda sender, instance, **kwargs: heard.append(kwargs["created"]),
                      sender=Timer, weak=False, dispatch_uid="insert-heard")
    try:
        _created(brand, "k:heard")
    finally:
        post_save.disconnect(sender=Timer, dispatch_uid="insert-heard")
    assert heard == [True]
    made = _created(brand, "k:expression", attempts=Value(3))
    assert Timer.objects.get(pk=made.pk).attempts == 3
