"""The authorization matrix (docs/security.md): every endpoint, page and feed, asked by each
kind of caller, answers exactly the expected status; a stranger's answer for another brand's
thing is the same as for a thing that does not exist.

Callers: tests/world.py's ACTORS. Every new endpoint, page or feed joins the doors of its area
(tests/doors/api.py, console.py, portal.py, reading.py).
"""

import base64
import json
import re

import pytest
from django.test import Client

from tests.csrf import unmasked
from tests.doors import Endpoint, api, console, delivery, demo, portal, reading
from tests.world import (
    ACTORS,
    NOW,
    World,
    erasable,
    failed_delivery,
    parked_schedule,
    parked_timer,
    webhook,
)
from timekeeping.access import keys
from timekeeping.models import Record, Subject

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]
MISSING = {"brand": "brd_Missing0000000000", "subject": "sbj_Missing0000000000",
           "job": "job_Missing0000000000", "clock": "clk_Missing0000000000",
           "test_clock": "tc_Missing0000000000", "key": "key_Missing0000000000",
           "buyer_clock": "clk_Missing0000000001", "task": "tsk_Missing0000000000",
           "date": "999999999", "ending": "job_Missing0000000001",
           "subscription": "sbn_Missing0000000000", "outcome": "out_Missing0000000000",
           "ask": "ask_Missing0000000000",
           "record": "rec_Missing0000000000", "delivery": "dlv_Missing0000000000",
           "webhook": "whe_Missing0000000000", "parked": "tmr_Missing0000000000",
           "erasable": "sbj_Missing0000000001", "schedule": "sch_Missing0000000000"}
# The delivery doors come last: their "date done" settles A's refund-window date.
ENDPOINTS = [*api.DOORS, *console.DOORS, *portal.DOORS, *reading.DOORS, *demo.DOORS,
             *delivery.DOORS]



def _fill(text: str, world: World, n: int, missing: bool = False) -> str:
    ids = {"brand": world.brand.pk, "subject": world.subject.pk, "job": world.job.pk,
           "clock": world.clock.pk, "test_clock": world.test_clock.pk,
           "key": world.spare_key.pk, "buyer_clock": world.buyer_clock.pk,
           "task": world.task.pk, "date": world.date.pk, "ending": world.endings[n].pk,
           "subscription": world.subscription.pk, "outcome": world.outcome.pk,
           "ask": world.ask, "record": _opened(world), "delivery": failed_delivery(world).pk,
           "webhook": webhook(world).pk, "parked": parked_timer(world).pk,
           "erasable": erasable(world).pk, "schedule": parked_schedule(world).pk}
    if missing:
        ids = MISSING
    token = Subject.objects.get(pk=world.subject.pk).feed_token  # doors rotate it
    return text.format(**ids, order=world.orders[n], code=world.codes[n], token=token,
                       link=world.link)


def _opened(world: World) -> str:
    """A record of A's that is no action a person can undo: its job's opening."""
    return Record.objects.get(kind="job.opened", job=world.job.pk).pk


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
                  world.clock.pk, world.test_clock.pk, world.spare_key.pk,
                  world.buyer_clock.pk, world.task.pk, world.subscription.pk,
                  world.outcome.pk, world.ask, _opened(world), failed_delivery(world).pk,
                  webhook(world).pk, parked_timer(world).pk, erasable(world).pk,
                  parked_schedule(world).pk,
                  *(job.pk for job in world.endings)]:
        text = text.replace(value, "<id>")
    return answer.status_code, unmasked(text)


def test_every_door_answers_each_caller_exactly_as_expected(world):
    wrong = []
    for endpoint in ENDPOINTS:
        for actor in ACTORS:
            answer = _ask(world, endpoint, actor)
            if answer.status_code != endpoint.expect[actor]:
                wrong.append(f"{endpoint.name} as {actor}: {answer.status_code}, expected "
                             f"{endpoint.expect[actor]}: {answer.content[:200]!r}")
    assert wrong == [], "\n".join(wrong)


def test_the_demo_receivers_doors_with_debug_on_answer_each_caller_as_expected(world,
                                                                             settings):
    settings.DEBUG = True  # the demo: with it off (the suite, production) they are 404
    wrong = [f"{endpoint.name} as {actor}: {answer.status_code}"
             for endpoint in demo.WITH_DEBUG for actor in ACTORS
             if (answer := _ask(world, endpoint, actor)).status_code != endpoint.expect[actor]]
    assert wrong == [], "\n".join(wrong)


# One rule per action (issue 31): where the API and the console both do a thing, each of the
# brand's people hears the same verdict at both doors: allowed (whatever the body then gets),
# refused (403) or not found (404).
ONE_RULE = {
    "load a manifest": ("manifest load", "console manifest load"),
    "check a manifest": ("manifest plan", "console manifest check"),
    "change the brand's plan": ("brand plan change", "console plan change"),
    "make an API key": ("key create", "console key make"),
    "add a webhook endpoint": ("webhook create", "console webhook add"),
    "add a postponement": ("postponement", "console postponement add"),
    # Needs attention's controls (the console's settle door) and their API doors (issue 31).
    "retry parked timed moves now": ("connection retry now",
                                     "console settle what needs attention"),
    "give up on parked timed moves": ("connection give up",
                                      "console settle what needs attention"),
    "retry a parked timer now": ("timer retry now", "console settle what needs attention"),
    "erase a subject": ("subject erase", "console subject erase"),
    "retry a parked schedule now": ("schedule retry now",
                                    "console settle what needs attention"),
    "give up on a parked schedule": ("schedule give up", "console settle what needs attention"),
}
PEOPLE = ("owner_a", "staff_a", "viewer_a")


def _verdict(status: int) -> str:
    return {403: "refused", 404: "not found"}.get(status, "allowed" if status < 500 else "error")


def test_each_action_has_one_rule_at_the_api_and_the_console(world):
    doors = {endpoint.name: endpoint for endpoint in ENDPOINTS}
    differ = []
    for action, names in ONE_RULE.items():
        for actor in PEOPLE:
            heard = {name: _ask(world, doors[name], actor).status_code for name in names}
            if len({_verdict(status) for status in heard.values()}) != 1:
                differ.append(f"{action} as {actor}: {heard}")
    assert differ == [], "\n".join(differ)


def test_a_stranger_hears_the_same_for_another_brands_id_and_a_missing_one(world):
    differ = []
    for endpoint in ENDPOINTS:
        named = re.search(r"\{(brand|subject|job|clock|test_clock|key|buyer_clock|task|date|"
                          r"ending|subscription|outcome|ask|record|delivery|webhook|parked|"
                          r"erasable|schedule)\}",
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
