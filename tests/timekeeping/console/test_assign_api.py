"""`POST /api/clocks/<id>/assign {item, member}`: the API's door to the console's assign, one
function behind both (`clocks.assign`)."""

import json

from timekeeping.models import Member, Record


def _assign(desk, who: str, body: dict, clock_name: str = "file"):
    row = desk.job.clocks.get(name=clock_name)
    return desk.clients[who].post(f"/api/clocks/{row.pk}/assign", json.dumps(body),
                                  content_type="application/json")


def test_it_assigns_a_date_to_a_member_of_the_clocks_brand(desk):
    answer = _assign(desk, "manager", {"item": "US", "member": desk.manager.pk})
    assert answer.status_code == 200 and answer.json()["assignee"] == desk.manager.pk
    assert desk.occurrence("file", "US").assignee == desk.manager
    record = Record.objects.get(brand=desk.brand, kind="clock.assigned")
    assert record.data["by"] == f"user {desk.manager.user_id} (staff)"


def test_a_member_of_another_brand_is_refused_naming_the_field(desk, actors):
    theirs = Member.objects.create(brand=desk.other, user=actors["buyer"])
    for member in (theirs.pk, "mbr_Missing0000000"):
        answer = _assign(desk, "owner", {"item": "US", "member": member})
        assert answer.status_code == 400
        assert answer.json() == {"member": [f"no member {member!r} of the clock's brand"]}
    assert desk.occurrence("file", "US").assignee is None


def test_unknown_fields_items_and_a_viewer_are_refused(desk):
    assert _assign(desk, "owner", {"item": "US", "member": desk.viewer.pk,
                                   "extra": 1}).status_code == 400
    missing = _assign(desk, "owner", {"item": "US-TX", "member": desk.viewer.pk})
    assert missing.status_code == 400 and "item" in missing.json()
    assert _assign(desk, "viewer", {"item": "US", "member": desk.viewer.pk}).status_code == 403
    assert _assign(desk, "stranger", {"item": "US", "member": desk.viewer.pk}).status_code == 404
