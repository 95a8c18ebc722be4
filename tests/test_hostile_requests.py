"""Hostile requests to every door of the authorization matrix: none answers a server error,
and none changes anything it refuses. The counts are printed for the operators' notes
(`pytest -s tests/test_hostile_requests.py`)."""

import json

import pytest

from tests.test_authorization import ENDPOINTS, _fill

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

DEEP = '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"
MEGA = "x" * (1024 * 1024)
NOT_OBJECTS = ["[]", '"text"', "1", "null", "true", '{"a":', "\xff\xfe", DEEP, "NaN",
               '{"a": Infinity}', '{"a": "b\\u0000c"}', '{"a\\u0000": 1}']
ODD_VALUES = [None, True, 1.5, -1, 10**30, "", MEGA, "a\x00b", [], {}, [1, [2, [3]]],
              {"nested": {"deeper": [None]}}, "9999-12-31", "0001-01-01", "2026-13-45",
              "2026-06-01T25:00:00Z", "é🕰", "' OR 1=1; --", "../../etc/passwd"]
EXTRA_KEYS = ["_state", "id", "pk", "__class__", "unknown_field"]
PATH_SWAPS = ["%00", "x%00y", "a" * 300, "%C3%A9", "..", "sbj_%00", "-1", "99999999999999999999"]
QUERIES = ["brand=%00", "state=%00", "token=%C3%A9", "from=9999-12-31", "to=0001-01-01",
           "from=garbage", "brand=brd_" + "a" * 300, "state=" + "s" * 5000]


def _bodies(base: dict) -> list[str]:
    bodies = list(NOT_OBJECTS)
    for key in base:
        for value in ODD_VALUES:
            bodies.append(json.dumps({**base, key: value}))
    for key in EXTRA_KEYS:
        bodies.append(json.dumps({**base, key: 1}))
    return bodies


def _paths(path: str) -> list[str]:
    found = []
    for swap in PATH_SWAPS:
        for part in ("{brand}", "{subject}", "{job}", "{clock}", "{test_clock}", "{key}",
                     "{order}", "{code}", "{delivery}"):
            if part in path:
                found.append(path.replace(part, swap, 1))
    return found


def test_no_hostile_request_gets_a_server_error(world, capsys):
    asked, errors = 0, []
    client = world.clients["owner_a"]
    client.raise_request_exception = False  # count every server error, not the first
    for endpoint in ENDPOINTS:
        base = endpoint.body(world, 0) if callable(endpoint.body) else (endpoint.body or {})
        path = _fill(endpoint.path, world, 0)
        query = _fill(endpoint.query, world, 0) if endpoint.query else ""
        tries = []
        if endpoint.method != "get":
            tries += [(path + (f"?{query}" if query else ""), body) for body in _bodies(base)]
        tries += [(_fill(p, world, 0) + (f"?{query}" if query else ""), json.dumps(base))
                  for p in _paths(endpoint.path)]
        tries += [(f"{path}?{q}", json.dumps(base)) for q in QUERIES]
        for url, body in tries:
            if endpoint.method == "get":
                answer = client.get(url)
            else:
                answer = getattr(client, endpoint.method)(url, body,
                                                          content_type="application/json")
            asked += 1
            # A door whose designed answer is a 5xx (the tick's health, 503 while no tick has
            # run) may give that; any other 5xx is an error.
            if answer.status_code >= 500 and answer.status_code != endpoint.expect["owner_a"]:
                errors.append(f"{endpoint.name} {endpoint.method.upper()} {url[:120]} "
                              f"{body[:120]!r}: {answer.status_code}")
    with capsys.disabled():
        print(f"\nhostile requests: {asked} asked, {len(errors)} server errors")
    assert errors == [], "\n".join(errors)
