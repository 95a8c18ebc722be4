"""Timers written in one statement that says which it wrote (`timekeeping.timers.stored`,
issue 32): a live key already held is skipped, on SQLite and on PostgreSQL, one timer or many.
Timers of owners made in the transaction are written in one stream (`write_new`: COPY on
PostgreSQL), every value as the model held it; a key taken after all fails the write whole."""

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from tests.timekeeping.prepared import prepared_statements
from timekeeping.basics import inserted
from timekeeping.models import Timer
from timekeeping.tick import phases
from timekeeping.timers import delays
from timekeeping.timers.stored import (
    end_open,
    end_under_keys,
    store,
    store_rearmed,
    store_unheld,
    supersede_and_store,
    supersede_unwanted,
    write_new,
)

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


def test_many_timers_are_few_statements_on_postgresql_and_the_held_keys_skipped(brand):
    """1,200 timers (26,400 values: more than one INSERT of Django's could carry as
    parameters on SQLite): a statement for each `inserted.ROWS` of them on PostgreSQL, every
    free key written, the held ones not."""
    for n in (7, 700):
        delays.delay("timekeeping.note", {"n": n}, brand=brand, at=T0, key=f"many:{n}")
    many = [_timer(brand, f"many:{n}", T0 + timedelta(minutes=n)) for n in range(1200)]
    sent = []

    def seen(execute, sql, params, many_, context):
        sent.append(sql)
        return execute(sql, params, many_, context)

    with connection.execute_wrapper(seen):
        written = store(many)
    assert written == {timer.pk for n, timer in enumerate(many) if n not in (7, 700)}
    if connection.vendor == "postgresql":
        assert len(sent) == -(-1200 // inserted.ROWS)
    assert Timer.objects.filter(brand=brand, key__startswith="many:").count() == 1200
    assert Timer.objects.get(pk=many[1199].pk).owed == T0 + timedelta(minutes=1199)


def _stored(timers: list[Timer]) -> None:
    assert store(timers) == {timer.pk for timer in timers}


@pytest.mark.parametrize("write", [write_new, _stored], ids=["write_new", "store"])
def test_timers_are_written_whole_each_value_as_it_was_held(brand, test_clock, write):
    """Each value as the model held it, by both writers: an instant in another zone at the
    microsecond, a span, the payload as its field encodes it (its instant to the
    millisecond), quotes, a tab and a character outside ASCII."""
    paris = ZoneInfo("Europe/Paris")
    armed = _timer(brand, "job_new:remind", datetime(2027, 3, 28, 3, 30, 0, 7, tzinfo=paris))
    armed.payload = {"ask": "ask_new", "until": datetime(2027, 3, 28, 2, 0, 0, 1500,
                                                         tzinfo=UTC),
                     "day": date(2027, 3, 28), "note": "l\u2019été \"quoted\"\ttab"}
    held = _timer(brand, "job_new:late", T0 + timedelta(days=2))
    held.state, held.ended_by, held.owner_id = Timer.State.HELD, "waits on ask_new", "job_new"
    held.test_clock, held.late_by = test_clock, timedelta(days=3, seconds=90, microseconds=3)
    write([armed, held])
    write([])
    got = {timer.pk: timer for timer in Timer.objects.filter(brand=brand)}
    assert got.keys() == {armed.pk, held.pk}
    first, second = got[armed.pk], got[held.pk]
    # 03:30 CEST, the day it begins
    assert first.owed == datetime(2027, 3, 28, 1, 30, 0, 7, tzinfo=UTC)
    assert first.payload == {"ask": "ask_new", "until": "2027-03-28T02:00:00.001Z",
                             "day": "2027-03-28", "note": "l\u2019été \"quoted\"\ttab"}
    assert (first.state, first.test_clock_id, first.place, first.fired) == (
        Timer.State.ARMED, None, 4, None)
    assert (second.state, second.ended_by, second.owner_id, second.test_clock_id,
            second.late_by) == (Timer.State.HELD, "waits on ask_new", "job_new", test_clock.pk,
                                timedelta(days=3, seconds=90, microseconds=3))


@pytest.mark.django_db(transaction=True)
def test_a_new_owners_key_taken_after_all_fails_the_write_whole(brand):
    delays.delay("timekeeping.note", {"n": 1}, brand=brand, at=T0, key="taken")
    free, taken = _timer(brand, "free", T0), _timer(brand, "taken", T0)
    with pytest.raises(IntegrityError), transaction.atomic():
        write_new([free, taken])
    assert not Timer.objects.filter(pk__in=[free.pk, taken.pk]).exists()


def test_a_batch_marks_its_fired_timers_in_one_statement_of_text(brand):
    """Each fired, late by the time since it was owed; in one statement, sent as text (an
    execute wrapper, as a benchmark's or a count's, reads it as Django's own)."""
    keys = [f"mark:{n}" for n in range(3)]
    for n, key in enumerate(keys):
        delays.delay("timekeeping.note", {"n": n}, brand=brand, at=T0 + timedelta(minutes=n),
                     key=key)
    sent = []

    def seen(execute, sql, params, many, context):
        sent.append(sql)
        return execute(sql, params, many, context)

    now = T0 + timedelta(minutes=10)
    with connection.execute_wrapper(seen):
        assert phases.run_once(now=now, sweep=False).total("fired") == 3
    assert all(isinstance(sql, str) for sql in sent)
    marking = [sql for sql in sent if sql.startswith('UPDATE "timekeeping_timer"')
               and "late_by" in sql]
    assert len(marking) == 1, marking
    fired = Timer.objects.filter(brand=brand, key__in=keys).order_by("key")
    assert [(t.state, t.fired, t.late_by) for t in fired] == [
        (Timer.State.FIRED, now, timedelta(minutes=10 - n)) for n in range(3)]


def test_timers_still_armed_or_held_are_ended_by_id_in_one_statement(brand):
    """Those armed or held end, saying why; a fired one, and one ended before, stay as they
    were; the answer counts only those it ended."""
    timers = [_timer(brand, f"end:{n}", T0 + timedelta(hours=n)) for n in range(4)]
    timers[1].state, timers[1].ended_by = Timer.State.HELD, "waits"
    timers[2].state, timers[2].fired = Timer.State.FIRED, T0
    timers[3].state, timers[3].ended_by = Timer.State.CANCELLED, "job ended"
    store(timers)
    with CaptureQueriesContext(connection) as sent:
        ended = end_open([timer.pk for timer in timers], Timer.State.SUPERSEDED, "moved on")
    assert (ended, len(sent)) == (2, 1)
    assert end_open([], Timer.State.CANCELLED, "nothing") == 0
    assert [(t.key, t.state, t.ended_by) for t in Timer.objects.filter(
        brand=brand, key__startswith="end:").order_by("key")] == [
        ("end:0", Timer.State.SUPERSEDED, "moved on"),
        ("end:1", Timer.State.SUPERSEDED, "moved on"),
        ("end:2", Timer.State.FIRED, ""), ("end:3", Timer.State.CANCELLED, "job ended")]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="one statement on PostgreSQL")
