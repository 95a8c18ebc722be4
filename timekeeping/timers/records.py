"""Writing to the record. Inside a firing the record joins the batch's bulk write; outside,
it is written at once.

`write_many` is the bulk path: on PostgreSQL it streams the rows with COPY (Django's
bulk_create builds one UNNEST array per column, which costs more than the firing itself on
the tick's hot path); elsewhere it uses bulk_create.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection
from psycopg import sql as pgsql

from timekeeping.basics import json_text
from timekeeping.basics.public_ids import new_id
from timekeeping.models import Brand, Record, TestClock
from timekeeping.timers import gathered, in_progress
from timekeeping.timers.stored import copying

COLUMNS = ("id", "kind", "instant", "brand_id", "test_clock_id", "subject", "job", "timer",
           "data")


# One encoder for every record, writing what `json.dumps(data, default=DjangoJSONEncoder()
# .default)` writes, made once (`json_text`).
_encode = json_text.encoder(DjangoJSONEncoder().default)


def encode(data: dict) -> str:
    """A record's data as JSON text. A firing's records are encoded when the handler hands
    them over, so data that is not JSON (a set, an object) fails inside that handler's firing,
    where the tick records it as that timer's failure, instead of in the batch's bulk write."""
    return _encode(data)


def encode_fired(data: dict) -> str:
    """A `timer.fired` record's data, its keys in the firing's order, as `encode` writes it,
    in one format string: the encoder took twice as long, for the record every fired timer
    writes (issue 32). Data of another shape (a handler's `what` that is no text, a number
    that is no finite one) goes through `encode`."""
    try:
        kind, key, place, owed, late_by_s = (data["kind"], data["key"], data["place"],
                                             data["owed"], data["late_by_s"])
        owner, pass_no, run, seq, what = (data["owner"], data["pass"], data["run"],
                                          data["seq"], data["what"])
    except KeyError:
        return encode(data)
    if not (len(data) == 10
            and type(kind) is type(key) is type(owed) is type(owner) is type(run) is str
            and type(what) is str and type(place) is type(pass_no) is type(seq) is int
            and type(late_by_s) is float and late_by_s - late_by_s == 0):  # finite
        return encode(data)
    q = json_text.quoted
    return (f'{{"kind": {q(kind)}, "key": {q(key)}, "place": {place!r}, "owed": {q(owed)}, '
            f'"late_by_s": {late_by_s!r}, "owner": {q(owner)}, "pass": {pass_no!r}, '
            f'"run": {q(run)}, "seq": {seq!r}, "what": {q(what)}}}')


def error_text(error: BaseException, limit: int = 2000) -> str:
    """An error as stored text: its type and message, NUL-free (PostgreSQL keeps no NUL in
    text or JSON) and bounded."""
    return f"{type(error).__name__}: {error}".replace("\x00", "\\0")[:limit]



def person(user) -> str:
    """A signed-in person as records name them: "user 7 (ana)" (`history.person` reads it)."""
    return f"user {user.pk} ({user.get_username()})"


@dataclass
class Entry:
    """A record not yet written: what happened, to what; its data already JSON text, its id
    already chosen (what hears it, such as a webhook's delivery, names the record by it)."""

    kind: str
    timer: str = ""
    subject: str = ""
    job: str = ""
    data: dict = field(default_factory=dict)
    encoded: str = ""
    id: str = ""

    def __post_init__(self) -> None:
        if not self.encoded:  # given by a writer that made it faster (`encode_fired`)
            self.encoded = encode(self.data)
        self.id = self.id or new_id("rec")


# What hears each record as it is made, in the transaction that makes it (the wiring,
# `timekeeping.apps`, adds them): a hearer gets the brand, the test clock (or None), the
# instant and the entry, and may write through the outbox and the record itself.
Hearer = Callable[[Brand, "TestClock | None", datetime, Entry], None]
_hearers: list[Hearer] = []


def listen(hearer: Hearer) -> None:
    """Add a hearer of every record made (once: adding one twice is a no-op)."""
    if hearer not in _hearers:
        _hearers.append(hearer)


def heard(brand: Brand, test_clock: TestClock | None, instant: datetime, entry: Entry) -> None:
    """Tell each hearer of a record made."""
    for hearer in _hearers:
        hearer(brand, test_clock, instant, entry)


def write(
    kind: str, *, brand: Brand, instant: datetime, test_clock: TestClock | None = None,
    subject: str = "", job: str = "", timer: str = "", data: dict | None = None,
) -> Record | None:
    """Write one record: the row written, or None inside a firing (it joins the batch) or
    an operation that gathers its writes (`arming.gathering`)."""
    batch = in_progress.current()
    if batch is not None and batch.brand.pk == brand.pk:
        batch.record(kind, timer=timer, subject=subject, job=job, data=data)
        return None
    entry = Entry(kind, timer=timer, subject=subject, job=job, data=data or {})
    gathering = gathered.current()
    if gathering is not None:  # written with the operation's other records, at its end
        gathering.records.append((brand, test_clock, instant, entry))
        heard(brand, test_clock, instant, entry)
        return None
    record = Record.objects.create(id=entry.id, kind=kind, instant=instant, brand=brand,
                                   test_clock=test_clock, subject=subject, job=job,
                                   timer=timer, data=data or {})
    heard(brand, test_clock, instant, entry)
    return record


def write_many(entries: list[Entry], *, brand: Brand, test_clock: TestClock | None,
               instant: datetime) -> None:
    """Write entries that happened at one instant on one brand clock, in one statement."""
    write_clocks([(brand, test_clock, entries)], instant=instant)


def write_clocks(clocks: list[tuple[Brand, TestClock | None, list[Entry]]], *,
                 instant: datetime) -> None:
    """Write the entries of many brand clocks at one instant in one statement (a tick that
    fires a group of small clocks together writes their records with one COPY)."""
    write_rows([(brand, test_clock, instant, entry) for brand, test_clock, entries in clocks
                for entry in entries])


def write_rows(rows: list[tuple[Brand, TestClock | None, datetime, Entry]]) -> None:
    """Write entries, each of its brand clock and instant, in one statement."""
    if not rows:
        return
    if connection.vendor != "postgresql":
        Record.objects.bulk_create([
            Record(id=e.id, kind=e.kind, instant=instant, brand=brand, test_clock=test_clock,
                   timer=e.timer, subject=e.subject, job=e.job, data=json.loads(e.encoded))
            for brand, test_clock, instant, e in rows
        ])
        return
    statement = pgsql.SQL("COPY {} ({}) FROM STDIN").format(
        pgsql.Identifier(Record._meta.db_table),
        pgsql.SQL(", ").join(pgsql.Identifier(column) for column in COLUMNS))
    with copying(connection, statement) as copy:
        for brand, test_clock, instant, e in rows:
            copy.write_row((e.id, e.kind, instant, brand.pk,
                            test_clock.pk if test_clock is not None else None,
                            e.subject, e.job, e.timer, e.encoded))
