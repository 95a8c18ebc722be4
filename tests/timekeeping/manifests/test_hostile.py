"""Hostile manifests: each example mutated at one place (SQL in a number, quotes in a name,
look-alike letters, huge numbers, a value of the wrong shape) is refused by the check with a
problem at exactly that place, and never raises. The tables section becomes DDL, so a name
or number the check lets through reaches the database (DESIGN decisions 7 and 8)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from timekeeping.manifests import check

EXAMPLES = Path(__file__).resolve().parents[3] / "timekeeping" / "manifests" / "examples"
VENUE = json.loads((EXAMPLES / "venue.json").read_text())
TAX = json.loads((EXAMPLES / "tax.json").read_text())

# Bases that use forms the examples leave out: a schedule, a postponement, a fixed date and a
# date read from another clock. Each is clean (test_it_keeps_the_examples_clean).
SCHEDULED = {**VENUE, "schedules": {"demo": {"beat": {"every": "1m", "run": "heartbeat"}}}}
POSTPONED = copy.deepcopy(TAX)
POSTPONED["calendar"]["postpone"] = [{"from": "2028-04-15", "through": "2028-04-17",
                                      "to": "2028-05-15", "notice": "IR-2028-01"}]
DATED = copy.deepcopy(TAX)
DATED["services"]["annual-return"]["clocks"]["credit-expiry"]["due"] = {"clock": "file",
                                                                        "days": -30}
DATED["services"]["annual-return"]["clocks"]["refund-window"]["due"] = {"date": "2031-04-15"}

DELETE = object()


class Rename:
    def __init__(self, to: str) -> None:
        self.to = to


def mutated(base: dict, path: list, value: object) -> dict:
    document = copy.deepcopy(base)
    target = document
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    elif isinstance(value, Rename):
        target[value.to] = target.pop(path[-1])
    else:
        target[path[-1]] = value
    return document


def where(path: list, value: object = None) -> str:
    """The JSON path of a mutated place, as the check writes it."""
    if isinstance(value, Rename):
        path = [*path[:-1], value.to]
    text = "$"
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else f".{key}"
    return text


ORDERS = ["tables", "orders"]
TICKETS = ["tables", "tickets"]
STAYS = ["tables", "stays"]
TIMED = [*ORDERS, "states", "timed", 0]
LATE = [*STAYS, "states", "late", 0]
HOURS = [*TIMED, "at", "time", "hours"]
CHECK_IN = [*TICKETS, "states", "moves", "valid", 1, "requires"]
REMINDER = [*ORDERS, "reminders", 0]
HOLD = [*ORDERS, "holds", 0]
CODE = [*TICKETS, "columns", 2, "rules", "code"]
FILE = ["services", "annual-return", "clocks", "file"]
STEPS = ["services", "annual-return", "steps"]

INJECTED = "20) ; DROP TABLE x; --"
QUOTED = 'status" text); ALTER USER postgres WITH SUPERUSER; --'
HOSTILE_NAMES = [
    'status"', "status'", "status;", "status--", "status/*", "stat us", "Status", "STATUS",
    "stаtus",  # a Cyrillic 'а'
    "ｓｔａｔｕｓ",  # fullwidth letters
    "status\n", "_status", "1status", "s" * 42, "", "status__at", "status_", "sta\x00tus",
]

CASES = [
    # 1. maxLength goes into CREATE TABLE: a whole number from 1 to 10,000, nothing else.
    *[(VENUE, [*ORDERS, "columns", 3, "maxLength"], value, "column.max_length_invalid")
      for value in (INJECTED, "20", -1, 0, True, 1e9, 20.0, 10**12, 10_001, None, [20])],
    # 2. the state column reaches DDL: the strict name pattern, not 'id', text or enum.
    (VENUE, [*ORDERS, "states", "column"], QUOTED, "states.column_invalid"),
    (VENUE, [*ORDERS, "states", "column"], "id", "states.column_invalid"),
    (VENUE, [*ORDERS, "states", "column"], "total", "states.column_invalid"),
    (VENUE, [*ORDERS, "states", "column"], 5, "states.column_invalid"),
    *[(VENUE, [*ORDERS, "states", "column"], name, "states.column_invalid")
      for name in HOSTILE_NAMES],
    # 3. every other name that can reach SQL.
    *[(VENUE, STAYS, Rename(name), "table.name_invalid") for name in HOSTILE_NAMES if name],
    *[(VENUE, [*ORDERS, "columns", 0, "ref"], name, "column.invalid")
      for name in [*HOSTILE_NAMES, "id", "pk", "save", "objects", 7]],
    (VENUE, [*ORDERS, "columns", 1, "ref"], "customer", "column.ref_twice"),
    *[(VENUE, ["tables", "order_lines", "columns", 0, "references"], value,
       "column.references_unknown") for value in ("orders;--", "Orders", "nowhere", 5,
                                                  ["orders"])],
    *[(VENUE, ["tables", "opening_hours", "columns", 0, "values", 1], value,
       "column.values_invalid") for value in ("", "v" * 65, "tu\x00e", 5, None, ["tue"])],
    (VENUE, ["tables", "opening_hours", "columns", 0, "values"], [f"v{n}" for n in range(101)],
     "column.values_invalid"),
    (VENUE, ["tables", "opening_hours", "columns", 0, "values"], "mon", "column.values_invalid"),
    *[(VENUE, [*ORDERS, "states", "effects", 0, "table"], value, "effect.table_invalid")
      for value in ("order_lines;--", "Order_lines", "nowhere", "settings", ["order_lines"])],
    *[(VENUE, [*ORDERS, "states", "effects", 0, "link"], value, "effect.link_invalid")
      for value in ('order_id"', "nowhere", "item", {"x": 1})],
    *[(VENUE, [*HOURS, "table"], value, "hours.table_invalid")
      for value in ("opening_hours; DROP TABLE x", "nowhere", 5)],
    *[(VENUE, [*HOURS, key], value, "hours.column_invalid")
      for key in ("weekday", "opens", "closes", "open")
      for value in ('weekday"', "nowhere", "Weekday", ["weekday"])],
    *[(VENUE, [*STAYS, "states", "timed", 0, "at", "time", "table"], value,
       "setting.table_invalid") for value in ("settings'", "nowhere", "stays", ["settings"])],
    *[(VENUE, [*STAYS, "states", "timed", 0, "at", "time", "column"], value,
       "setting.column_invalid") for value in ("no_show_at;", "nowhere", None, 5)],
    (VENUE, [*LATE, "within", "hours", "column"], "nowhere", "setting.column_invalid"),
    (VENUE, [*CHECK_IN, "setting", 0, "column"], "door_on--", "setting.column_invalid"),
    (VENUE, [*CHECK_IN, "setting", 0, "table"], "tickets", "setting.table_invalid"),
    (VENUE, [*REMINDER, "lead", "hours", "column"], "reminder_hours'", "setting.column_invalid"),
    *[(VENUE, [*TIMED, "set", key], "x", "timed.set_invalid")
      for key in ('cancel_code"', "cancel_code;--", "status", "nowhere", "Cancel_code")],
    *[(VENUE, [*LATE, "flag"], value, "late.flag_invalid")
      for value in ("late_cancel;", "nowhere", "Late_cancel", "guest", ["late_cancel"])],
    *[(VENUE, [*REMINDER, "to", "column"], value, "reminder.to_invalid")
      for value in ('email"', "nowhere", 5)],
    (VENUE, [*ORDERS, "emails", 0, "to", "column"], "email;--", "email.to_invalid"),
    (VENUE, [*ORDERS, "emails", 0, "on", "column"], "nowhere", "email.on_invalid"),
    *[(VENUE, [*ORDERS, "emails", 0, "subject"], text, "email.text_invalid")
      for text in ("{customer.__class__}", "{0}", "{}", "{customer!r}", "oops {", None)],
    (VENUE, [*REMINDER, "body"], "{pickup_at:%H:%M}", "reminder.text_invalid"),
    *[(VENUE, [*HOLD, key, "column"], value, f"hold.{key}_invalid")
      for key in ("amount", "payer") for value in ("total;", "nowhere", ["total"])],
    (VENUE, [*HOLD, "amount", "column"], "customer", "hold.amount_invalid"),
    (VENUE, [*HOLD, "currency"], "ÄÖÜ", "hold.currency_invalid"),
    (VENUE, [*HOLD, "on"], ["placed"], "hold.state_invalid"),
    (VENUE, [*TIMED, "at", "column"], 'pickup_at"', "moment.column_unknown"),
    (VENUE, [*CHECK_IN, "time", "after", "column"], "doors_at;", "moment.column_unknown"),
    (VENUE, [*REMINDER, "at", "via"], "order_id", "moment.via_invalid"),
    (VENUE, [*TICKETS, "columns", 2, "rules", "code", "renew", "on", "column"], "nowhere",
     "column.code_invalid"),
    (VENUE, [*TICKETS, "columns", 3, "rules", "stamp", "on", "column"], "nowhere",
     "column.stamp_invalid"),
    *[(VENUE, [*ORDERS, "states", "moves", "placed", 0], value, "states.move_invalid")
      for value in (5, "", "x" * 65, None, {"undo": True}, ["confirmed"])],
    (VENUE, [*ORDERS, "states", "initial"], "x" * 65, "states.initial_unknown"),
    (SCHEDULED, ["schedules", "demo", "beat"], Rename("Beat;--"), "schedule.item_invalid"),
    (SCHEDULED, ["schedules", "demo"], Rename("d" * 70), "schedule.item_invalid"),
    (TAX, [*STEPS, "amend"], Rename("a" * 65), "step.name_invalid"),
    (TAX, ["services", "annual-return"], Rename("annual-return\n"), "service.name_invalid"),
    (TAX, [*FILE, "title"], "x" * 201, "clock.title_invalid"),
    (TAX, [*FILE, "title"], "{period}" * 9, "clock.title_invalid"),
    (TAX, ["services", "annual-return", "subject", "kind"], "k" * 65, "service.subject_invalid"),
    # 4. numbers.
    *[(VENUE, [*CODE, "length"], value, "column.code_length_invalid")
      for value in (1, 11, 17, 65, True, "16", 16.0, 10**12)],
    *[(VENUE, [*CHECK_IN, "time", "after", "minus", "minutes"], value, "moment.shift_invalid")
      for value in (5_256_001, True, -1, 1.5, "30", None)],
    (VENUE, [*HOLD, "until", "plus", "hours"], 87_601, "moment.shift_invalid"),
    (VENUE, [*STAYS, "states", "timed", 0, "at", "plus", "days"], 3_651,
     "moment.shift_invalid"),
    (VENUE, [*STAYS, "states", "timed", 0, "at", "plus", "days"], 10**12,
     "moment.shift_invalid"),
    (VENUE, [*LATE, "within", "hours"], 87_601, "moment.shift_invalid"),
    (VENUE, [*TICKETS, "columns", 3, "rules", "stamp", "set", "addMinutes", "hours"], 87_601,
     "moment.shift_invalid"),
    *[(VENUE, [*REMINDER, "lead", key], value, "reminder.lead_invalid")
      for key in ("hours", "max") for value in (8_761, -1, True, "48", 4.5)],
    *[(TAX, [*FILE, "rungs", 0], text, "clock.rung_invalid")
      for text in ("notice 3651d", "notice " + "9" * 5000 + "d", "escalate 99999d", 90,
                   "notice 90d" + " " * 100)],
    *[(TAX, [*FILE, "every"], text, "clock.every_invalid")
      for text in ("1000000y", "101d", "9" * 5000 + "d", 3)],
    *[(SCHEDULED, ["schedules", "demo", "beat", "every"], text, "schedule.every_invalid")
      for text in ("9999999999d", "367d", "9" * 5000 + "s", "1m\n", 60)],
    *[(TAX, [*FILE, "due", "after_period"], value, "clock.due_invalid")
      for value in ({"months": 121, "day": 15}, {"months": -1, "day": 15},
                    {"months": True, "day": 15}, {"months": 4, "day": 0},
                    {"months": 4, "day": True}, {"months": 4.0, "day": 15})],
    *[(DATED, ["services", "annual-return", "clocks", "credit-expiry", "due", "days"], value,
       "clock.due_invalid") for value in (3_651, -3_651, True, 1.5, 10**12)],
    *[(DATED, ["services", "annual-return", "clocks", "refund-window", "due", "date"], value,
       "clock.due_invalid") for value in ("2201-01-01", "1899-12-31", "2028-02-30",
                                          "20310415", 20310415, None)],
    *[(POSTPONED, ["calendar", "postpone", 0, key], value, "calendar.postpone_invalid")
      for key in ("from", "through", "to")
      for value in ("2201-01-01", "0001-01-01", "2028-13-01", ["2028-04-15"])],
    (POSTPONED, ["calendar", "postpone", 0, "notice"], "n" * 501, "calendar.postpone_invalid"),
    (TAX, ["calendar", "zone"], "a" * 300, "calendar.zone_invalid"),
    (TAX, ["calendar", "zone"], ["America/New_York"], "calendar.zone_invalid"),
    (TAX, ["calendar", "zone"], "Europe", "calendar.zone_invalid"),  # a directory of zones
    (TAX, ["calendar", "closes"], "23:59" + " " * 10, "calendar.time_invalid"),
    # 5. values of the wrong shape, which made the check raise.
    (VENUE, [*ORDERS, "holds"], {"on": "placed"}, "hold.invalid"),
    (VENUE, [*ORDERS, "holds"], 3, "hold.invalid"),
    (VENUE, [*ORDERS, "columns", 1], "email", "column.invalid"),
    (VENUE, [*ORDERS, "columns"], None, "column.invalid"),
    (VENUE, [*ORDERS, "states", "timed"], {"from": "placed"}, "timed.invalid"),
    (VENUE, [*ORDERS, "states", "effects"], 1, "effect.invalid"),
    (VENUE, [*ORDERS, "states", "late"], "x", "late.invalid"),
    (VENUE, [*ORDERS, "states", "create"], ["requires"], "states.create_invalid"),
    (VENUE, [*TICKETS, "columns", 2, "rules"], ["code"], "column.rules_invalid"),
    (VENUE, [*REMINDER, "lead"], "48", "reminder.lead_invalid"),
    (VENUE, [*LATE, "to"], ["x"], "late.move_unlisted"),
    (VENUE, [*LATE, "from"], "booked", "late.invalid"),
    (VENUE, [*LATE, "from"], None, "late.invalid"),
    (VENUE, [*TIMED, "from"], ["placed"], "timed.invalid"),
    (VENUE, [*TIMED, "at"], ["pickup_at"], "moment.invalid"),
    (VENUE, [*TIMED, "at", "or"], 5, "moment.or_invalid"),
    (VENUE, [*TIMED, "set"], ["cancel_code"], "timed.set_invalid"),
    (VENUE, [*TIMED, "set", "cancel_code"], {"x": 1}, "timed.set_invalid"),
    (VENUE, [*CHECK_IN, "time"], ["after"], "states.move_invalid"),
    (VENUE, [*CHECK_IN, "setting"], {"table": "settings"}, "states.move_invalid"),
    (VENUE, ["tables", "settings", "settings"], "yes", "table.settings_invalid"),
    (VENUE, [*ORDERS, "columns", 1, "nullable"], "true", "column.nullable_invalid"),
    (TAX, [*FILE, "each"], ["jurisdictions"], "clock.each_invalid"),
    (TAX, [*FILE, "rungs"], "notice 90d", "clock.rungs_invalid"),
    (TAX, [*FILE, "rungs"], None, "clock.rungs_invalid"),
    (TAX, [*FILE, "bars"], None, "clock.bars_invalid"),
    (TAX, [*FILE, "satisfied_by", 0], ["file"], "clock.satisfied_by_unknown"),
    (TAX, [*FILE, "moves", "extend", "items", "US-CA", "items"], {}, "clock.due_invalid"),
    (TAX, [*FILE, "hard"], "no", "clock.hard_invalid"),
    (TAX, [*STEPS, "tentative", "then"], "extend", "step.then_invalid"),
    (TAX, [*STEPS, "tentative", "then", 0], ["extend"], "step.then_unknown"),
    (TAX, ["services", "annual-return", "subject", "period", "ends"], {"default": 1231},
     "service.period_invalid"),
    (TAX, ["services", "annual-return", "subject", "period", "ends"], {"input": ["year_end"]},
     "service.period_invalid"),
    (TAX, ["services", "annual-return", "subject", "period", "ends"], "99999999999999999999-1",
     "service.period_invalid"),
    (TAX, ["calendar", "holidays"], [["US", ["DC"]]], "calendar.holidays_invalid"),
    (TAX, ["calendar", "postpone"], 5, "calendar.postpone_invalid"),
    (DATED, ["services", "annual-return", "clocks", "credit-expiry", "due", "clock"], ["file"],
     "clock.due_clock_unknown"),
]


@pytest.mark.parametrize(("base", "path", "value", "code"), CASES)
def test_it_refuses_a_hostile_value_at_exactly_its_place(base, path, value, code):
    problems = check(mutated(base, path, value))
    assert (code, where(path, value)) in [(p.code, p.path) for p in problems], problems


@pytest.mark.parametrize("base", [VENUE, TAX, SCHEDULED, POSTPONED, DATED])
def test_it_keeps_the_examples_clean(base):
    assert check(base) == []


def test_it_names_the_table_column_and_rule_in_each_sentence():
    problems = check(mutated(VENUE, [*ORDERS, "columns", 3, "maxLength"], INJECTED))
    [problem] = [p for p in problems if p.code == "column.max_length_invalid"]
    assert "table 'orders', column 'cancel_code'" in problem.message
    assert "1 to 10,000" in problem.message
