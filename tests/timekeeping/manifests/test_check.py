import copy
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from hypothesis import given, settings
from hypothesis import strategies as st

from timekeeping import manifests
from timekeeping.demo import TAX_MANIFEST
from timekeeping.manifests.check import REMOVABLE, removal_path
from timekeeping.models import Manifest

TAX = json.loads(TAX_MANIFEST.read_text())


def changed(path: list, value):
    document = copy.deepcopy(TAX)
    target = document
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return document


FILE = ["services", "annual-return", "clocks", "file"]


@pytest.mark.parametrize(
    ("path", "value", "code", "where", "words"),
    [
        (["calendar", "zone"], "Mars/Olympus", "calendar.zone_invalid", "$.calendar.zone",
         "not an IANA time zone"),
        (["calendar", "closes"], "25:00", "calendar.time_invalid", "$.calendar.closes",
         "not a time of day"),
        (["calendar", "holidays"], ["XX"], "calendar.holidays_invalid", "$.calendar.holidays",
         "'XX'"),
        (["calendar", "roll"], "sideways", "calendar.roll_invalid", "$.calendar.roll",
         "'sideways'"),
        (["calendar", "colour"], "blue", "calendar.key_unknown", "$.calendar.colour",
         "not a key here"),
        (["calendar", "postpone"], [{"from": "2028-04-30", "through": "2028-04-01",
                                     "to": "2028-06-01", "notice": "n"}],
         "calendar.postpone_invalid", "$.calendar.postpone[0].through", "on or after"),
        (["timers"], {}, "manifest.section_unknown", "$.timers", "not a key here"),
        ([*FILE, "due"], KeyError, "clock.due_missing", "$.services.annual-return.clocks.file",
         "'due'"),
        ([*FILE, "due"], {"date": "2028-04-15", "input": "x"}, "clock.due_invalid",
         "$.services.annual-return.clocks.file.due", "exactly one of"),
        ([*FILE, "due"], {"after_period": {"months": 4, "day": 32}}, "clock.due_invalid",
         "$.services.annual-return.clocks.file.due.after_period", "day"),
        ([*FILE, "due"], {"function": "tax.nothing"}, "clock.due_function_unknown",
         "$.services.annual-return.clocks.file.due.function", "'tax.nothing'"),
        ([*FILE, "due"], {"clock": "file"}, "clock.due_clock_unknown",
         "$.services.annual-return.clocks.file.due.clock", "another clock"),
        ([*FILE, "rungs"], ["notice 90 days"], "clock.rung_invalid",
         "$.services.annual-return.clocks.file.rungs[0]", "'notice 90 days' is not a rung"),
        ([*FILE, "rungs"], ["run celebrate 3d"], "clock.rung_step_unknown",
         "$.services.annual-return.clocks.file.rungs[0]", "'celebrate'"),
        ([*FILE, "moves"], {"celebrate": {"date": "2028-10-15"}}, "clock.moves_step_unknown",
         "$.services.annual-return.clocks.file.moves.celebrate", "'celebrate'"),
        ([*FILE, "hard"], True, "clock.hard_moves", "$.services.annual-return.clocks.file.moves",
         "only by the calendar"),
        ([*FILE, "satisfied_by"], ["celebrate"], "clock.satisfied_by_unknown",
         "$.services.annual-return.clocks.file.satisfied_by[0]", "'celebrate'"),
        ([*FILE, "bars"], ["amend"], "clock.bars_needs_hard",
         "$.services.annual-return.clocks.file.bars", "only a hard clock"),
        ([*FILE, "every"], "fortnightly", "clock.every_invalid",
         "$.services.annual-return.clocks.file.every", "'fortnightly'"),
        ([*FILE, "lives_on"], "forever", "clock.lives_on_invalid",
         "$.services.annual-return.clocks.file.lives_on", "'subject'"),
        ([*FILE, "owner"], "nobody", "clock.owner_invalid",
         "$.services.annual-return.clocks.file.owner", "member id"),
        ([*FILE, "each"], "jurisdictions", "clock.each_invalid",
         "$.services.annual-return.clocks.file.each", "{\"of\""),
        ([*FILE, "color"], "red", "clock.key_unknown",
         "$.services.annual-return.clocks.file.color", "not a key here"),
        (["services", "annual-return", "subject", "period"], {"of": "decade"},
         "service.period_invalid", "$.services.annual-return.subject.period.of", "tax_year"),
        (["services", "annual-return", "steps", "tentative"], {"then": ["celebrate"]},
         "step.then_unknown", "$.services.annual-return.steps.tentative.then[0]", "'celebrate'"),
        (["services", "Annual Return"], {}, "service.name_invalid",
         "$.services.Annual Return", "lowercase"),
    ],
)
def test_it_gives_each_mistake_its_own_code_path_and_rule(brand, path, value, code, where,
                                                         words):
    document = changed(path, value)
    problems = manifests.check(document)
    found = [p for p in problems if p.code == code]
    assert found, problems
    assert found[0].path == where
    assert words in found[0].message
    with pytest.raises(manifests.ManifestInvalid):
        manifests.load(brand, document)
    assert not Manifest.objects.exists()
    brand.refresh_from_db()
    assert brand.calendar_id is None