def test_unheld_writes_a_key_only_where_no_timer_but_a_superseded_one_holds_it(brand, test_clock):
    """`store_unheld`, as `arm` writes (a firing batch's later timers, issue 32): a key a live,
    fired or ended timer holds is skipped; one only a superseded timer holds, or that another
    clock or brand holds, is written; in one statement, which answers the ids written."""
    from timekeeping.models import Brand

    states = ["armed", "held", "fired", "cancelled", "dropped", "superseded"]
    for state in states:
        Timer.objects.filter(pk=delays.delay("timekeeping.note", {"n": 1}, brand=brand,
                                             at=T0, key=state)).update(state=state)
    other = Brand.objects.create(name="Other", slug="other", owner=brand.owner)
    elsewhere = [_timer(brand, "armed", T0), _timer(other, "fired", T0)]
    elsewhere[0].test_clock = test_clock
    tried = [_timer(brand, state, T0 + timedelta(days=1)) for state in states]
    with CaptureQueriesContext(connection) as sent:
        written = store_unheld(tried + elsewhere)
    assert len(sent) == 1
    assert written == {tried[-1].pk, *(timer.pk for timer in elsewhere)}
    assert set(Timer.objects.filter(pk__in=written).values_list("key", "test_clock", "brand")
               ) == {("superseded", None, brand.pk), ("armed", test_clock.pk, brand.pk),
                     ("fired", None, other.pk)}
    # Written again: every key now held (the superseded one by the timer just written).
    assert store_unheld([_timer(brand, state, T0) for state in states]) == set()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="one statement on PostgreSQL")
