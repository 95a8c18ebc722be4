"""What any change of a row sets off (SPEC A7): stamps, code renewals and emails.

Column rules, in the manifest:

    {"ref": "link_token", "type": "text", "maxLength": 16, "nullable": true,
     "rules": {"code": {"length": 16, "renew": {"on": {"column": "pending_email",
                                                        "changed": true}}}}}
    {"ref": "offer_until", "type": "timestamptz", "nullable": true,
     "rules": {"stamp": {"on": {"column": "status", "values": ["offered"]},
                         "set": {"addMinutes": {"hours": {"table": "settings",
                                                          "column": "offer_hours"}}}}}}

A code is written when the row is made and renewed when its watched column changes; a stamp is
written when the state enters one of its values (now, or now shifted by `addMinutes`). Emails
come from the table's `emails`: `{"on": {"column": "status", "values": [...]}, "to": {"column":
"email"}, "subject": "…", "body": "… {customer} …"}`, queued in the outbox in the change's
transaction; sample rows send none.
"""

from __future__ import annotations

import secrets
import string
from datetime import UTC, datetime

from timekeeping.moves.moments import shift_by
from timekeeping.timers import outbox

ALPHABET = string.ascii_letters + string.digits


def new_code(length: int) -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(length))


def apply(venue, table: str, row, before: dict | None, now: datetime) -> None:
    """Stamps and codes for a row about to be saved; `before` is None for a new row."""
    spec = venue.raw_table(table)
    for column in spec.get("columns", []):
        rules = column.get("rules") or {}
        if "code" in rules:
            _code(row, column["ref"], rules["code"], before)
        if "stamp" in rules:
            _stamp(venue, row, column["ref"], rules["stamp"], before, now)


def _changed(row, before: dict | None, column: str) -> bool:
    return before is not None and before.get(column) != getattr(row, column, None)


def _code(row, ref: str, rule: dict, before: dict | None) -> None:
    watched = ((rule.get("renew") or {}).get("on") or {}).get("column")
    if before is None and not getattr(row, ref, None):
        setattr(row, ref, new_code(rule.get("length", 16)))
    elif watched and _changed(row, before, watched):
        setattr(row, ref, new_code(rule.get("length", 16)))


def _stamp(venue, row, ref: str, rule: dict, before: dict | None, now: datetime) -> None:
    on = rule.get("on") or {}
    column, values = on.get("column"), on.get("values", [])
    entered = getattr(row, column, None) in values and (
        before is None or before.get(column) != getattr(row, column, None))
    if not entered:
        return
    value = now
    add = (rule.get("set") or {}).get("addMinutes")
    if add:
        value = shift_by(now, add, 1, venue.reader())
    setattr(row, ref, value)


def emails(venue, table: str, row, before: dict | None, *, sample: bool) -> int:
    """Queue the emails that watch this change; none for sample rows."""
    if sample:
        return 0
    queued = 0
    for number, spec in enumerate(venue.raw_table(table).get("emails", []), start=1):
        on = spec.get("on") or {}
        column = on.get("column")
        now_value = getattr(row, column, None)
        if now_value not in on.get("values", []) or (before or {}).get(column) == now_value:
            continue
        queued += send(venue, row, spec,
                       key=f"{venue.link.pk}:{table}:{row.pk}:email{number}:{now_value}")
    return queued


def send(venue, row, spec: dict, *, key: str) -> bool:
    """Queue a row's email (a state-change email or a reminder): to the address in the
    spec's `to` column, its subject and body filled from the row. False with no address."""
    to = getattr(row, (spec.get("to") or {}).get("column", ""), None)
    if not to:
        return False
    fields = _Safe({f.name: getattr(row, f.name) for f in row._meta.fields})
    subject, body = spec["subject"].format_map(fields), spec.get("body", "").format_map(fields)
    world = getattr(venue, "test_clock_id", None)
    if world is not None:
        # A rehearsal's email: to the brand's owner only, its subject saying it is a
        # practice run, keyed apart from the live row's of the same number.
        outbox.tell(brand=venue.link.brand, test_clock_id=world, to=[to], subject=subject,
                    body=body, key=f"{world}:{key}")
        return True
    outbox.enqueue_email(brand=venue.link.brand, to=[to], subject=subject, body=body, key=key)
    return True


class _Safe(dict):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


FAR = datetime(9999, 12, 31, tzinfo=UTC)


def hold_reference(venue, table: str, row, number: int) -> str:
    return f"{venue.link.pk}:{table}:{row.pk}:hold{number}"


def holds(venue, table: str, row, before: dict | None, *, at: datetime, sample: bool) -> None:
    """Money held by a row (A13), through the ledger:

        "holds": [{"on": "placed", "amount": {"column": "total"}, "currency": "GBP",
                   "payer": {"column": "customer"}, "until": <moment>,
                   "takes": ["picked_up"], "gives_back": ["cancelled"]}]

    Entering `on` holds the amount until the moment; entering a `takes` state earns it;
    entering a `gives_back` state returns it. A hold nobody finishes is given back by the
    job at its moment. Sample rows hold nothing, nor do a rehearsal's (the ledger is live
    money)."""
    from money import ledger

    states = venue.raw_table(table).get("states") or {}
    column = states.get("column")
    entered = getattr(row, column, None) if column else None
    rehearsed = getattr(venue, "test_clock_id", None) is not None
    if sample or rehearsed or entered is None or (before is not None
                                                  and before.get(column) == entered):
        return
    for number, spec in enumerate(venue.raw_table(table).get("holds", []), start=1):
        reference = hold_reference(venue, table, row, number)
        if entered == spec.get("on"):
            amount = getattr(row, spec["amount"]["column"], None)
            payer = getattr(row, spec["payer"]["column"], None)
            if not isinstance(amount, int) or amount <= 0 or not payer:
                continue
            until = venue.moment(row, spec["until"]) or FAR  # no moment: never given back alone
            ledger.hold(brand=venue.link.brand_id, reference=reference,
                        payer=f"{venue.link.brand.slug}:{payer}", amount=amount,
                        currency=spec["currency"], until=until, at=at)
        elif entered in spec.get("takes", []):
            ledger.take(reference, brand=venue.link.brand_id, at=at,
                        to=f"{venue.link.brand.slug}:earned")
        elif entered in spec.get("gives_back", []):
            ledger.give_back(reference, brand=venue.link.brand_id, at=at)
