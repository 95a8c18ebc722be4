import copy
import json
from pathlib import Path

import pytest

from timekeeping import manifests

VENUE = json.loads((Path(__file__).resolve().parents[3] / "timekeeping" / "manifests" /
                    "examples" / "venue.json").read_text())
ORDERS = ["tables", "orders", "states"]


def changed(path, value):
    document = copy.deepcopy(VENUE)
    target = document
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return document


def timed(**changes):
    rule = {**VENUE["tables"]["orders"]["states"]["timed"][0], **changes}
    return changed([*ORDERS, "timed"], [rule])


@pytest.mark.parametrize(
    ("document", "code", "words"),
    [
        (timed(**{"from": "ready", "to": "preparing"}), "timed.undo",
         'the move from "ready" to "preparing" is an undo, which only a person makes'),
        (timed(to="picked_up"), "timed.move_unlisted", "is not one the table lists"),
        (changed([*ORDERS, "timed"], [VENUE["tables"]["orders"]["states"]["timed"][0]] * 2),
         "timed.from_twice", "at most one timed move leaves each state"),
        (changed([*ORDERS, "timed"], [VENUE["tables"]["orders"]["states"]["timed"][0]] * 9),
         "timed.too_many", "at most 8"),
        (timed(at={"column": "pickup_at", "via": "customer"}), "moment.via_in_timed",
         "never via a link"),
        (timed(at={"column": "customer"}), "moment.column_type", "is text"),
        (timed(at={"column": "nowhere"}), "moment.column_unknown", "'nowhere'"),
        (timed(at={"column": "pickup_at", "plus": {"hours": 1}, "minus": {"hours": 1}}),
         "moment.shift_invalid", "not both"),
        (timed(at={"column": "pickup_at", "plus": {"weeks": 1}}), "moment.shift_invalid",
         "exactly one of minutes, hours or days"),
        (timed(at={"column": "pickup_at", "time": "25:00"}), "moment.time_invalid", "'25:00'"),
        (timed(set={"status": "gone"}), "timed.set_invalid", "may not write 'status'"),
        (timed(set={"customer": None}), "timed.set_invalid", "may not be empty"),
        (timed(at={"column": "pickup_at", "or": [{"column": "pickup_at"}] * 4}),
         "moment.or_too_many", "at most 3"),
        (timed(at={"column": "pickup_at", "time": {"table": "orders", "column": "customer"}}),
         "setting.table_invalid", "'orders.customer' is no setting"),
        (changed(["tables", "stays", "states", "timed"], [
            {"from": "booked", "to": "no_show", "at": {"column": "arrive"}}]),
         "moment.date_needs_time", "is a date, which has no clock"),
        (changed(["tables", "orders", "columns"], [{"ref": "id", "type": "text"}]),
         "column.invalid", "(not 'id')"),
        (changed(["tables", "orders", "columns"], [{"ref": "x", "type": "money"}]),
         "column.type_invalid", "one of text"),
    ],
)
def test_it_refuses_each_timed_move_the_rules_forbid(db, brand, document, code, words):
    problems = manifests.check(document)
    found = [p for p in problems if p.code == code]
    assert found, problems
    assert words in found[0].message
    assert "table '" in found[0].message


def test_it_refuses_a_move_that_could_never_pass(db):
    document = copy.deepcopy(VENUE)
    tickets = document["tables"]["tickets"]["states"]
    tickets["moves"]["offered"] = [{"to": "valid", "requires": {"time": {"after": {
        "column": "offer_until", "plus": {"minutes": 30}}}}}, "checked_in"]
    codes = [p.code for p in manifests.check(document)]
    assert "timed.never_passes" in codes


def test_the_example_venue_is_clean():
    assert manifests.check(VENUE) == []
