"""Hostile requests to every door of the authorization matrix: none answers a server error,
and none changes anything it refuses. The counts are printed for the operators' notes
(`pytest -s tests/test_hostile_requests.py`)."""

import json

import pytest

from tests.test_authorization import ENDPOINTS, _fill
from tests.world import DOORS_HOOK, webhook
from timekeeping.models import WebhookEndpoint

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
                     "{order}", "{code}", "{delivery}", "{webhook}", "{parked}",
                     "{schedule}"):
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


HOOK = "https://hooks.example.test/in"
# Each answered 400 naming what is wrong, never a server error, and nothing made.
WEBHOOK_BODIES = [
    json.dumps({"url": HOOK, "types": ["job.opened"] * 10_000}),
    json.dumps({"url": HOOK, "types": ["x" * 100_000]}),
    json.dumps({"url": HOOK + "a" * 3000}),
    json.dumps({"url": HOOK, "description": MEGA}),
    '{"url": "https://hooks.example.test/\\ud800"}',
    '{"url": "' + HOOK + '", "description": "half \\udfff a pair"}',
    '{"url": "' + HOOK + '", "types": ["job.opened\\ud83d"]}',
    '{"url": NaN}', '{"url": "' + HOOK + '", "enabled": Infinity}',
    '{"url": "' + HOOK + '", "enabled": 1e400}', '{"url": "' + HOOK + '", "types": [-Infinity]}',
    json.dumps({"url": HOOK, "types": "job.opened"}), json.dumps({"url": [HOOK]}),
    json.dumps({"url": "https://" + "a" * 300 + ".test/"}),
    json.dumps({"url": "https://[::ffff:169.254.169.254]/"}),
    json.dumps({"url": "https://xn--/"}), json.dumps({"url": "https://\u00e9\ud7ff.test:99999/"}),
]
REPLAY_BODIES = [
    '{"since": NaN, "until": "2026-12-02T00:00:00Z"}',
    '{"since": 1e400, "until": "2026-12-02T00:00:00Z"}',
    json.dumps({"since": "2026-12-01T00:00:00Z", "until": "9" * 100_000}),
    '{"since": "2026-12-01T00:00:00\\ud800", "until": "2026-12-02T00:00:00Z"}',
    json.dumps({"since": "0001-01-01T00:00:00+14:00", "until": "9999-12-31T23:59:59-14:00"}),
    json.dumps({"since": ["2026-12-01T00:00:00Z"], "until": "2026-12-02T00:00:00Z"}),
]
RESEND_BODIES = ['{"event": NaN}', json.dumps({"event": "rec_" + "a" * 100_000}),
                 '{"event": "rec_\\ud800"}', json.dumps({"event": ["rec_A"] * 10_000})]
EVENT_QUERIES = ["type=" + "&type=".join(["date.kept"] * 1000), "type=" + "t" * 100_000,
                 "limit=NaN", "limit=Infinity", "limit=1e400", "limit=-1", "from=" + "9" * 5000,
                 "from=0001-01-01T00:00:00%2B14:00", "to=9999-12-31T23:59:59-14:00",
                 "cursor=" + "A" * 100_000, "cursor=eyJ3IjogMX0", "order=%ED%A0%80",
                 "subject=sbj_%ED%A0%80", "test_clock=tc_" + "a" * 5000]


def test_the_webhook_doors_refuse_hostile_input_with_400(world):
    client = world.clients["owner_a"]
    client.raise_request_exception = False
    base = f"/api/brands/{world.brand.pk}"
    hook = webhook(world)
    wrong = []
    tries = [("post", f"{base}/webhooks", body) for body in WEBHOOK_BODIES]
    tries += [("patch", f"{base}/webhooks/{hook.pk}", body) for body in WEBHOOK_BODIES]
    tries += [("post", f"{base}/webhooks/{hook.pk}/replay", body) for body in REPLAY_BODIES]
    tries += [("post", f"{base}/webhooks/{hook.pk}/resend", body) for body in RESEND_BODIES]
    for method, path, body in tries:
        answer = getattr(client, method)(path, body, content_type="application/json")
        if answer.status_code != 400:
            wrong.append(f"{method} {path} {body[:80]!r}: {answer.status_code}")
    for query in EVENT_QUERIES:
        answer = client.get(f"{base}/events?{query}")
        if answer.status_code != 400:
            wrong.append(f"events ?{query[:80]}: {answer.status_code}")
    assert wrong == [], "\n".join(wrong)
    hook.refresh_from_db()
    assert (hook.url, hook.types) == (DOORS_HOOK, [])
    assert WebhookEndpoint.objects.filter(brand=world.brand).count() == 1
    assert not world.brand.deliveries.filter(channel="webhook").exists()
