"""The manifest check of steward services (S16): `steward` and `keeper`, each misuse refused
with its code and path, every problem at once, and a steward service that passes compiled."""

import pytest

from tests.timekeeping.test_stewards import with_steward
from timekeeping import manifests
from timekeeping.specs.services import compile_services

HERE = "$.services.date-keeping"


def problems(document) -> list[tuple[str, str]]:
    return [(each.code, each.path) for each in manifests.check(document)]


def test_a_steward_service_passes_and_compiles_with_its_keeper():
    document = with_steward()
    assert problems(document) == []
    spec = compile_services(document)["date-keeping"]
    assert (spec.steward, spec.keeper) == (True, "ana@northwind.test")
    assert not compile_services(document)["annual-return"].steward


@pytest.mark.parametrize(("change", "code", "path"), [
    ({"steward": "yes"}, "service.steward_invalid", f"{HERE}.steward"),
    ({"steward": False}, "service.keeper_without_steward", f"{HERE}.keeper"),
    ({"keeper": "not an email"}, "service.keeper_invalid", f"{HERE}.keeper"),
    ({"keeper": ["ana@northwind.test"]}, "service.keeper_invalid", f"{HERE}.keeper"),
    ({"keeper": "a" * 250 + "@x.test"}, "service.keeper_invalid", f"{HERE}.keeper"),
    ({"price": {"every": "1y", "amount": 100, "currency": "USD"}}, "service.steward_plan",
     f"{HERE}.price.every"),
    ({"subject": {"kind": "taxpayer", "period": {"of": "tax_year"}}},
     "service.steward_period", f"{HERE}.subject.period"),
])
def test_a_misused_steward_is_refused_naming_the_rule(change, code, path):
    assert (code, path) in problems(with_steward(**change))


def test_a_subject_kind_has_one_steward_service():
    document = with_steward()
    document["services"]["second-keeper"] = {"subject": {"kind": "taxpayer"}, "steward": True}
    assert problems(document) == [("service.steward_twice",
                                   "$.services.second-keeper.steward")]
    document["services"]["second-keeper"]["subject"]["kind"] = "venue"
    assert problems(document) == []
