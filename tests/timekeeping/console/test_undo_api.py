"""Undo over the API (issue 27): each of the four actions answers how to undo it, the undo
restores exactly what it changed (proved by the tick: a date open again sends its reminders),
and is refused after 15 minutes on the date's own clock, a second time, when the date changed
since, or when the step went further than keeping dates. A stranger's record is not found."""

from datetime import timedelta

import pytest

from timekeeping.models import Occurrence, Record
from timekeeping.tick import test_clocks

from .conftest import START


def _api(desk, who: str, path: str, body: dict | None = None):
    return desk.clients[who].post(f"/api/{path}", body or {}, content_type="application/json")


def _clock(desk, name: str) -> str:
    return desk.job.clocks.get(name=name).pk


def _undo(desk, who: str, record: str):
    return _api(desk, who, f"records/{record}/undo")


def test_it_undoes_mark_done_and_the_reminders_still_ahead_go_out(desk):
    done = _api(desk, "manager", f"clocks/{_clock(desk, 'file')}/done", {"item": "US-NJ"})
    assert done.status_code == 200 and done.json()["status"] == "satisfied"
    offered = done.json()["undo"]
    assert offered["until"] == (START + timedelta(minutes=15)).isoformat().replace("+00:00", "Z")
    undone = _undo(desk, "manager", offered["record"])
    assert undone.status_code == 200 and undone.json()["undone"] == offered["record"]
    date = desk.occurrence("file", "US-NJ")
    assert (date.status, date.settled, date.settled_by) == (Occurrence.Status.OPEN, None, "")
    entry = Record.objects.get(pk=undone.json()["record"])
    assert entry.kind == "clock.undone" and entry.data["undoes"] == offered["record"]
    assert entry.data["by"] == f"user {desk.manager.user_id} (staff)"
    assert Record.objects.filter(pk=offered["record"]).exists()  # the original stays
    # The 30-day reminder (15 Apr, New York) was ahead when it was undone: it goes out.
    test_clocks.advance(desk.test_clock, to=START + timedelta(days=6))
    assert Record.objects.filter(kind="clock.notice", data__item="US-NJ",
                                 data__rung="notice 30d").exists()


def test_it_undoes_acknowledge_and_assign(desk):
    ack = _api(desk, "owner", f"clocks/{_clock(desk, 'pay')}/acknowledge")
    assert _undo(desk, "owner", ack.json()["undo"]["record"]).status_code == 200
    assert desk.occurrence("pay").acknowledged is None
    again = _api(desk, "owner", f"clocks/{_clock(desk, 'pay')}/acknowledge")
    assert again.json()["undo"] is not None  # acknowledged anew, undoable anew
    repeat = _api(desk, "owner", f"clocks/{_clock(desk, 'pay')}/acknowledge")
    assert repeat.status_code == 200 and repeat.json()["undo"] is None  # acts once
    first = _api(desk, "owner", f"clocks/{_clock(desk, 'pay')}/assign",
                 {"member": desk.manager.pk})
    second = _api(desk, "owner", f"clocks/{_clock(desk, 'pay')}/assign",
                  {"member": desk.viewer.pk})
    assert _undo(desk, "owner", first.json()["undo"]["record"]).json()["code"] == \
        "undo_superseded"  # the date was reassigned since
    assert _undo(desk, "owner", second.json()["undo"]["record"]).status_code == 200
    assert desk.occurrence("pay").assignee_id == desk.manager.pk
    nobody = _api(desk, "owner", f"clocks/{_clock(desk, 'pay')}/assign", {"member": ""})
    assert nobody.json()["assignee"] is None and desk.occurrence("pay").assignee_id is None


def test_it_undoes_a_choice_that_only_kept_the_date(desk):
    chosen = _api(desk, "manager", f"clocks/{_clock(desk, 'pay')}/choose", {"choice": "pay"})
    assert chosen.status_code == 200 and desk.occurrence("pay").status == "satisfied"
    assert _undo(desk, "manager", chosen.json()["undo"]["record"]).status_code == 200
    assert desk.occurrence("pay").status == Occurrence.Status.OPEN
    desk.job.refresh_from_db()
    assert "pay" not in desk.job.steps_done


def test_it_refuses_after_fifteen_minutes_on_the_dates_own_clock(desk):
    done = _api(desk, "owner", f"clocks/{_clock(desk, 'pay')}/done")
    test_clocks.advance(desk.test_clock, to=START + timedelta(minutes=15))
    record = done.json()["undo"]["record"]
    test_clocks.advance(desk.test_clock, to=START + timedelta(minutes=15, seconds=1))
    late = _undo(desk, "owner", record)
    assert late.status_code == 409 and late.json()["code"] == "undo_expired"
    assert desk.occurrence("pay").status == Occurrence.Status.SATISFIED


def test_it_refuses_a_second_undo_and_a_step_that_went_further(desk):
    done = _api(desk, "owner", f"clocks/{_clock(desk, 'pay')}/done")
    record = done.json()["undo"]["record"]
    assert _undo(desk, "owner", record).status_code == 200
    twice = _undo(desk, "owner", record)
    assert twice.status_code == 409 and twice.json()["code"] == "undo_already"
    filed = _api(desk, "owner", f"clocks/{_clock(desk, 'file')}/done", {"item": "US"})
    assert filed.json()["undo"] is None  # the refund window is measured from it: none offered
    entry = Record.objects.filter(kind="clock.satisfied", data__item="US").get()
    measured = _undo(desk, "owner", entry.pk)  # asked anyway
    assert measured.status_code == 409 and measured.json()["code"] == "undo_set_in_motion"
    assert desk.occurrence("file", "US").status == Occurrence.Status.SATISFIED


@pytest.mark.parametrize("who, status", [("stranger", 404), ("viewer", 403)])
def test_a_stranger_hears_not_found_and_a_viewer_may_not(desk, who, status):
    done = _api(desk, "owner", f"clocks/{_clock(desk, 'pay')}/done")
    assert _undo(desk, who, done.json()["undo"]["record"]).status_code == status
    assert desk.occurrence("pay").status == Occurrence.Status.SATISFIED


def test_a_record_that_is_no_action_cannot_be_undone(desk):
    opened = Record.objects.get(kind="job.opened", job=desk.job.pk)
    refused = _undo(desk, "owner", opened.pk)
    assert refused.status_code == 409 and refused.json()["code"] == "undo_not_undoable"