def test_the_live_timers_under_keys_are_ended_in_one_statement_that_says_which(brand,
                                                                                test_clock):
    """`end_under_keys` (`arming.end_keys`: a job's end cancels its deadlines' and asks'
    timers, issue 32): those armed or held under the keys end, saying why, and their ids are
    the answer; a fired or ended one, another key's, another clock's and another brand's stay
    as they were."""
    from timekeeping.models import Brand

    other = Brand.objects.create(name="Other", slug="other", owner=brand.owner)
    states = ["armed", "held", "fired", "superseded"]
    timers = [_timer(brand, f"k:{state}", T0) for state in states]
    for timer, state in zip(timers, states, strict=True):
        timer.state = state
    aside = [_timer(brand, "aside", T0), _timer(other, "k:armed", T0),
             _timer(brand, "k:armed", T0)]
    aside[2].test_clock = test_clock
    store(timers + aside)
    keys = [f"k:{state}" for state in states]
    with CaptureQueriesContext(connection) as sent:
        ended = end_under_keys(brand.pk, None, keys, Timer.State.CANCELLED, "job ended")
    assert len(sent) == 1
    assert sorted(ended) == sorted(timer.pk for timer in timers[:2])
    assert set(Timer.objects.values_list("brand", "test_clock", "key", "state", "ended_by")
               ) == {(brand.pk, None, "k:armed", "cancelled", "job ended"),
                     (brand.pk, None, "k:held", "cancelled", "job ended"),
                     (brand.pk, None, "k:fired", "fired", ""),
                     (brand.pk, None, "k:superseded", "superseded", ""),
                     (brand.pk, None, "aside", "armed", ""),
                     (other.pk, None, "k:armed", "armed", ""),
                     (brand.pk, test_clock.pk, "k:armed", "armed", "")}
    # On the test clock, only its own.
    assert end_under_keys(brand.pk, test_clock.pk, ["k:armed"], Timer.State.SUPERSEDED,
                          "moved") == [aside[2].pk]


@pytest.mark.skipif(connection.vendor == "postgresql", reason="elsewhere: refused")
def test_unheld_is_refused_where_one_statement_cannot_read_and_write(brand):
    with pytest.raises(ValueError, match="only PostgreSQL"):
        store_unheld([_timer(brand, "any", T0)])
    assert not Timer.objects.filter(key="any").exists()


def _plan(sql: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql)
        return "\n".join(line for (line,) in cursor.fetchall())


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's plan")
def test_each_key_is_looked_up_by_its_index_however_many_timers_there_are(brand):
    """The planner guesses a hundred rows from the JSON it reads the new timers from; free to
    join them to the timers, it read every timer of the table (a hash anti join: 8 ms a timer
    among a practice's 20,000, issue 32). The lookup stays one index probe a new timer, as
    `arm` writes them and as `rearm_many` does; its update finds the owner's timers and those
    under its keys by their indexes too."""
    Timer.objects.bulk_create([_timer(brand, f"many:{n}", T0) for n in range(5000)])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE timekeeping_timer")
    with CaptureQueriesContext(connection) as sent:
        store_unheld([_timer(brand, "new", T0)])
        store_rearmed([_timer(brand, "newer", T0)])
        supersede_unwanted(brand.pk, None, "job_1", {"many:7": T0, "new": T0}, "moved")
        end_under_keys(brand.pk, None, ["many:8", "many:9"], Timer.State.CANCELLED, "ended")
        supersede_and_store(brand.pk, None, "job_1", {"many:10": T0 + timedelta(hours=1)},
                            "moved", [_timer(brand, "many:10", T0 + timedelta(hours=1))])
    for query in sent.captured_queries[:2]:
        plan = _plan(query["sql"])
        assert "SubPlan" in plan and "Join" not in plan, plan
        assert "Index Scan using timer_key on timekeeping_timer held" in plan, plan
    plan = _plan(sent.captured_queries[2]["sql"])
    assert "Seq Scan on timekeeping_timer" not in plan, plan
    assert "timer_owner" in plan and "timer_key" in plan, plan
    plan = _plan(sent.captured_queries[3]["sql"])
    assert "Seq Scan on timekeeping_timer" not in plan and "timer_key" in plan, plan
    # Both in one: the update run through first (a one-time filter on what it answered), each
    # new timer then looked up by its index.
    plan = _plan(sent.captured_queries[4]["sql"])
    assert "Seq Scan on timekeeping_timer" not in plan and "One-Time Filter" in plan, plan
    assert "timer_owner" in plan and "Index Scan using timer_key on timekeeping_timer held" \
        in plan and "Join" not in plan.split("CTE written")[1], plan


