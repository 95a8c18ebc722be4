"""The check of a Service's own time (`price`, `deliver`, `scope`, `signals`): every problem
at once with its code and path, never an exception, and what passes compiles."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.timekeeping.manifests.test_fuzz import BOUNDED, json_values
from timekeeping.manifests import check
from timekeeping.specs.services import compile_services

from .test_work import manifest

SERVICE = "$.services.work"


def _codes(**service) -> set[tuple[str, str]]:
    return {(problem.code, problem.path) for problem in check(manifest(**service))}


@pytest.mark.parametrize(("service", "found"), [
    ({"price": {"within": "5d before nope"}},
     ("deadline.clock_unknown", f"{SERVICE}.price.within")),
    ({"price": {"within": "0d"}}, ("deadline.within_invalid", f"{SERVICE}.price.within")),
    ({"price": {"within": "3651d"}}, ("deadline.within_invalid", f"{SERVICE}.price.within")),
    ({"price": {"within": "30d", "late": "20"}}, ("price.late_invalid", f"{SERVICE}.price.late")),
    ({"price": {"late": "20%"}}, ("price.late_without_within", f"{SERVICE}.price.late")),
    ({"price": {"usd": 1}}, ("price.key_unknown", f"{SERVICE}.price.usd")),
    ({"deliver": {"file": {}}}, ("deliver.step_twice", f"{SERVICE}.deliver.file")),
    ({"deliver": {"org": {"ask": "owner"}}},
     ("deliver.expires_missing", f"{SERVICE}.deliver.org.expires")),
    ({"deliver": {"org": {"ask": "somebody", "expires": "2d"}}},
     ("deliver.ask_invalid", f"{SERVICE}.deliver.org.ask")),
    ({"deliver": {"org": {"ask": "owner", "expires": "2d", "task": True}}},
     ("deliver.ask_and_task", f"{SERVICE}.deliver.org.task")),
    ({"deliver": {"org": {"hold": "2d"}}},
     ("deliver.hold_without_task", f"{SERVICE}.deliver.org.hold")),
    ({"deliver": {"a": {"after": ["b"]}, "b": {"after": ["a"]}}},
     ("deliver.after_loop", f"{SERVICE}.deliver.a.after")),
    ({"deliver": {"a": {"after": ["zz"]}}},
     ("deliver.after_unknown", f"{SERVICE}.deliver.a.after[0]")),
    ({"deliver": {"a": {"needs_grant": True}}},
     ("deliver.needs_grant_without_scope", f"{SERVICE}.deliver.a.needs_grant")),
    ({"deliver": {"Bad Name": {}}}, ("step.name_invalid", f"{SERVICE}.deliver.Bad Name")),
    ({"scope": {}}, ("scope.for_missing", f"{SERVICE}.scope.for")),
    ({"scope": {"for": "1y"}}, ("scope.for_invalid", f"{SERVICE}.scope.for")),
    ({"signals": {"q": {"silent": "14d", "goto": "nowhere"}}},
     ("signal.goto_unknown", f"{SERVICE}.signals.q.goto")),
    ({"signals": {"q": {"silent": "-1d", "goto": "file"}}},
     ("signal.silent_invalid", f"{SERVICE}.signals.q.silent")),
])
def test_each_rule_is_named_at_its_path(service, found):
    assert found in _codes(**service)


def test_every_problem_comes_at_once():
    codes = {code for code, _ in _codes(price={"within": "x", "late": 5},
                                        scope={"for": "x"},
                                        signals={"q": {"silent": "x", "goto": "x"}})}
    assert codes == {"deadline.within_invalid", "price.late_invalid", "scope.for_invalid",
                     "signal.silent_invalid", "signal.goto_unknown"}


def test_a_deliver_step_is_a_step_for_rungs_then_and_signals():
    assert _codes(deliver={"org": {"ask": "owner", "expires": "180d"}},
                  steps={"file": {"then": ["org"]}},
                  signals={"q": {"silent": "14d", "goto": "org"}}) == set()


@BOUNDED
@given(section=st.sampled_from(("price", "deliver", "scope", "signals")), value=json_values)
def test_any_value_in_a_work_section_gives_problems_never_an_exception(section, value):
    document = manifest(**{section: value})
    problems = check(document)
    assert all(problem.path.startswith(SERVICE) for problem in problems)
    if not problems:
        compile_services(copy.deepcopy(document))


@BOUNDED
@given(step=json_values, within=json_values, expires=json_values)
def test_any_values_in_a_step_to_deliver_give_problems_never_an_exception(step, within,
                                                                          expires):
    body = step if isinstance(step, dict) else {}
    document = manifest(deliver={"org": {**body, "within": within, "expires": expires,
                                         "ask": "owner"}})
    if not check(document):
        compile_services(document)
