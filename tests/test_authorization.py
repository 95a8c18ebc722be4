"""The authorization matrix (docs/security.md): every endpoint, page and feed, asked by each
kind of caller, answers exactly the expected status; a stranger's answer for another brand's
thing is the same as for a thing that does not exist.

Callers: the owner and a staff member of brand A, the owner of brand B, a signed-in person
of no brand, an anonymous caller, and API keys of A and of B. Every new endpoint, page or feed
joins ENDPOINTS.
"""

import base64
import json
import re
from dataclasses import dataclass

import pytest
from django.test import Client

from tests.world import ACTORS, NOW, World, manifest
from timekeeping import keys

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]
MISSING = {"brand": "brd_Missing0000000000", "subject": "sbj_Missing0000000000",
           "job": "job_Missing0000000000", "clock": "clk_Missing0000000000",
           "test_clock": "tc_Missing0000000000", "key": "key_Missing0000000000"}


@dataclass(frozen=True)
class Endpoint:
    """One door: how to ask it as actor number n, and what each actor hears."""

    name: str
    method: str
    path: str  # {brand} {subject} {job} {clock} {test_clock} {key} {order} {code}
    expect: dict[str, int]
    body: object = None  # a dict, or a function of (world, n) -> dict
    query: str = ""


def _as(staff: int, strangers: int, anonymous: int = 401, owner: int | None = None,
        key_a: int | None = None, key_b: int | None = None,
        viewer: int | None = None) -> dict[str, int]:
    """What each caller hears: staff (a manager of A) and, by default, the owner, the viewer
    and A's key hear `staff`; strangers (B's owner and key, a person of no brand, A's customer,
    who uses the portal and not the API) hear `strangers`."""
    return {"owner_a": owner or staff, "staff_a": staff, "owner_b": strangers,
            "nobody": strangers, "anonymous": anonymous, "key_a": key_a or staff,
            "key_b": key_b or strangers, "viewer_a": viewer or staff,
            "customer_a": strangers}


def _writes(staff: int, strangers: int, **others) -> dict[str, int]:
    """A door that changes things: a viewer of A hears 403."""
    return _as(staff, strangers, viewer=others.pop("viewer", 403), **others)


EVERYONE_200 = dict.fromkeys(ACTORS, 200)
ENDPOINTS = [
    Endpoint("home page", "get", "/", EVERYONE_200),
    Endpoint("sign-in page", "get", "/accounts/login/", EVERYONE_200),
    Endpoint("admin", "get", "/admin/", dict.fromkeys(ACTORS, 302)),
    Endpoint("api schema", "get", "/api/schema/", EVERYONE_200),
    Endpoint("feed", "get", "/subjects/{subject}/calendar.ics", EVERYONE_200,
             query="token={token}"),
    Endpoint("feed, wrong token", "get", "/subjects/{subject}/calendar.ics",
             dict.fromkeys(ACTORS, 404), query="token=wrong"),
    Endpoint("test clock create", "post", "/api/test_clocks", _writes(201, 400),
             body=lambda w, n: {"brand": w.brand.pk, "name": f"t{n}",
                                "frozen_time": "2027-01-01T00:00:00Z"}),
    Endpoint("test clock read", "get", "/api/test_clocks/{test_clock}", _as(200, 404)),
    Endpoint("test clock advance", "post", "/api/test_clocks/{test_clock}/advance",
             _writes(200, 404), body=lambda w, n: {"to": f"2026-12-{2 + n:02d}T00:00:00Z"}),
    Endpoint("manifest load", "post", "/api/brands/{brand}/manifests", _writes(201, 404),
             body=lambda w, n: manifest()),
    Endpoint("keys list", "get", "/api/brands/{brand}/keys", _as(403, 404, owner=200)),
    Endpoint("key create", "post", "/api/brands/{brand}/keys", _writes(403, 404, owner=201),
             body={"name": "a program"}),
    Endpoint("key revoke", "post", "/api/brands/{brand}/keys/{key}/revoke",
             _writes(403, 404, owner=200)),
    Endpoint("subject create", "post", "/api/subjects", _writes(201, 400),
             body=lambda w, n: {"brand": w.brand.pk, "kind": "taxpayer", "key": f"k{n}",
                                "name": "S"}),
    Endpoint("subject calendar", "get", "/api/subjects/{subject}/calendar", _as(200, 404)),
    Endpoint("feed token", "post", "/api/subjects/{subject}/calendar/token", _writes(200, 404)),
    Endpoint("job order", "post", "/api/jobs", _writes(201, 404),
             body=lambda w, n: {"service": "annual-return", "subject": w.subject.pk,
                                "period": str(2030 + n),
                                "input": {"jurisdictions": ["US"]}}),
    Endpoint("job step", "post", "/api/jobs/{job}/steps", _writes(200, 404),
             body={"step": "extend", "items": ["US"]}),
    Endpoint("clock acknowledge", "post", "/api/clocks/{clock}/acknowledge", _writes(200, 404),
             body={"item": "US"}),
    Endpoint("clock choose", "post", "/api/clocks/{clock}/choose", _writes(200, 404),
             body={"item": "US-NY", "choice": "extend"}),
    Endpoint("clock done", "post", "/api/clocks/{clock}/done", _writes(200, 404),
             body=lambda w, n: {"item": ["US", "US-CA", "-", "-", "-", "US-NJ", "-", "-", "-"][n]}),
    Endpoint("rows list", "get", "/api/tables/orders/rows", _as(200, 404),
             query="brand={brand}"),
    Endpoint("row create", "post", "/api/tables/orders/rows", _writes(201, 404),
             query="brand={brand}",
             body={"customer": "Ines", "pickup_at": "2030-01-01T12:00:00Z"}),
    Endpoint("row read", "get", "/api/tables/orders/rows/{order}", _as(200, 404),
             query="brand={brand}"),
    Endpoint("row update", "patch", "/api/tables/orders/rows/{order}", _writes(200, 404),
             query="brand={brand}", body={"customer": "Rui"}),
    Endpoint("row move", "post", "/api/tables/orders/rows/{order}/move", _writes(200, 404),
             query="brand={brand}", body={"to": "confirmed"}),
    Endpoint("public move", "post", "/api/public/{brand}/tables/tickets/links/{code}/move",
             EVERYONE_200, body={"to": "checked_in"}),
    Endpoint("public move, wrong code", "post",
             "/api/public/{brand}/tables/tickets/links/Wrong0000000/move",
             dict.fromkeys(ACTORS, 404), body={"to": "checked_in"}),
    Endpoint("postponement", "post", "/api/owner/calendar/postponements", _writes(201, 400),
             body=lambda w, n: {"brand": w.brand.pk, "from": "2031-01-01",
                                "through": "2031-01-02", "to": "2031-01-05",
                                "notice": f"notice {n}"}),
]