@pytest.mark.skipif(connection.vendor != "postgresql", reason="one statement on PostgreSQL")
def test_a_key_superseded_and_armed_again_in_one_statement_says_which_of_each(brand):
    # "moved": live, owed at another time, so superseded, and written again under its key in
    # the same statement (the live key's index refuses nothing the update ended); "kept": owed
    # then, left; "gone": the owner's, not wanted, superseded; "rang": fired for that very
    # instant, not written again.
    old = {}
    for key, owed in [("moved", T0), ("kept", T0 + timedelta(hours=1)), ("gone", T0),
                      ("rang", T0 + timedelta(hours=1))]:
        timer = _timer(brand, key, owed)
        timer.owner_id = "job_1"
        if key == "rang":
            timer.state = Timer.State.FIRED
        store([timer])
        old[key] = timer.pk
    wanted = {key: T0 + timedelta(hours=1) for key in ("moved", "kept", "rang", "new")}
    new = {key: _timer(brand, key, owed) for key, owed in wanted.items()}
    with CaptureQueriesContext(connection) as sent:
        ended, written = supersede_and_store(brand.pk, None, "job_1", wanted, "moved",
                                             list(new.values()))
    assert len(sent) == 1
    assert sorted(ended) == sorted([old["moved"], old["gone"]])
    assert written == {new["moved"].pk, new["new"].pk}
    live = dict(Timer.objects.filter(brand=brand, state=Timer.State.ARMED).values_list(
        "key", "pk"))
    assert live == {"moved": new["moved"].pk, "kept": old["kept"], "new": new["new"].pk}


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL prepares")
@pytest.mark.django_db(transaction=True)
def test_the_one_statement_is_prepared_once_and_answers_each_call_by_its_values(brand,
                                                                              settings):
    """Its text is one for every call of a shape: prepared on the connection, not parsed
    again (issue 32: a `run` rung's re-arm); each call still ends and writes by its own
    values. With PREPARED_STATEMENTS off, it is not prepared."""
    connection.close()  # a connection of its own: nothing prepared on it yet
    for n, owner in enumerate(["job_1", "job_2", "job_3"]):
        kept = _timer(brand, f"{owner}:date", T0)
        kept.owner_id = owner
        store([kept])
        moved_to = T0 + timedelta(days=n + 1)
        new = _timer(brand, f"{owner}:date", moved_to)
        new.owner_id = owner
        ended, written = supersede_and_store(brand.pk, None, owner, {new.key: moved_to},
                                             "moved", [new])
        assert (ended, written) == ([kept.pk], {new.pk})
    assert [statement for statement in prepared_statements() if statement.startswith('WITH "first"')
            ] != []
    assert dict(Timer.objects.filter(state=Timer.State.ARMED).values_list("key", "owed")) == {
        f"job_{n}:date": T0 + timedelta(days=n) for n in (1, 2, 3)}
    settings.PREPARED_STATEMENTS = False
    connection.close()
    supersede_and_store(brand.pk, None, "job_1", {"job_1:date": T0}, "moved",
                        [_timer(brand, "job_1:date", T0)])
    assert prepared_statements() == []


def _held_world(brand):
    """The owner's live date, another owner's live timer under a key the batch holds back
    one for, and what the batch held back: the owner's ask, another owner's, and the owner's
    under that taken key."""
    for key, owner in [("job_1:date", "job_1"), ("taken", "job_9")]:
        timer = _timer(brand, key, T0)
        timer.owner_id = owner
        store([timer])
    held = []
    for key, owner in [("job_1:ask", "job_1"), ("job_2:ask", "job_2"), ("taken", "job_1")]:
        timer = _timer(brand, key, T0 + timedelta(hours=3))
        timer.owner_id = owner
        held.append(timer)
    return held


def _left(brand):
    return sorted(Timer.objects.filter(brand=brand).values_list(
        "key", "owner_id", "owed", "state", "ended_by"))


@pytest.mark.skipif(connection.vendor != "postgresql", reason="one statement on PostgreSQL")
@pytest.mark.parametrize("rearmed", [1, 0], ids=["with rungs to write", "none to write"])
def test_timers_held_back_ride_in_the_statement_and_leave_what_writing_them_first_leaves(
        brand, rearmed):
    """`held` (`Firing.due_to_ride`): written in the statement as `store_unheld` writes them,
    the owner's already superseded as the update would have left it, and among what it says
    it superseded; with nothing of its own to write, first, as before (issue 32)."""
    from timekeeping.models import Brand

    first = Brand.objects.create(name="First", slug="first", owner=brand.owner)
    wanted = {"job_1:date": T0 + timedelta(days=1)} if rearmed else {}
    made = [_timer(brand, key, owed) for key, owed in wanted.items()]
    held = _held_world(brand)
    with CaptureQueriesContext(connection) as sent:
        ended, written = supersede_and_store(brand.pk, None, "job_1", wanted, "moved", made,
                                             held)
    # The same, the held timers written first, on their own.
    before = _held_world(first)
    written_first = store_unheld(before)
    ended_after, written_after = supersede_and_store(
        first.pk, None, "job_1", wanted, "moved",
        [_timer(first, key, owed) for key, owed in wanted.items()])
    assert len(sent) == (1 if rearmed else 2)  # none to write: the held, then the update
    assert [row[1:] for row in _left(brand)] == [row[1:] for row in _left(first)]
    assert [row[0] for row in _left(brand)] == [row[0] for row in _left(first)]
    keys = dict(Timer.objects.values_list("pk", "key"))
    assert sorted(keys[pk] for pk in ended) == sorted(keys[pk] for pk in ended_after) == (
        ["job_1:ask", "job_1:date"])
    assert sorted(keys[pk] for pk in written) == sorted(
        keys[pk] for pk in written_first | written_after) == sorted(
        ["job_1:ask", "job_2:ask"] + (["job_1:date"] if rearmed else []))
