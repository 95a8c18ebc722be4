"""What an erasure finds of a subject outside its own rows (`timekeeping.subjects.erasing`,
steps 6 and 7): the emails about it in the outbox, and its records with the copies they left.

    outbox(subject, owned, needles)    unsent emails about it dropped (how many), the others
                                       of the brand that name it scrubbed
    history(subject, owned, needles)   its records rewritten without personal data (how many),
                                       and their copies, its timers and its walks' lines

The database finds the rows worth reading (LIKE on the ids and the needles as JSON holds them,
in batches); each is then judged here, exactly.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import reduce
from operator import or_

from django.db.models import Q, TextField
from django.db.models.functions import Cast

from timekeeping.models import (
    Delivery,
    ReceivedWebhook,
    Record,
    Subject,
    Timer,
    WalkLine,
    WebhookAttempt,
)
from timekeeping.subjects.owned import Owned
from timekeeping.subjects.scrubbing import Needles, chunks, records

KEY_PARTS = re.compile(r"[:#@\s]")  # an idempotency key's parts: `job_…:lapsed:…`, `clk_…#US@1:…`
CONDITIONS = 200  # LIKE conditions in one query
# Never delivered: waiting, being sent, or failed for good (a failed one could be sent again).
UNSENT = [Delivery.State.PENDING, Delivery.State.RUNNING, Delivery.State.FAILED]


def outbox(subject: Subject, owned: Owned, needles: Needles) -> int:
    """Step 6. An unsent email about the subject (its key names what it owns, or it goes to
    one of its addresses), waiting or failed, is dropped, to whomever it goes; any other
    email of the brand that names it (a sent one, a member's digest) keeps no personal data.
    The race: a sweep that claimed an email a moment before (running) may be sending it;
    deleting its row cannot call it back, and the sweep's outcome then updates nothing."""
    ids, dropped = owned.ids(), 0
    for delivery in _naming(subject.brand_id, ids, needles):
        payload = delivery.payload if isinstance(delivery.payload, dict) else {}
        about = bool(set(KEY_PARTS.split(delivery.idempotency_key)) & ids) or any(
            isinstance(to, str) and needles.text(to) != to for to in payload.get("to", []))
        if about and delivery.state in UNSENT:
            dropped += Delivery.objects.filter(pk=delivery.pk, state__in=UNSENT).delete()[0]
            continue
        scrubbed = needles.scrub(payload)
        if scrubbed != payload:
            Delivery.objects.filter(pk=delivery.pk).update(payload=scrubbed)
    return dropped


def _naming(brand_id: str, ids: frozenset[str], needles: Needles) -> Iterator[Delivery]:
    """The brand's emails whose key holds one of `ids` or whose payload one of the needles,
    each once."""
    conditions = [Q(idempotency_key__contains=each) for each in sorted(ids)] + [
        Q(text__icontains=each) for each in sorted(needles.as_stored())]
    emails = Delivery.objects.filter(brand_id=brand_id, channel=Delivery.Channel.EMAIL).annotate(
        text=Cast("payload", TextField())).only("pk", "idempotency_key", "payload", "state")
    seen: set[str] = set()
    for batch in chunks(conditions, CONDITIONS):
        for delivery in emails.filter(reduce(or_, batch)):
            if delivery.pk not in seen:
                seen.add(delivery.pk)
                yield delivery


def history(subject: Subject, owned: Owned, needles: Needles) -> int:
    """Step 7: the records of the subject, and those its timers' firings wrote (they name the
    timer, not the subject), lose its personal data; so do the copies of those records an
    event left (a receiver's answer, the demo receiver's body), its timers' payloads and
    errors and its walks' trace lines. Answers how many records changed."""
    brand_id = subject.brand_id
    timers = owned.timer_ids(brand_id)
    changed = records(brand_id, _its_records(brand_id, subject.pk, timers), needles)
    for batch in chunks(changed):
        _scrub_rows(WebhookAttempt.objects.filter(brand_id=brand_id, delivery__event__in=batch),
                    needles, text=("response", "error"))
        _scrub_rows(ReceivedWebhook.objects.filter(brand_id=brand_id, webhook_id__in=batch),
                    needles, text=("summary",), json_text=("body",))
    for batch in chunks(timers):
        _scrub_rows(Timer.objects.filter(brand_id=brand_id, pk__in=batch), needles,
                    text=("last_error", "ended_by"), data=("payload",))
        if subject.test_clock_id:  # only a test clock's walks keep trace lines
            _scrub_rows(WalkLine.objects.filter(brand_id=brand_id, timer__in=batch), needles,
                        text=("text",))
    return len(changed)


def _its_records(brand_id: str, subject: str, timers: list[str]) -> Iterator[tuple]:
    """Each record of the subject's, and of its timers' firings, once: id, written, data."""
    fields = ("pk", "written", "data")
    mine = Record.objects.filter(brand_id=brand_id)
    yield from mine.filter(subject=subject).values_list(*fields).iterator(chunk_size=2000)
    for batch in chunks(timers):
        # A firing's records name its timer, not the subject (those the subject has too were
        # read above).
        yield from mine.filter(timer__in=batch).exclude(subject=subject).values_list(*fields)


def _scrub_rows(rows, needles: Needles, *, text: tuple[str, ...] = (),
                json_text: tuple[str, ...] = (), data: tuple[str, ...] = ()) -> None:
    """Each row's fields without the needles: plain `text`, JSON kept as text, JSON `data`;
    a row is written only when one of them changed."""
    fields = (*text, *json_text, *data)
    for values in rows.values("pk", *fields):
        clean = {**{name: needles.text(values[name]) for name in text},
                 **{name: needles.scrub_json_text(values[name]) for name in json_text},
                 **{name: needles.scrub(values[name]) for name in data}}
        changed = {name: value for name, value in clean.items() if value != values[name]}
        if changed:
            rows.model.objects.filter(pk=values["pk"]).update(**changed)
