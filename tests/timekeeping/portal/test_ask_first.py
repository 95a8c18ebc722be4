"""The portal's controls that are hard to undo ask first (issue 27): marking a date done,
cancelling a plan (tests/timekeeping/recurring/test_portal.py) and a new calendar link
(test_subscribe.py). Without JavaScript a page asks; with htmx the browser does."""

from timekeeping.models import Occurrence


def test_marking_the_customers_date_done_asks_first_and_changes_nothing(portal):
    pay = portal.clock("pay")
    action = f"/portal/clocks/{pay.pk}/done"
    asked = portal.client.post(action, {"item": "", "next": "/portal/"})
    body = asked.content.decode()
    assert asked.status_code == 200 and "<h1>Mark pay the 2027 tax done?</h1>" in body
    assert 'name="confirmed" value="yes"' in body and 'href="/portal/subjects/' in body
    assert pay.occurrences.get().status == Occurrence.Status.OPEN
    done = portal.client.post(action, {"item": "", "next": "/portal/", "confirmed": "yes"})
    assert done.status_code == 302 and pay.occurrences.get().status != Occurrence.Status.OPEN


def test_the_portal_rows_and_the_feed_box_tell_htmx_to_ask(portal):
    body = portal.client.get(f"/portal/subjects/{portal.subject.pk}/").content.decode()
    assert 'hx-confirm="Mark pay the 2027 tax done?' in body
    assert 'hx-confirm="Make a new link? Every calendar app subscribed to the old link' in body
    assert body.count("hx-vals='{\"confirmed\": \"yes\"}'") >= 2
