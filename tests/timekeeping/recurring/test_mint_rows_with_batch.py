"""A batch of mints writes its orders' new rows together (issue 32, `timekeeping.timers.made`):
the jobs, their clocks, dates, asks and deadlines one statement a table for the batch, with
no savepoint an order; and where writing them later could change what a statement finds, the
batch is redone a timer at a time, as when a handler fails, with the same outcome as before.
PostgreSQL only: the batch takes the dates' ids from their table's sequence."""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.timekeeping.recurring.test_mint_queries import MINTED, SUBSCRIBED, subscribed
from timekeeping import clocks
from timekeeping.basics import wallclock
from timekeeping.clocks import opening
from timekeeping.models import (
    Allowance,
    Ask,
    Brand,
    Clock,
    Deadline,
    Heartbeat,
    Job,
    Manifest,
    Occurrence,
    Record,
    Subject,
    Subscription,
    TickRun,
    Timer,
)
from timekeeping.tick import phases
from timekeeping.timers import arming, firing, kinds
from timekeeping.timers.kinds import Place

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif("connection.vendor != 'postgresql'")]

NEW_ROWS = (Job, Clock, Occurrence, Ask, Deadline)


def _tick(brand: Brand) -> CaptureQueriesContext:
    Heartbeat.objects.get_or_create(name="tick")  # a first tick makes it in a savepoint
    with wallclock.fixed(MINTED), CaptureQueriesContext(connection) as tick:
        phases.run_once(now=MINTED, brand_ids=[brand.pk], sweep=False)
    return tick


def _inserts(tick: CaptureQueriesContext, model) -> int:
    into = f'INSERT INTO "{model._meta.db_table}" '
    return sum(query["sql"].startswith(into) for query in tick.captured_queries)


def _savepoints(tick: CaptureQueriesContext) -> int:
    return sum(query["sql"].startswith("SAVEPOINT") for query in tick.captured_queries)


# -- what a brand holds, its ids named for what they are, so two brands can be compared ------

# How each row is named, in an order where what a name uses is named before it.
LABELS = (
    (Subject, lambda row, names: f"subject {row.key}"),
    (Subscription, lambda row, names: f"subscription of {names[row.subject_id]}"),
    (Job, lambda row, names: f"{row.service} {row.period} of {names[row.subject_id]}"),
    (Clock, lambda row, names: f"clock {row.name} of {names[row.job_id]}"),
    (Occurrence, lambda row, names: f"date {row.item} {row.seq} of {names[row.clock_id]}"),
    (Ask, lambda row, names: f"ask {row.step} of {names[row.job_id]}"),
    (Deadline, lambda row, names: f"deadline {row.step} of {names[row.job_id]}"),
    (TickRun, lambda row, names: "run"),
)


def _labels(brand: Brand) -> dict:
    """Each id of the brand's rows, by what the row is (its subject's key, its name)."""
    names: dict = {brand.pk: "brand"}
    for model, label in LABELS:
        for row in model.objects.filter(brand=brand):
            names[row.pk] = label(row, names)
    return names


