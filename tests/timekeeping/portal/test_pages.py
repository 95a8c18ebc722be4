"""The portal's pages: a customer sees only their subjects, each date in its subject's zone
with the zone named, what a miss costs, and the history in sentences, newest first."""

from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from tests.csrf import unmasked
from timekeeping.basics import wallclock
from timekeeping.timers import records


def test_it_lists_the_customers_dates_with_their_zone_cost_and_when(portal):
    with wallclock.fixed(datetime(2026, 12, 1, 12, tzinfo=UTC)):
        page = portal.client.get("/portal/")
    text = page.content.decode()
    assert page.status_code == 200
    assert "file the 2027 return, US" in text and "pay the 2027 tax" in text
    assert "Someone Else" not in text and "A Stranger" not in text
    assert "about $324 a month late" in text
    assert "late from Wed 19 Apr 2028, 00:00 PDT" in text  # 2028-04-19 00:00 in its zone
    assert "America/Los_Angeles" not in text
    assert "in 16 months" in text  # 2028-04-19 07:00Z, from 2026-12-01 12:00Z
    assert text.count("<h1>") == 1


def test_it_puts_late_and_lapsed_dates_on_top(portal):
    pay = portal.clock("pay").occurrences.get()
    later = pay.late_from + timedelta(days=1)
    with wallclock.fixed(later):
        text = portal.client.get("/portal/").content.decode()
    assert text.index("pay the 2027 tax") < text.index("the earliest carryforward expires")
    assert "1 day late" in text or "24 hours late" in text


def test_it_answers_404_to_a_person_who_is_no_customer(portal, actors):
    client = Client()
    client.force_login(actors["owner"])  # the brand's owner uses the console, not the portal
    assert client.get("/portal/").status_code == 404
    assert client.get(f"/portal/subjects/{portal.subject.pk}/").status_code == 404


def test_it_answers_the_same_404_for_anothers_subject_and_a_missing_one(portal):
    for path in ("/portal/subjects/{}/", "/portal/subjects/{}/calendar.ics"):
        theirs = portal.client.get(path.format(portal.others.pk))
        strangers = portal.client.get(path.format(portal.strangers.pk))
        missing = portal.client.get(path.format("sbj_Missing0000000000"))
        assert theirs.status_code == strangers.status_code == missing.status_code == 404
        assert unmasked(theirs.content.decode().replace(portal.others.pk, "<id>")) == \
            unmasked(missing.content.decode().replace("sbj_Missing0000000000", "<id>"))


def test_it_sends_a_stranger_to_sign_in(portal):
    page = Client().get(f"/portal/subjects/{portal.subject.pk}/")
    assert page.status_code == 302
    assert page["Location"].startswith("/accounts/login/?next=")


def test_it_shows_a_subjects_dates_subscription_and_history(portal):
    page = portal.client.get(f"/portal/subjects/{portal.subject.pk}/")
    text = page.content.decode()
    assert page.status_code == 200
    assert "<h1>Fernhill Tools</h1>" in text
    assert "Times are Los Angeles time." in text
    assert f"webcal://127.0.0.1:8000/subjects/{portal.subject.pk}/calendar.ics?token=" \
           f"{portal.subject.feed_token}" in text
    assert "The annual return job for 2027 was opened." in text
    headings = [line.strip()[:4] for line in text.splitlines() if line.strip()[:3] in
                ("<h1", "<h2", "<h3")]
    assert headings[0] == "<h1>" and all(h.startswith("<h2") for h in headings[1:])


def test_it_pages_the_history_and_never_splits_an_instant(portal):
    base = datetime(2027, 1, 1, tzinfo=UTC)
    for n in range(60):  # 3 records at each of 20 instants, after the job's own records
        at = base + timedelta(hours=n // 3)
        records.write("clock.acknowledged", brand=portal.brand, instant=at,
                      subject=portal.subject.pk, data={"name": f"date{n}", "by": "test"})
    seen, before, pages = [], "", 0
    while True:
        page = portal.client.get(f"/portal/subjects/{portal.subject.pk}/",
                                 {"before": before} if before else {})
        told = page.context["history"]
        seen += [item.text for item in told.told]
        pages += 1
        if not told.older:
            break
        before = told.older
    assert pages == 2
    assert len(seen) == len(set(seen))  # nothing twice
    assert sorted(text for text in seen if "date" in text and "by test" in text) == sorted(
        f"The date{n} date was acknowledged by test." for n in range(60))  # nothing lost


def test_it_answers_400_for_a_before_that_is_no_instant(portal):
    page = portal.client.get(f"/portal/subjects/{portal.subject.pk}/", {"before": "yesterday"})
    assert page.status_code == 400


@pytest.mark.parametrize("path", ["/accounts/login/", "/accounts/password_reset/"])
def test_the_sign_in_pages_label_every_input(client, db, path):
    text = client.get(path).content.decode()
    for field in ("id_username", "id_password") if "login" in path else ("id_email",):
        assert f'<label for="{field}">' in text and f'id="{field}"' in text
