"""The check of a plan's keys: cycles, amounts, allowances and schedules, each problem named
at its path, and any value giving problems, never an exception."""

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.timekeeping.manifests.test_fuzz import BOUNDED, json_values
from timekeeping.manifests import check
from timekeeping.specs.services import compile_services

from .test_plans import document

PLAN = "$.services.plan"


def _with(change) -> set[tuple[str, str]]:
    found = document()
    change(found["services"]["plan"])
    return {(problem.code, problem.path) for problem in check(found)}


@pytest.mark.parametrize(("change", "found"), [
    (lambda p: p["price"].update(every="1q"), ("price.every_invalid", f"{PLAN}.price.every")),
    (lambda p: p["price"].update(amount=-5), ("price.amount_invalid", f"{PLAN}.price.amount")),
    (lambda p: p["price"].update(amount=99.5), ("price.amount_invalid", f"{PLAN}.price.amount")),
    (lambda p: p["price"].update(currency="usd"),
     ("price.currency_invalid", f"{PLAN}.price.currency")),
    (lambda p: p["price"]["includes"].update(nope=1),
     ("price.includes_unknown", f"{PLAN}.price.includes.nope")),
    (lambda p: p["price"].pop("every"), ("schedule.without_every", f"{PLAN}.on.schedule")),
    (lambda p: p["on"]["schedule"]["monthly"].update(order="nope"),
     ("schedule.order_unknown", f"{PLAN}.on.schedule.monthly.order")),
    (lambda p: p["on"]["schedule"]["monthly"].update(each="decade"),
     ("schedule.each_invalid", f"{PLAN}.on.schedule.monthly.each")),
    (lambda p: p["on"]["schedule"]["monthly"].update(at="1mo past end"),
     ("schedule.at_invalid", f"{PLAN}.on.schedule.monthly.at")),
    (lambda p: p["on"]["schedule"]["monthly"].update(at="10d before nope"),
     ("schedule.at_clock_unknown", f"{PLAN}.on.schedule.monthly.at")),
    (lambda p: p["on"]["schedule"]["monthly"].update(catch_up="some"),
     ("schedule.catch_up_invalid", f"{PLAN}.on.schedule.monthly.catch_up")),
    (lambda p: p["on"]["schedule"]["monthly"].update(when=["x"]),
     ("schedule.when_invalid", f"{PLAN}.on.schedule.monthly.when")),
    (lambda p: p["on"].update(webhook={}), ("on.invalid", f"{PLAN}.on")),
    (lambda p: p["price"].update(final_after="7days"),
     ("price.final_after_invalid", f"{PLAN}.price.final_after")),
    (lambda p: p["price"].update(final_after="7d"),  # a plan: its cycles are charged
     ("price.final_after_without_charge", f"{PLAN}.price.final_after")),
    (lambda p: p["price"].update(dunning="3d"),
     ("price.dunning_invalid", f"{PLAN}.price.dunning")),
    (lambda p: p["price"].update(dunning=["7d", "3d"]),
     ("price.dunning_invalid", f"{PLAN}.price.dunning")),
    (lambda p: p["price"].update(dunning=["3d", "72h"]),  # the same length twice
     ("price.dunning_invalid", f"{PLAN}.price.dunning")),
    (lambda p: p["price"].update(dunning=["3d"] * 11),
     ("price.dunning_invalid", f"{PLAN}.price.dunning")),
    (lambda p: p["price"].update(dunning=["3d"], amount=0),
     ("price.dunning_without_charge", f"{PLAN}.price.dunning")),
    (lambda p: p["on"].update(event={"notice.received": {"order": "nope"}}),
     ("event.order_unknown", f"{PLAN}.on.event.notice.received.order")),
    (lambda p: p["on"].update(event={"Bad Event": {"order": "books"}}),
     ("event.name_invalid", f"{PLAN}.on.event.Bad Event")),
])
def test_each_rule_is_named_at_its_path(change, found):
    assert found in _with(change)


def test_the_example_plan_passes():
    assert check(document()) == []


@BOUNDED
@given(price=json_values, on=json_values)
def test_any_values_give_problems_never_an_exception(price, on):
    found = document()
    found["services"]["plan"]["price"] = price
    found["services"]["plan"]["on"] = on
    if not check(found):
        compile_services(copy.deepcopy(found))


@BOUNDED
@given(schedule=st.dictionaries(st.sampled_from(["order", "each", "at", "catch_up", "when"]),
                                json_values, max_size=5))
def test_any_schedule_gives_problems_never_an_exception(schedule):
    found = document()
    found["services"]["plan"]["on"]["schedule"]["monthly"] = schedule
    if not check(found):
        compile_services(found)