def _fill(text: str, world: World, n: int, missing: bool = False) -> str:
    ids = {"brand": world.brand.pk, "subject": world.subject.pk, "job": world.job.pk,
           "clock": world.clock.pk, "test_clock": world.test_clock.pk,
           "key": world.spare_key.pk}
    if missing:
        ids = MISSING
    return text.format(**ids, order=world.orders[n], code=world.codes[n],
                       token=world.subject.feed_token)


def _ask(world: World, endpoint: Endpoint, actor: str, *, missing: bool = False):
    n = ACTORS.index(actor)
    path = _fill(endpoint.path, world, n, missing)
    if endpoint.query:
        path += "?" + _fill(endpoint.query, world, n, missing)
    body = endpoint.body(world, n) if callable(endpoint.body) else endpoint.body
    extra = {}
    if actor.startswith("key_"):
        extra["HTTP_AUTHORIZATION"] = f"Bearer {world.secrets[actor]}"
    client = world.clients[actor]
    if endpoint.method == "get":
        return client.get(path, **extra)
    return getattr(client, endpoint.method)(path, json.dumps(body or {}),
                                            content_type="application/json", **extra)


def _shape(answer, world: World) -> tuple[int, str]:
    """A stranger's answer with ids taken out: what it says, not which id it names."""
    text = answer.content.decode()
    for value in [*MISSING.values(), world.brand.pk, world.subject.pk, world.job.pk,
                  world.clock.pk, world.test_clock.pk, world.spare_key.pk]:
        text = text.replace(value, "<id>")
    return answer.status_code, text


def test_every_door_answers_each_caller_exactly_as_expected(world):
    wrong = []
    for endpoint in ENDPOINTS:
        for actor in ACTORS:
            answer = _ask(world, endpoint, actor)
            if answer.status_code != endpoint.expect[actor]:
                wrong.append(f"{endpoint.name} as {actor}: {answer.status_code}, expected "
                             f"{endpoint.expect[actor]}: {answer.content[:200]!r}")
    assert wrong == [], "\n".join(wrong)


def test_a_stranger_hears_the_same_for_another_brands_id_and_a_missing_one(world):
    differ = []
    for endpoint in ENDPOINTS:
        named = re.search(r"\{(brand|subject|job|clock|test_clock|key)\}",
                          endpoint.path + endpoint.query)
        if not named or endpoint.expect["owner_b"] < 300:  # public doors: a link's key opens
            continue
        for actor in ("owner_b", "nobody", "key_b", "anonymous"):
            theirs = _shape(_ask(world, endpoint, actor), world)
            missing = _shape(_ask(world, endpoint, actor, missing=True), world)
            if theirs != missing:
                differ.append(f"{endpoint.name} as {actor}: {theirs} vs {missing}")
    assert differ == [], "\n".join(differ)


def test_a_revoked_key_opens_nothing(world):
    client, secret = Client(), world.secrets["key_a"]
    path = f"/api/subjects/{world.subject.pk}/calendar"
    assert client.get(path, HTTP_AUTHORIZATION=f"Bearer {secret}").status_code == 200
    keys.revoke(world.brand.api_keys.get(name="key_a"), now=NOW)
    assert client.get(path, HTTP_AUTHORIZATION=f"Bearer {secret}").status_code == 401
    assert client.get(path, HTTP_AUTHORIZATION="Bearer kt_not-a-key").status_code == 401


def test_the_api_takes_no_password(world):
    basic = base64.b64encode(b"owner_a:pw").decode()
    answer = Client().get(f"/api/subjects/{world.subject.pk}/calendar",
                          HTTP_AUTHORIZATION=f"Basic {basic}")
    assert answer.status_code == 401
