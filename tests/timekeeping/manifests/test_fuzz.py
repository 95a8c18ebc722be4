"""Property tests of the manifest check: any JSON value, and mutations of the two example
manifests, give a list of problems and never an exception; and whatever passes the check
compiles (DESIGN decision 7: a manifest with any problem is never used, so the check is
the only guard between an upload and the compilers).

Bounded and derandomized, so CI runs the same few hundred documents in a few seconds.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from timekeeping.manifests import Problem, check
from timekeeping.specs.services import compile_services
from timekeeping.specs.tables import compile_tables

EXAMPLES = Path(__file__).resolve().parents[3] / "timekeeping" / "manifests" / "examples"
VENUE = json.loads((EXAMPLES / "venue.json").read_text())
TAX = json.loads((EXAMPLES / "tax.json").read_text())

# Keys the check reads, so random dicts reach past the "unknown key" problems.
KEYS = ("calendar", "services", "tables", "schedules", "settings", "zone", "weekends",
        "holidays", "closed", "closes", "rings_at", "roll", "postpone", "from", "through",
        "to", "where", "notice", "subject", "steps", "clocks", "kind", "key", "period", "of",
        "ends", "input", "default", "then", "title", "due", "each", "owner", "rungs", "moves",
        "hard", "bars", "satisfied_by", "choices", "every", "lives_on", "exposure",
        "guarantee", "date", "after_period", "months", "day", "clock", "days", "function",
        "items", "columns", "states", "emails", "reminders", "holds", "ref", "type",
        "maxLength", "nullable", "references", "values", "rules", "code", "stamp", "length",
        "renew", "on", "column", "initial", "timed", "at", "set", "effects", "create",
        "requires", "time", "after", "before", "late", "moment", "within", "mode", "flag",
        "refuse", "via", "plus", "minus", "or", "hours", "minutes", "edge", "table",
        "weekday", "opens", "open", "undo", "setting", "eq", "when", "link", "lead", "max",
        "fallback", "amount", "currency", "payer", "until", "takes", "gives_back", "body",
        "addMinutes", "run", "changed", "deliver", "price", "scope", "signals", "ask",
        "expires", "task", "hold", "needs_grant", "silent", "goto", "for")
HUGE = (10**12, 10**100, -(10**30), 2**63, 2**31, -1, 0, 1, 3651, 10_001, 1e9, 1e308, -0.0)


def _leaf_values(value: object) -> list:
    if isinstance(value, dict):
        return [leaf for child in value.values() for leaf in _leaf_values(child)]
    if isinstance(value, list):
        return [leaf for child in value for leaf in _leaf_values(child)]
    return [value]


# Values written in the examples ("status", "pickup_at", 16, …), so a mutation often keeps
# a document that passes and reaches the compilers.
NEARBY = sorted({json.dumps(leaf) for leaf in _leaf_values(VENUE) + _leaf_values(TAX)})

scalars = (st.none() | st.booleans() | st.integers() | st.sampled_from(HUGE)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
           | st.sampled_from(KEYS) | st.sampled_from(NEARBY).map(json.loads))
keys = st.sampled_from(KEYS) | st.text(max_size=8)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(keys, children, max_size=4),
    max_leaves=12,
)

BOUNDED = settings(max_examples=300, deadline=None, derandomize=True,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _paths(value: object, here: tuple = ()) -> list[tuple]:
    """Every path into a document (the root is the empty path)."""
    found = [here]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _paths(child, (*here, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _paths(child, (*here, index))
    return found


def _at(document: object, path: tuple) -> object:
    for step in path:
        document = document[step]
    return document


def mutate(document: object, data: st.DataObject) -> object:
    """Replace, delete or insert a value at a random path of the document."""
    path = data.draw(st.sampled_from(_paths(document)), label="path")
    action = data.draw(st.sampled_from(("replace", "delete", "insert")), label="action")
    value = data.draw(json_values, label="value")
    target = _at(document, path)
    if action == "insert" and isinstance(target, dict):
        target[data.draw(keys, label="key")] = value
    elif action == "insert" and isinstance(target, list):
        target.insert(data.draw(st.integers(0, len(target)), label="index"), value)
    elif not path:
        return value if action != "delete" else {}
    elif action == "delete":
        del _at(document, path[:-1])[path[-1]]
    else:
        _at(document, path[:-1])[path[-1]] = value
    return document


def assert_checked(document: object) -> list[Problem]:
    problems = check(document)
    assert isinstance(problems, list)
    assert all(isinstance(problem, Problem) for problem in problems)
    return problems


def assert_compiles_when_clean(document: object) -> None:
    if not assert_checked(document):
        compile_tables(document.get("tables"))
        compile_services(document)


@BOUNDED
@given(document=json_values)
def test_it_answers_any_json_value_with_a_list_of_problems(document):
    assert_checked(document)


@BOUNDED
@given(document=st.dictionaries(st.sampled_from(("calendar", "services", "tables",
                                                 "schedules")), json_values, min_size=1))
def test_it_answers_any_json_value_in_any_section_with_a_list_of_problems(document):
    assert_checked(document)


@BOUNDED
@given(data=st.data(), count=st.integers(1, 3))
def test_it_never_raises_on_a_mutated_venue_and_compiles_what_passes(data, count):
    document = copy.deepcopy(VENUE)
    for _ in range(count):
        document = mutate(document, data)
    assert_compiles_when_clean(document)


@BOUNDED
@given(data=st.data(), count=st.integers(1, 3))
def test_it_never_raises_on_a_mutated_tax_manifest_and_compiles_what_passes(data, count):
    document = copy.deepcopy(TAX)
    for _ in range(count):
        document = mutate(document, data)
    assert_compiles_when_clean(document)


def _deepest_json() -> list:
    """A list nested as deep as json.loads reads it here (one level more raises
    RecursionError): the deepest value an uploaded manifest can hold."""
    depth = 0
    for step in (1024, 512, 256, 128, 64, 32, 16, 8, 4, 2, 1):
        try:
            json.loads("[" * (depth + step) + "]" * (depth + step))
            depth += step
        except RecursionError:
            pass
    return json.loads("[" * depth + "]" * depth)


def test_it_answers_a_value_nested_as_deep_as_json_allows_at_any_place():
    # A sentence that quoted such a value (repr) would raise RecursionError.
    deep = _deepest_json()
    for example in (VENUE, TAX):
        for path in _paths(example)[1:]:
            document = copy.deepcopy(example)
            _at(document, path[:-1])[path[-1]] = deep
            assert_checked(document)
