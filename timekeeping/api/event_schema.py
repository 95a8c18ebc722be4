"""The event catalogue in the OpenAPI schema (issue 30, docs/events.md): one OpenAPI 3.1
`webhook` per event type, its body the envelope (`EventOut`, as the events API lists it) with
the `type` fixed and the shape of its `data`: `kind`, the record kind that made it, and the
fields records of that kind carry. Within version 1 fields may be added, so each `data` allows
more than it names.

`webhooks` is drf-spectacular's postprocessing hook, registered in the settings
(`SPECTACULAR_SETTINGS["POSTPROCESSING_HOOKS"]`) after its own enum hook.
"""

from __future__ import annotations

from timekeeping.webhooks import catalogue

ID = {"type": "string", "description": "a public id"}
TEXT = {"type": "string"}
INSTANT = {"type": "string", "format": "date-time"}
DUE = {"type": "string", "description": "a day (YYYY-MM-DD), or an instant for a date due at "
                                        "a time"}
WHOLE = {"type": "integer"}
NUMBER = {"type": "number"}
FLAG = {"type": "boolean"}
LIST = {"type": "array"}
MONEY = {"type": "integer", "description": "in the currency's minor unit (cents)"}

DATE_LINE = {"clock": ID, "name": TEXT, "item": TEXT}  # every record of a clock's date
DEADLINE = {"deadline": ID}
# The fields of each record kind that is an event, beside `kind`.
FIELDS: dict[str, dict[str, dict]] = {
    "clock.notice": {**DATE_LINE, "rung": TEXT, "due": DUE},
    "clock.escalated": {**DATE_LINE, "rung": TEXT, "due": DUE},
    "deadline.at_risk": {**DEADLINE, "step": TEXT, "ends": INSTANT, "work_left": TEXT},
    "clock.satisfied": {**DATE_LINE, "by": TEXT, "due": DUE, "late": FLAG},
    "deadline.met": {**DEADLINE, "step": TEXT, "on_time": FLAG},
    "clock.lapsed": {**DATE_LINE, "due": DUE, "hard": FLAG, "bars": LIST, "choices": LIST},
    "deadline.late": {**DEADLINE, "step": TEXT, "ends": INSTANT, "late_price": TEXT},
    "clock.moved": {**DATE_LINE, "by": TEXT, "from": DUE, "to": DUE, "rolled_from": DUE,
                    "notice": TEXT},
    "deadline.moved": {**DEADLINE, "from": INSTANT, "to": INSTANT, "follows": TEXT},
    "clock.lapse_withdrawn": {**DATE_LINE, "by": TEXT, "notice": TEXT, "postponement": ID,
                              "lapse": ID, "due": DUE, "to": DUE},
    "job.opened": {"service": TEXT, "period": TEXT, "by": TEXT, "bundle": TEXT,
                   "brand_plan": TEXT},
    "job.ended": {}, "job.accepted": {"at": INSTANT}, "job.cancelled": {}, "job.lapsed": {},
    "ask.opened": {"ask": ID, "step": TEXT, "purpose": TEXT, "party": TEXT,
                   "expires": INSTANT},
    "ask.answered": {"ask": ID, "step": TEXT, "by": TEXT},
    "ask.expired": {"ask": ID, "expiry": WHOLE, "opens_until": INSTANT},
    "ask.lapsed": {"ask": ID, "expiry": WHOLE},
    "deadline.held": {**DEADLINE, "by": ID, "work_left": TEXT},
    "deadline.released": {**DEADLINE, "work_left": TEXT, "ends": INSTANT},
    "cycle.renewed": {"cycle": WHOLE, "charge": TEXT, "amount": MONEY, "currency": TEXT,
                      "owed": INSTANT},
    "subscription.paid": {"amount": MONEY, "currency": TEXT, "by": TEXT, "paid_through": WHOLE,
                          "owed": MONEY},
    "renewal.unpaid": {"cycle": WHOLE, "attempt": WHOLE, "owed": MONEY, "next_try": INSTANT},
    "subscription.cancelling": {"by": TEXT, "ends": DUE},
    "subscription.ended": {"after_cycle": WHOLE, "by": TEXT, "why": TEXT},
    "subject.erased": {"by": TEXT, "jobs": WHOLE, "plans": WHOLE, "dates": WHOLE,
                       "timers": WHOLE, "invitations": WHOLE, "customers": WHOLE,
                       "accounts": WHOLE, "emails": WHOLE, "records": WHOLE},
    "schedule.failed": {"schedule": TEXT, "run": ID, "reason": TEXT, "attempts": WHOLE,
                        "next_due": {**INSTANT, "type": ["string", "null"]}},
    "schedule.recovered": {"schedule": TEXT, "run": ID, "reason": TEXT},
    "row.moved": {"table": TEXT, "row": {}, "from": TEXT, "to": TEXT, "by": TEXT, "who": TEXT},
    "row.set_aside": {"table": TEXT, "row": {}, "rule": WHOLE, "code": TEXT, "until": INSTANT},
    "timer.late": {"timers": WHOLE, "owed_from": INSTANT, "latest_by_s": NUMBER},
    "timer.parked": {"timer_kind": TEXT, "key": TEXT, "owner": TEXT, "attempts": WHOLE,
                     "error": TEXT},
    "connection.parked": {"connection": TEXT, "attempts": WHOLE, "error": TEXT},
    "schedule.parked": {"schedule": TEXT, "schedule_id": ID, "run": ID, "attempts": WHOLE,
                        "error": TEXT},
    "tick.stopped": {"since": INSTANT, "until": INSTANT, "stopped_s": NUMBER},
}
HEADERS = [
    ("webhook-id", "The event's id: the same on every attempt and resend, so a receiver "
                   "can drop one it has."),
    ("webhook-timestamp", "When it was signed, in seconds since 1970 (UTC)."),
    ("webhook-signature", "`v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` with the "
                          "endpoint's secret; during a rotation, two, separated by a space."),
]


def data_of(event: catalogue.EventType) -> dict:
    """The shape of an event type's `data`: one of its record kinds' shapes."""
    shapes = [{"type": "object", "required": ["kind"], "additionalProperties": True,
               "properties": {"kind": {"const": kind}, **FIELDS.get(kind, {})}}
              for kind in event.kinds]
    return shapes[0] if len(shapes) == 1 else {"oneOf": shapes}


def _webhook(event: catalogue.EventType, component: str) -> dict:
    return {"post": {
        "operationId": f"webhook_{event.name.replace('.', '_')}",
        "summary": event.name, "description": event.says, "tags": ["events"],
        "parameters": [{"name": name, "in": "header", "required": True,
                        "schema": {"type": "string"}, "description": said}
                       for name, said in HEADERS],
        "requestBody": {"required": True, "content": {"application/json": {
            "schema": {"$ref": f"#/components/schemas/{component}"}}}},
        "responses": {"2XX": {"description": "Received. Any other answer, or none within 15 "
                                             "seconds, is tried again; 410 turns the "
                                             "endpoint off."}},
    }}


def webhooks(result: dict, generator, request, public) -> dict:
    """drf-spectacular's postprocessing hook: the catalogue's types as `webhooks`."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    hooks = result.setdefault("webhooks", {})
    for event in catalogue.TYPES:
        component = "Event_" + event.name.replace(".", "_")
        schemas[component] = {"allOf": [
            {"$ref": "#/components/schemas/EventOut"},
            {"type": "object", "properties": {"type": {"const": event.name},
                                              "data": data_of(event)}}]}
        hooks[event.name] = _webhook(event, component)
    return result
