"""The console's pages beyond the home speak the owner's words (issue 27, WORDS.md): each page,
rendered for a brand with data (subjects live and in a test world, a schedule whose last run
failed, a key, a manifest, a refused notice, a refused manifest), holds no public id, code,
field path or engine word outside its "Details" disclosures; and every code the console can
show has a sentence (timekeeping/console/refusals.py)."""

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.words import engine_words, visible_text
from timekeeping.access import keys
from timekeeping.basics import refusals, wallclock
from timekeeping.models import Schedule, ScheduleRun, Subject

NOW = datetime(2028, 4, 10, 14, tzinfo=UTC)
SOURCE = Path(__file__).resolve().parents[3] / "timekeeping"


@pytest.fixture
def busy(desk):
    """The desk with a live subject, a schedule whose last run failed, and a key."""
    Subject.objects.create(brand=desk.brand, kind="taxpayer", key="2", name="Alder Books")
    row = Schedule.objects.create(key=f"{desk.brand.pk}:-:nightly", name="nightly",
                                  brand=desk.brand, action="timekeeping.schedules.pulses.nothing",
                                  every_s=86400, next_due=NOW + timedelta(hours=3))
    ScheduleRun.objects.create(schedule=row, due=NOW - timedelta(days=1),
                               tick=NOW - timedelta(days=1), outcome="failed",
                               reason="KeyError: 'due_at'")
    keys.make(brand=desk.brand, name="books sync", by=desk.brand.owner, now=NOW)
    return desk


def _pages(desk) -> list[str]:
    return [desk.url("subjects/"), desk.url(f"subjects/?test={desk.test_clock.pk}"),
            desk.url(f"subjects/{desk.subject.pk}/"), desk.url("schedules/"),
            desk.url("moves/"), desk.url("postponements/"), desk.url("standby/"),
            desk.url("test-clocks/"), desk.url(f"test-clocks/{desk.test_clock.pk}/"),
            desk.url("keys/"), desk.url("manifests/"), desk.url("why")]


@pytest.mark.parametrize("who", ["owner", "viewer"])
def test_every_console_page_hides_ids_codes_and_engine_words(busy, who):
    found = {}
    with wallclock.fixed(NOW):
        for path in _pages(busy):
            answer = busy.clients[who].get(path)
            if answer.status_code == 403:  # a viewer and the keys
                continue
            assert answer.status_code == 200, path
            found[path] = engine_words(visible_text(answer.content.decode()))
    assert len(found) >= 11
    assert {path: words for path, words in found.items() if words} == {}


def test_refusals_read_as_sentences_with_codes_in_details(busy):
    owner = busy.clients["owner"]
    with wallclock.fixed(NOW):
        answers = [
            owner.post(busy.url("postponements/add"), {
                "from_date": "2028-04-17", "through": "2028-04-01", "to": "2028-05-01",
                "notice": "IR-2028-77", "test_clock": busy.test_clock.pk}),
            owner.post(busy.url("manifests/check"), {"document": "[1]"}),
            owner.post(busy.url("manifests/load"), {"document": '{"services": 3}'}),
        ]
    for answer in answers:
        assert answer.status_code in (200, 400)
        assert engine_words(visible_text(answer.content.decode())) == []
    manifest = visible_text(answers[1].content.decode())
    assert "Not loaded: 1 problem to mend first." in manifest
    assert "In the manifest as a whole" in manifest
    assert "manifest.not_object" in answers[1].content.decode()  # in Details


def test_empty_lists_say_what_fills_them_and_link_the_way(desk):
    Subject.objects.filter(brand=desk.brand).delete()
    owner = desk.clients["owner"]
    owner.get(desk.url(), {"test": "off"})  # live: the desk's people start in test mode
    for path, words, link in (
            ("subjects/", "No subjects yet.", desk.url("keys/")),
            ("schedules/", "No schedules yet.", desk.url("manifests/")),
            ("moves/", "No tables yet", desk.url("manifests/")),
            ("postponements/", "No notices yet.", None),
            ("standby/", "No member is on standby yet.", None),
            ("keys/", "No API keys yet.", None)):
        body = owner.get(desk.url(path)).content.decode()
        assert words in visible_text(body), path
        assert link is None or f'href="{link}"' in body, path


def _codes(pattern: str) -> set[str]:
    return {code for path in SOURCE.rglob("*.py")
            for code in re.findall(pattern, path.read_text())}


def test_every_code_the_console_can_show_has_a_sentence():
    moves = _codes(r'MoveRefused\("([A-Z_]+)"') | {"MOMENT_OUT_OF_RANGE"}
    assert moves and moves <= set(refusals.MOVES)
    gate = _codes(r'return "([a-z_]+)", ') - {"set_aside"}
    assert {"job_closed", "date_passed", "needs_grant"} <= gate <= set(refusals.GATE)
    sections = {code.partition(".")[0] for code in _codes(
        r'(?:add|Problem)\(\s*"([a-z_]+\.[a-z_]+)"')}
    assert sections and sections <= set(refusals.SECTIONS)
    assert refusals.set_aside("orders", 1042, "placed → cancelled",
                              "STATE_MOVE_REFUSED: the move waits for settings.auto_release "
                              "to be True") == (
        "Couldn't move row 1042 of orders from placed to cancelled: 'auto-release' is off. "
        "Turn it on or move it by hand.")
    assert "WRITE_CONFLICT" not in refusals.set_aside("orders", 7, "", "WRITE_CONFLICT: x")
