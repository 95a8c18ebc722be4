"""The `automations` section checked with the manifest (issue 30, A7): names the rest of the
manifest does not declare are refused at their path, and so is a loop the check can see."""

import copy
import json
from pathlib import Path

import pytest

from timekeeping import manifests
from timekeeping.basics import refusals
from timekeeping.models import Brand, Manifest
from timekeeping.webhooks import endpoints

EXAMPLES = Path(__file__).resolve().parents[3] / "timekeeping" / "manifests" / "examples"
VENUE = json.loads((EXAMPLES / "venue.json").read_text())
TAX = json.loads((EXAMPLES / "tax.json").read_text())
GOOD = [
    {"when": {"row": "orders", "enters": "cancelled"},
     "do": {"email": {"to": {"column": "email"}, "who": "the guest",
                      "subject": "Sorry, {customer}", "body": "Your order {id} was cancelled."}}},
    {"when": {"row": "orders", "enters": "cancelled"},
     "do": {"move": {"table": "order_lines", "link": "order_id", "to": "void"}}},
    {"when": {"row": "order_lines", "enters": "served"},
     "do": {"move": {"via": "order_id", "to": "ready"}}},
]


def with_rules(document, rules):
    found = copy.deepcopy(document)
    found["automations"] = rules
    return found


def problems(document, brand=None):
    return [(p.code, p.path) for p in manifests.check(document, brand=brand)]


def test_it_passes_rules_whose_names_the_manifest_declares():
    assert problems(with_rules(VENUE, GOOD)) == []
    tax = with_rules(TAX, [{"when": {"missed": "file", "service": "annual-return"},
                            "do": {"task": "prepare"}},
                           {"when": {"ask_expired": "organizer"},
                            "do": {"email": {"to": "customer", "subject": "{job}: late"}}}])
    assert problems(tax) == []


@pytest.mark.parametrize(("rule", "code", "path"), [
    ({"when": {"row": "invoices", "enters": "paid"}, "do": {"webhook": "x"}},
     "automation.table_unknown", "$.automations[0].when.row"),
    ({"when": {"row": "orders", "enters": "lost"}, "do": {"webhook": "x"}},
     "automation.state_unknown", "$.automations[0].when.enters"),
    ({"when": {"row": "orders", "enters": "cancelled"},
      "do": {"move": {"table": "order_lines", "link": "order_id", "to": "eaten"}}},
     "automation.move_unknown", "$.automations[0].do.move.to"),
    ({"when": {"row": "orders", "enters": "cancelled"},
      "do": {"move": {"table": "tickets", "link": "holder", "to": "valid"}}},
     "automation.move_unknown", "$.automations[0].do.move.table"),
    ({"when": {"row": "orders", "enters": "ready"},
      "do": {"move": {"via": "customer", "to": "void"}}},
     "automation.move_unknown", "$.automations[0].do.move.via"),
    ({"when": {"row": "orders", "enters": "cancelled"},
      "do": {"email": {"to": {"column": "total"}, "subject": "x"}}},
     "automation.email_invalid", "$.automations[0].do.email.to"),
    ({"when": {"row": "orders", "enters": "cancelled"}, "do": {"task": "prepare"}},
     "automation.task_invalid", "$.automations[0].do.task"),
    ({"when": {"row": "orders", "enters": "cancelled"}, "do": {"email": {}, "webhook": "x"}},
     "automation.do_invalid", "$.automations[0].do"),
    ({"when": {"row": "orders", "missed": "file"}, "do": {"webhook": "x"}},
     "automation.when_invalid", "$.automations[0].when"),
])
def test_it_refuses_an_unknown_name_at_its_path(rule, code, path):
    found = problems(with_rules(VENUE, [rule]))
    assert (code, path) in found
    assert refusals.manifest_where(code) == "a rule of the automations section"


@pytest.mark.parametrize(("rule", "code", "path"), [
    ({"when": {"missed": "fille"}, "do": {"task": "prepare"}},
     "automation.clock_unknown", "$.automations[0].when.missed"),
    ({"when": {"ask_expired": "prepare"}, "do": {"task": "prepare"}},
     "automation.ask_unknown", "$.automations[0].when.ask_expired"),
    ({"when": {"missed": "file", "service": "annual"}, "do": {"task": "prepare"}},
     "automation.service_unknown", "$.automations[0].when.service"),
    ({"when": {"missed": "file"}, "do": {"task": "file"}},
     "automation.task_unknown", "$.automations[0].do.task"),
    # "pay" is a clock of two services, and only one of them has the task "prepare".
    ({"when": {"missed": "pay"}, "do": {"task": "prepare"}},
     "automation.task_unknown", "$.automations[0].do.task"),
    ({"when": {"missed": "file"}, "do": {"email": {"to": "bob", "subject": "x"}}},
     "automation.email_invalid", "$.automations[0].do.email.to"),
    ({"when": {"missed": "file"}, "do": {"email": {"to": "owner", "subject": "{a.b}"}}},
     "automation.email_invalid", "$.automations[0].do.email.subject"),
])
def test_it_refuses_an_unknown_clock_ask_service_or_task(rule, code, path):
    assert (code, path) in problems(with_rules(TAX, [rule]))


def test_it_refuses_a_rule_whose_move_leads_back_to_itself_with_the_chain():
    rules = [*GOOD, {"when": {"row": "orders", "enters": "ready"},
                     "do": {"move": {"table": "order_lines", "link": "order_id",
                                     "to": "served"}}}]
    found = manifests.check(with_rules(VENUE, rules))
    loops = {p.path: p.message for p in found if p.code == "automation.loop"}
    assert set(loops) == {"$.automations[2].do.move", "$.automations[3].do.move"}
    assert "rule 3 → rule 4 → rule 3" in loops["$.automations[2].do.move"]