def test_it_reports_every_problem_at_once():
    document = changed(["calendar", "zone"], "Nowhere/Else")
    document["services"]["annual-return"]["clocks"]["pay"]["rungs"] = ["shout 3d"]
    codes = {p.code for p in manifests.check(document)}
    assert {"calendar.zone_invalid", "clock.rung_invalid"} <= codes


def test_a_satisfied_by_that_is_no_list_is_a_problem_not_a_crash():
    # Found by the fuzz test: a repair window looked for its step in a number.
    for value in (1, None, "file", {"file": True}):
        codes = {p.code for p in manifests.check(changed([*FILE, "satisfied_by"], value))}
        assert "clock.satisfied_by_invalid" in codes or "deliver.perfect_without_date" in codes


def test_it_keeps_each_version_once_by_its_content(brand):
    first = manifests.load(brand, copy.deepcopy(TAX))
    again = manifests.load(brand, copy.deepcopy(TAX))
    second = manifests.load(brand, changed([*FILE, "rungs"], ["notice 60d"]))
    assert first.pk == again.pk and first.version == 1
    assert second.version == 2 and second.bundle != first.bundle
    assert len(first.bundle) == 64


def test_the_commands_check_and_load_a_file(brand, tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(TAX))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(changed(["calendar", "closes"], "24:00")))
    out = StringIO()
    call_command("manifest", "check", str(good), stdout=out)
    assert out.getvalue().strip() == "no problems"
    out = StringIO()
    with pytest.raises(CommandError, match="1 problem"):
        call_command("manifest", "check", str(bad), stdout=out)
    assert "calendar.time_invalid at $.calendar.closes" in out.getvalue()
    with pytest.raises(CommandError, match="nothing was stored"):
        call_command("manifest", "load", brand.slug, str(bad), stdout=StringIO())
    assert not Manifest.objects.exists()
    out = StringIO()
    call_command("manifest", "load", brand.slug, str(good), stdout=out)
    assert "version 1" in out.getvalue()
    with pytest.raises(CommandError, match="is not a manifest's JSON"):
        (tmp_path / "broken.json").write_text("{")
        call_command("manifest", "check", str(tmp_path / "broken.json"))
    # Read as strictly as an API body: each refused with its place and rule, nothing stored.
    for text, said in (('{"calendar": {"closes": NaN}}', "NaN"),
                       ('{"services": {"a\\ud800": {}}}', "surrogate"),
                       ('{"version": ' + "9" * 5000 + "}", "digits")):
        (tmp_path / "hostile.json").write_text(text)
        with pytest.raises(CommandError, match=said):
            call_command("manifest", "load", brand.slug, str(tmp_path / "hostile.json"),
                         stdout=StringIO())
    assert Manifest.objects.count() == 1


def test_it_refuses_names_outside_ascii_and_days_beside_a_fixed_date():
    document = changed(["services", "annual-return", "steps", "révise"], {})
    assert [p.code for p in manifests.check(document)] == ["step.name_invalid"]
    document = changed([*FILE, "due"], {"date": "2028-04-15", "days": 3})
    assert "clock.due_invalid" in [p.code for p in manifests.check(document)]


NAMES = st.from_regex(r"[a-z][a-z0-9_-]{0,20}", fullmatch=True)
REMOVABLE_PATHS = st.one_of(
    st.builds("services.{}".format, NAMES),
    st.builds("services.{}.{}.{}".format, NAMES, st.sampled_from(["steps", "clocks"]), NAMES),
    st.builds("tables.{}".format, NAMES),
    st.builds("tables.{}.columns.{}".format, NAMES, NAMES),
    st.builds("schedules.{}.{}".format, NAMES, NAMES),
).flatmap(lambda path: st.sampled_from([path, f"$.{path}"]))
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(REMOVABLE_PATHS, max_size=10))
def test_removes_of_removable_paths_passes_the_check(paths):
    assert manifests.check({"removes": paths}) == []


@settings(max_examples=300, deadline=None)
@given(JSON)
def test_removes_of_any_json_is_checked_without_raising_and_only_under_removes(value):
    problems = manifests.check({"removes": value})
    assert all(p.path == "$.removes" or p.path.startswith("$.removes[") for p in problems)
    assert all(p.code.startswith("removes.") for p in problems)
    valid = isinstance(value, list) and len(value) <= 200 and all(
        isinstance(entry, str) and REMOVABLE.fullmatch(removal_path(entry)) for entry in value)
    assert (problems == []) == valid
