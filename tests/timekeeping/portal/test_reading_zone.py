"""A customer and a member read their pages' times in the zone they choose (issue 27): each
subject's own by default, UTC, or their own; the same switch as the console's, kept in their
session."""

from datetime import UTC, datetime

from timekeeping.basics import wallclock


def test_a_customer_reads_the_portal_in_utc_or_their_own_zone(portal):
    at = datetime(2026, 12, 1, 12, tzinfo=UTC)
    with wallclock.fixed(at):
        home = portal.client.get("/portal/").content.decode()
        assert "late from Wed 19 Apr 2028, 00:00 PDT" in home  # the subject's own
        assert '<option value="" selected>each in its own place' in home
        sent = portal.client.post("/zone", {"zone": "UTC", "next": "/portal/"})
        assert sent["Location"] == "/portal/"
        home = portal.client.get("/portal/").content.decode()
        assert "late from Wed 19 Apr 2028, 07:00 UTC" in home
        portal.client.post("/zone", {"other": "Europe/Paris", "next": "/portal/"})
        subject = portal.client.get(f"/portal/subjects/{portal.subject.pk}/").content.decode()
        assert "late from Wed 19 Apr 2028, 09:00 CEST" in subject
        assert '<option value="Europe/Paris" selected>Paris time (yours)</option>' in subject
        assert "Los Angeles time (the subject's)" in subject
        portal.client.post("/zone", {"zone": "", "next": "/portal/"})
        assert "00:00 PDT" in portal.client.get("/portal/").content.decode()