def test_it_sees_a_loop_through_a_tables_own_effects():
    # orders entering cancelled voids its lines (the table's declared effect); a rule that
    # cancels the order when a line is voided leads back through it.
    rules = [{"when": {"row": "order_lines", "enters": "void"},
              "do": {"move": {"via": "order_id", "to": "cancelled"}}}]
    assert problems(with_rules(VENUE, rules)) == [("automation.loop",
                                                   "$.automations[0].do.move")]


def test_it_refuses_a_webhook_naming_no_endpoint_of_the_brand(brand, settings):
    settings.WEBHOOK_ALLOW_HOSTS = ["127.0.0.1"]
    settings.WEBHOOK_ALLOW_HTTP = True
    endpoints.make(brand, url="http://127.0.0.1:9/hooks", description="Accounts")
    rules = [{"when": {"row": "orders", "enters": "cancelled"}, "do": {"webhook": "Accounts"}},
             {"when": {"row": "orders", "enters": "cancelled"}, "do": {"webhook": "Payroll"}}]
    found = problems(with_rules(VENUE, rules), brand=brand)
    assert found == [("automation.endpoint_unknown", "$.automations[1].do.webhook")]
    planned = manifests.plan(brand, with_rules(VENUE, rules))
    assert [p.path for p in planned.problems] == ["$.automations[1].do.webhook"]


def test_it_refuses_what_is_no_list_of_rules():
    assert problems(with_rules(VENUE, {"when": {}})) == [("automation.invalid",
                                                          "$.automations")]
    assert problems(with_rules(VENUE, [{"when": {}, "do": {}, "also": 1}])) == [
        ("automation.invalid", "$.automations[0]")]


def test_the_api_refuses_a_manifest_naming_another_brands_endpoint(brand, actors, client,
                                                                  settings):
    settings.WEBHOOK_ALLOW_HOSTS = ["127.0.0.1"]
    settings.WEBHOOK_ALLOW_HTTP = True
    other = Brand.objects.create(name="Elsewhere", slug="elsewhere", owner=actors["outsider"])
    endpoints.make(other, url="http://127.0.0.1:9/hooks", description="Accounts")
    document = with_rules(TAX, [{"when": {"missed": "pay"}, "do": {"webhook": "Accounts"}}])
    client.force_login(actors["owner"])
    refused = client.post(f"/api/brands/{brand.pk}/manifests", document,
                          content_type="application/json")
    assert refused.status_code == 400
    assert [(p["code"], p["path"]) for p in refused.json()["problems"]] == [
        ("automation.endpoint_unknown", "$.automations[0].do.webhook")]
    assert not Manifest.objects.filter(brand=brand).exists()
    mine = endpoints.make(brand, url="http://127.0.0.1:9/hooks", description="Accounts")
    loaded = client.post(f"/api/brands/{brand.pk}/manifests",
                         with_rules(TAX, [{"when": {"missed": "pay"},
                                           "do": {"webhook": mine.endpoint.pk}}]),
                         content_type="application/json")
    assert loaded.status_code == 201
    assert {"action": "added", "what": "automations", "path": "$.automations"} in \
        loaded.json()["plan"]["changes"]


HOSTILE = [None, True, 1.5, 10**400, "", "\x00", "x" * 100_000, [], ["x"], {}, {"a": [1]},
           [[[[]]]]]


def _places(value, path=()):
    """Every place in a rule, as a path of keys."""
    yield path
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _places(inner, (*path, key))


def _put(value, path, hostile):
    if not path:
        return hostile
    found = copy.deepcopy(value)
    inner = found
    for key in path[:-1]:
        inner = inner[key]
    inner[path[-1]] = hostile
    return found


@pytest.mark.parametrize("base", [*GOOD, {"when": {"missed": "pay", "service": "annual-return"},
                                          "do": {"email": {"to": "owner", "subject": "x"}}},
                                  {"when": {"ask_expired": "organizer"},
                                   "do": {"task": "prepare"}}])
def test_any_json_anywhere_in_a_rule_is_a_problem_never_an_exception(base):
    document = copy.deepcopy(VENUE)
    document["services"] = TAX["services"]
    for path in _places(base):
        for hostile in HOSTILE:
            found = manifests.check(with_rules(document, [_put(base, path, hostile)]))
            assert found or (path[-1:] == ("body",) and hostile == ""), (path, hostile)
            assert all(p.path.startswith("$.automations") for p in found), (path, hostile)


@pytest.mark.parametrize("hostile", HOSTILE)
def test_a_broken_tables_section_under_the_rules_is_the_tables_problem(hostile):
    for place in ("initial", "moves", "timed", "effects"):
        document = with_rules(VENUE, GOOD)
        states = document["tables"]["order_lines"]["states"]
        states[place] = hostile if place == "initial" else (
            {"open": [hostile, {"to": hostile}]} if place == "moves" else
            [hostile, {"from": hostile, "to": hostile, "when": hostile, "table": hostile}])
        found = manifests.check(document)  # never raises
        assert found, (place, hostile)


def test_a_plan_says_the_rules_were_added_changed_or_removed(brand):
    rules = [{"when": {"missed": "pay", "service": "annual-return"}, "do": {"task": "prepare"}}]
    manifests.load(brand, with_rules(TAX, rules))
    changed = manifests.plan(brand, with_rules(TAX, [*rules, *rules]))
    assert [str(c) for c in changed.changes] == ["changed automations $.automations"]
    removed = manifests.plan(brand, copy.deepcopy(TAX))
    assert [str(c) for c in removed.changes] == ["removed automations $.automations: not in use"]
    assert removed.problems == []