def _said(value, names: dict, key: str = ""):
    """`value` with every id it holds named (`_labels`)."""
    if isinstance(value, dict):
        return {k: _said(v, names, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_said(v, names) for v in value]
    if isinstance(value, int) and key == "occurrence":  # a date's id
        return names.get(value, value)
    if isinstance(value, str):
        for pk, name in names.items():
            if isinstance(pk, str) and pk in value:
                value = value.replace(pk, name)
    return value


def _held(brand: Brand) -> dict[str, list[str]]:
    """Every row of the brand a mint makes or changes, each field's value with its ids named
    (an ask's digest left out: a hash of its link's random token; and when a row was
    written, which the database says; and the order of timers owed together)."""
    names = _labels(brand)
    for timer in Timer.objects.filter(brand=brand):
        names[timer.pk] = f"timer {_said(timer.key, names)}"
    held = {}
    for model in (*NEW_ROWS, Timer, Record, Allowance):
        rows = []
        for row in model.objects.filter(brand=brand):
            fields = {field.attname: getattr(row, field.attname)
                      for field in model._meta.concrete_fields
                      if field.name != "digest" and not field.has_db_default()}
            fields["id"] = names.get(row.pk) if model in (*NEW_ROWS, Timer) else "its own"
            if model is Record and row.kind in ("timer.fired", "timer.late"):
                # Timers owed together fire in the order of their owners' ids, which are
                # random: which is first (a firing's `seq`, the late ones' first) is not kept.
                fields["data"].pop("seq", None)
                fields["timer"] = "" if row.kind == "timer.late" else fields["timer"]
            rows.append(json.dumps(_said(fields, names), sort_keys=True, default=str))
        held[model.__name__] = sorted(rows)
    return held


def test_a_batch_of_mints_writes_its_orders_rows_together_and_as_each_order_would(
        actors, monkeypatch):
    together = subscribed(actors, "together", 4)
    tick = _tick(together)
    # Each order's job, clocks, dates, ask and deadline: one statement a table for the batch,
    # and no savepoint an order.
    assert {model.__name__: _inserts(tick, model) for model in NEW_ROWS} == {
        model.__name__: 1 for model in NEW_ROWS}
    assert _savepoints(tick) == 0
    assert Job.objects.filter(brand=together, service="annual-return").count() == 4

    # The same practice, each order writing its rows as it makes them (a batch that does not
    # take them): every row, timer and record is the same, its ids named for what they are.
    one_by_one = subscribed(actors, "one-by-one", 4)
    monkeypatch.setattr(firing.Firing, "take_rows", lambda batch: None)
    tick = _tick(one_by_one)
    assert _inserts(tick, Job) == 4 and _savepoints(tick) == 4
    mine, theirs = _held(together), _held(one_by_one)
    assert len(mine["Occurrence"]) == 4 * 6 and len(mine["Timer"]) > 4 * 20  # six dates each
    for model in mine:
        assert mine[model] == [row.replace("one-by-one", "together") for row in theirs[model]], \
            model


def _counts_returns(timer: Timer, batch) -> str:
    found = Job.objects.filter(brand=batch.brand, service="annual-return").count()
    return f"found {found} returns"


# A kind firing after a batch's mints (a place after theirs), saying how many returns it finds.
kinds.register("test_counts_returns", place=Place.ASK, describe=lambda timer: timer.key)(
    _counts_returns)


def test_a_statement_on_their_table_finds_the_rows_the_batch_holds_written_first(actors):
    brand = subscribed(actors, "practice", 3)
    owed = Timer.objects.filter(brand=brand, kind="schedule").first().owed
    with wallclock.fixed(SUBSCRIBED):
        arming.arm(brand=brand, kind="test_counts_returns", key="count", owed=owed,
                   owner_id="count")
    tick = _tick(brand)
    said = Record.objects.get(brand=brand, kind="timer.fired", data__key="count").data["what"]
    assert said == "found 3 returns"
    # Written once, just before the count, and not again with the batch.
    assert _inserts(tick, Job) == 1 and _savepoints(tick) == 0


def _takes_a_period(timer: Timer, batch) -> str:
    """What another order for the subject's period does between the batch's read of the held
    periods and its write: takes the period, its record not the subject's."""
    subject = Subject.objects.get(pk=timer.payload["subject"])
    Job.objects.create(brand=batch.brand, subject=subject, service="annual-return",
                       period="2027", plan="team", opened=batch.instant,
                       bundle=Manifest.objects.filter(brand=batch.brand).latest("version").bundle)
    return "took 2027"


kinds.register("test_takes_a_period", place=Place.CYCLE, describe=lambda timer: timer.key)(
    _takes_a_period)


def test_a_period_taken_before_the_batch_writes_its_job_leaves_the_mint_as_it_would_have(
        actors):
    brand = subscribed(actors, "practice", 3)
    subject = Subject.objects.filter(brand=brand).order_by("key").first()
    owed = Timer.objects.filter(brand=brand, kind="schedule").first().owed
    with wallclock.fixed(SUBSCRIBED):  # fires before the mints: owed a minute before them
        arming.arm(brand=brand, kind="test_takes_a_period", key="take",
                   owed=owed - timedelta(minutes=1), owner_id="take",
                   payload={"subject": subject.pk})
    tick = _tick(brand)
    # The batch's write of its jobs is refused by the period's constraint: the batch is redone
    # a timer at a time, and the subject's mint finds its period held, as an order writing its
    # job at once finds it. Nothing failed.
    assert _savepoints(tick) >= 4
    mint = Record.objects.get(brand=brand, kind="timer.fired", data__kind="schedule",
                              data__owner=Subscription.objects.get(subject=subject).pk)
    assert "already held by a job: nothing minted" in mint.data["what"]
    assert Job.objects.filter(brand=brand, service="annual-return").count() == 3
    assert TickRun.objects.get(brand=brand, instant=MINTED).failed == 0


@pytest.fixture
def hook():
    """An open hook of the test's own (`clocks.on_open`), taken out after it."""
    added = []

    def add(function):
        added.append(clocks.on_open(function))
        return function

    yield add
    for function in added:
        opening.OPEN_HOOKS.remove(function)


def test_an_order_reading_back_what_it_made_has_its_batch_redone_and_finds_it(actors, hook):
    seen: list[bool] = []

    @hook
    def reads_its_job(job, spec, now):
        seen.append(Job.objects.filter(pk=job.pk).exists())

    brand = subscribed(actors, "practice", 3)
    tick = _tick(brand)
    # Read back inside the order, the job was not written yet: the batch is redone a timer at
    # a time, each order writing its rows as it makes them, and there each finds its job.
    assert seen[-3:] == [True, True, True] and False in seen
    assert _savepoints(tick) >= 3
    assert Job.objects.filter(brand=brand, service="annual-return").count() == 3
    assert TickRun.objects.get(brand=brand, instant=MINTED).failed == 0


def test_an_order_refused_after_it_wrote_keeps_nothing_of_it(actors, hook):
    brand = subscribed(actors, "practice", 3)
    refused = Subject.objects.filter(brand=brand).order_by("key").first()

    @hook
    def writes_then_refuses(job, spec, now):
        Record.objects.create(brand=job.brand, kind="test.hooked", instant=now, job=job.pk)
        if job.subject_id == refused.pk:
            raise clocks.OrderRefused("period", "refused by the test's hook")

    _tick(brand)
    # As with the order's own savepoint: the refused order keeps neither its job nor what its
    # hook wrote, and the mint's refusal is on the record; the others opened.
    assert set(Job.objects.filter(brand=brand, service="annual-return").values_list(
        "subject_id", flat=True)) == set(Subject.objects.filter(brand=brand).exclude(
            pk=refused.pk).values_list("pk", flat=True))
    assert Record.objects.filter(brand=brand, kind="test.hooked").count() == 2
    mint = Record.objects.get(brand=brand, kind="timer.fired", data__kind="schedule",
                              data__owner=Subscription.objects.get(subject=refused).pk)
    assert mint.data["what"].endswith("refused (order_refused): refused by the test's hook")
    assert Record.objects.filter(brand=brand, kind="schedule.mint_refused",
                                 subject=refused.pk).count() == 1
    assert TickRun.objects.get(brand=brand, instant=MINTED).failed == 0


def test_a_batch_keeps_at_most_so_many_new_rows_before_it_writes_them(actors, monkeypatch):
    brand = subscribed(actors, "practice", 3)
    monkeypatch.setattr(firing, "ROWS_KEPT", 1)  # each order's written when it ends
    tick = _tick(brand)
    assert {model.__name__: _inserts(tick, model) for model in NEW_ROWS} == {
        model.__name__: 3 for model in NEW_ROWS}
    assert _savepoints(tick) == 0
    assert Occurrence.objects.filter(brand=brand).count() == 3 * 6
