"""A member reads their work's times in the zone they choose (issue 27), as a customer and
the console's people do (tests/timekeeping/portal/test_reading_zone.py)."""

from tests.timekeeping.delivery.test_pages import page


def test_a_member_reads_their_work_in_utc(delivery):
    staff = delivery.client("staff")
    assert "late from Sat 1 Jul 2028, 00:00 EDT" in page(staff)
    staff.post("/zone", {"zone": "UTC", "next": "/delivery/"})
    assert "late from Sat 1 Jul 2028, 04:00 UTC" in page(staff)
