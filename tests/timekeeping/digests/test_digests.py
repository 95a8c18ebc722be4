"""Digests (issue 27 item 7): each person's daily or weekly email of a brand, written by the
tick once per period in their zone, across clock changes, with an unsubscribe link that needs
no sign-in."""

import copy
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.core import mail
from django.test import Client

from tests.words import engine_words, visible_text
from timekeeping import clocks, manifests
from timekeeping.basics import wallclock
from timekeeping.digests import choose, send, tokens
from timekeeping.models import Delivery, Digest, Member, Subject, TestClock
from timekeeping.tick import phases

EXAMPLES = Path(__file__).resolve().parents[3] / "timekeeping" / "manifests" / "examples"
TAX = json.loads((EXAMPLES / "tax.json").read_text())
START = datetime(2028, 3, 1, 15, tzinfo=UTC)
# Committed: the tick's schedules (the purges among them) run in threads of their own.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def live(brand, actors):
    """Brand's real-clock subject Harbor with its 2027 return's dates (the hard ones at risk
    from the start), and a rehearsal on a test clock that no digest may name."""
    document = copy.deepcopy(TAX)
    del document["services"]["tax-plan"]  # its schedule's runs are no digest's business
    document["services"]["annual-return"]["clocks"]["pay"]["exposure"] = {
        "per_month_late": {"amount": 32400, "currency": "USD"}}
    manifests.load(brand, document)
    for user in actors.values():
        user.email = f"{user.username}@example.com"
        user.save(update_fields=["email"])
    with wallclock.fixed(START):
        harbor = Subject.objects.create(brand=brand, kind="taxpayer", key="1", name="Harbor",
                                        zone="America/New_York")
        clocks.order(brand=brand, service="annual-return", subject=harbor, period="2027",
                     input={"jurisdictions": ["US"]})
        rehearsal = TestClock.objects.create(brand=brand, name="t", frozen_time=START)
        other = Subject.objects.create(brand=brand, test_clock=rehearsal, kind="taxpayer",
                                       key="2", name="Rehearsal Co")
        clocks.order(brand=brand, service="annual-return", subject=other, period="2027",
                     input={"jurisdictions": ["US"]})
    return harbor


def _tick(at: datetime):
    with wallclock.fixed(at):
        result = phases.run_once(now=at)
    assert result.faults == []
    return result


def _choose(brand, user, *, at=START, **choice) -> Digest:
    choice = {"period": "daily", "zone": "", "hour": 7, "weekday": 0, **choice}
    return choose.digest_set(brand=brand, user=user, now=at, **choice)


def _said(text: str) -> list[str]:
    """The engine's words and ids in what a person reads: the links' addresses left out."""
    return engine_words(re.sub(r"https?://\S+", "", text))


def _digests() -> list:
    """The digests sent (the outbox sends reminders too)."""
    return [email for email in mail.outbox
            if email.extra_headers["Idempotency-Key"].startswith("digest:")]


def _keys() -> list[str]:
    return sorted({email.extra_headers["Idempotency-Key"] for email in _digests()}
                  | set(Delivery.objects.filter(idempotency_key__startswith="digest:")
                        .values_list("idempotency_key", flat=True)))


def _period_keys() -> list[str]:
    return [key.split(":", 2)[2] for key in _keys()]


def test_it_sends_a_daily_digest_once_per_london_day_at_its_hour_across_the_clock_change(
        brand, actors, live):
    _choose(brand, actors["owner"], zone="Europe/London", at=datetime(2028, 3, 24, 12, tzinfo=UTC))
    # 25 March 2028 is GMT (07:00 is 07:00Z); London moves to BST on 26 March (07:00 is 06:00Z).
    for at in ["2028-03-25T06:59Z", "2028-03-25T07:00Z", "2028-03-25T07:30Z",
               "2028-03-26T05:59Z", "2028-03-26T06:00Z", "2028-03-26T07:00Z",
               "2028-03-26T23:00Z"]:
        _tick(datetime.fromisoformat(at))
    assert _period_keys() == ["daily:2028-03-25", "daily:2028-03-26"]
    first, second = _digests()
    assert "Sat 25 Mar 2028, 07:00 GMT" in first.body
    assert "Sun 26 Mar 2028, 07:00 BST" in second.body


def test_a_weekly_digest_goes_once_a_week_on_its_day_in_new_york_across_the_clock_change(
        brand, actors, live):
    _choose(brand, actors["owner"], period="weekly", zone="America/New_York", hour=7,
            weekday=0, at=datetime(2028, 3, 5, tzinfo=UTC))
    # Monday 6 March 2028 07:00 EST is 12:00Z; New York moves to EDT on 12 March, so Monday
    # 13 March 07:00 EDT is 11:00Z.
    for at in ["2028-03-06T11:59Z", "2028-03-06T12:00Z", "2028-03-08T12:00Z",
               "2028-03-12T12:00Z", "2028-03-13T10:59Z", "2028-03-13T11:00Z",
               "2028-03-14T11:00Z"]:
        _tick(datetime.fromisoformat(at))
    assert _period_keys() == ["weekly:2028-03-06", "weekly:2028-03-13"]
    assert _digests()[0].subject.startswith("Weekly digest: ")


def test_after_downtime_it_sends_one_digest_for_what_was_missed_not_one_a_day(
        brand, actors, live):
    digest = _choose(brand, actors["owner"], zone="Europe/London")
    _tick(datetime(2028, 3, 9, 18, tzinfo=UTC))  # no tick for a week
    assert _period_keys() == ["daily:2028-03-09"]
    digest.refresh_from_db()
    assert digest.next_due == datetime(2028, 3, 10, 7, tzinfo=UTC)


def test_two_ticks_that_read_the_same_digest_write_it_once(brand, actors, live):
    digest = _choose(brand, actors["owner"], zone="Europe/London")
    at = datetime(2028, 3, 2, 7, 5, tzinfo=UTC)
    seen_by_one, seen_by_other = (Digest.objects.select_related("brand", "user").get(
        pk=digest.pk) for _ in range(2))
    with wallclock.fixed(at):
        assert send.send_one(seen_by_one, now=at) == "written"
        assert send.send_one(seen_by_other, now=at) == "taken"
    assert _period_keys() == ["daily:2028-03-02"]


def test_an_hour_moved_later_on_a_day_already_sent_sends_nothing_twice(brand, actors, live):
    _choose(brand, actors["owner"], zone="Europe/London")
    _tick(datetime(2028, 3, 2, 7, 5, tzinfo=UTC))
    _choose(brand, actors["owner"], zone="Europe/London", hour=9,
            at=datetime(2028, 3, 2, 8, tzinfo=UTC))
    _tick(datetime(2028, 3, 2, 9, 5, tzinfo=UTC))
    assert _period_keys() == ["daily:2028-03-02"]


def test_a_digest_turned_off_sends_nothing(brand, actors, live):
    _choose(brand, actors["owner"], period="off")
    _choose(brand, actors["staff"], zone="Europe/London")
    _choose(brand, actors["staff"], period="off", at=datetime(2028, 3, 1, 20, tzinfo=UTC))
    for day in range(2, 5):
        _tick(datetime(2028, 3, day, 12, tzinfo=UTC))
    assert _keys() == [] and _digests() == []


def test_an_owners_digest_names_the_live_dates_at_risk_with_a_total_and_what_changed(
        brand, actors, live):
    _choose(brand, actors["owner"], zone="America/New_York", hour=8)
    with wallclock.fixed(datetime(2028, 3, 1, 20, tzinfo=UTC)):  # a job opened since
        clocks.order(brand=brand, service="annual-return", subject=live, period="2028",
                     input={"jurisdictions": ["US"]})
    _tick(datetime(2028, 3, 2, 13, 30, tzinfo=UTC))  # 08:30 EST
    [email] = _digests()
    text, (html, kind) = email.body, email.alternatives[0]
    assert kind == "text/html"
    assert email.subject == "Daily digest: 4 at risk · Northwind Filing"
    assert "Harbor: pay the 2027 tax" in text
    assert "$648 a month at risk across 4 dates (2 of them not priced)." in text
    assert "Rehearsal Co" not in text  # a test clock's world stays out
    assert "Harbor: The annual return job for 2028 was opened." in text
    assert "Wed 1 Mar 2028, 15:00 EST" in text  # what changed, when, in the digest's zone
    assert _said(text) == [] and _said(visible_text(html)) == []
    assert f"/console/{brand.pk}/" in text
    assert email.extra_headers["List-Unsubscribe"].startswith("<http")


def test_a_member_reads_only_the_dates_assigned_to_them_and_the_open_tasks(
        brand, actors, live):
    member = Member.objects.create(brand=brand, user=actors["member"], role="manager")
    pay = live.clocks.get(name="pay").occurrences.get()
    pay.assignee = member
    pay.save(update_fields=["assignee"])
    rehearsed = Subject.objects.get(name="Rehearsal Co").clocks.get(name="pay").occurrences.get()
    rehearsed.assignee = member
    rehearsed.save(update_fields=["assignee"])
    _choose(brand, actors["member"], zone="Europe/London")
    _tick(datetime(2028, 3, 2, 7, 5, tzinfo=UTC))
    [email] = _digests()
    assert email.to == ["member@example.com"]
    assert "Harbor: pay the 2027 tax" in email.body
    assert "refund claims" not in email.body and "Rehearsal Co" not in email.body
    assert "/delivery/" in email.body and _said(email.body) == []


def test_an_empty_digest_is_not_sent(brand, actors, live):
    Member.objects.create(brand=brand, user=actors["member"], role="viewer")
    _choose(brand, actors["member"], zone="Europe/London")  # nothing assigned, no task
    _tick(datetime(2028, 3, 2, 7, 5, tzinfo=UTC))
    assert _keys() == [] and Digest.objects.get(user=actors["member"]).last_key == \
        "daily:2028-03-02"


def test_the_unsubscribe_link_works_without_signing_in_and_a_changed_token_is_refused(
        brand, actors, live):
    digest = _choose(brand, actors["owner"])
    path = tokens.unsubscribe_url(digest.pk).removeprefix("http://testserver")
    path = path[path.index("/digest/"):]
    anyone = Client(enforce_csrf_checks=True)
    asked = anyone.get(path)
    assert asked.status_code == 200 and "Stop the digest of Northwind Filing?" in \
        asked.content.decode()
    assert Digest.objects.get(pk=digest.pk).period == "daily"  # asking changes nothing
    assert anyone.post(path[:-2] + "xx").status_code == 404
    assert anyone.get(path.replace("/unsubscribe/", "/unsubscribe/x")).status_code == 404
    assert anyone.post(path).status_code == 200  # one click, as a mail provider posts
    assert Digest.objects.get(pk=digest.pk).period == "off"
    assert Digest.objects.get(pk=digest.pk).next_due is None


def test_the_phase_costs_a_bounded_number_of_queries_per_digest(
        brand, actors, live, django_assert_max_num_queries):
    for n in range(10):
        with wallclock.fixed(START):
            more = Subject.objects.create(brand=brand, kind="taxpayer", key=f"m{n}",
                                          name=f"More {n}")
            clocks.order(brand=brand, service="annual-return", subject=more, period="2027",
                         input={"jurisdictions": ["US"]})
    _choose(brand, actors["owner"], zone="Europe/London")
    at = datetime(2028, 3, 2, 7, 5, tzinfo=UTC)
    with django_assert_max_num_queries(25):
        assert send.run_due(now=at).written == 1


def test_the_next_send_is_computed_from_the_choice_in_its_zone():
    from timekeeping.digests import periods
    at = datetime(2028, 11, 5, 5, 30, tzinfo=UTC)  # New York leaves EDT at 06:00Z today
    assert periods.next_after(at, period="daily", zone="America/New_York", hour=7) == \
        datetime(2028, 11, 5, 12, tzinfo=UTC)  # 07:00 EST
    assert periods.due_at(at, period="daily", zone="America/New_York", hour=7) == (
        datetime(2028, 11, 4, 11, tzinfo=UTC), "daily:2028-11-04")  # 07:00 EDT
    assert periods.next_after(at - timedelta(days=1), period="weekly",
                              zone="America/New_York", hour=7, weekday=6) == \
        datetime(2028, 11, 5, 12, tzinfo=UTC)


def test_a_person_turns_their_digest_on_from_the_console_and_a_bad_zone_is_named(
        brand, actors, live):
    Member.objects.create(brand=brand, user=actors["member"], role="viewer")
    page = Client()
    page.force_login(actors["member"])  # a viewer chooses their own email too
    path = f"/console/{brand.pk}/digest"
    assert "Your digest of Northwind Filing is off." in page.get(path).content.decode()
    refused = page.post(path, {"period": "weekly", "hour": "8", "weekday": "4",
                               "zone": "Mars/Olympus"})
    assert refused.status_code == 400
    assert "We don&#x27;t know the time zone &#x27;Mars/Olympus&#x27;" in refused.content.decode()
    assert not Digest.objects.filter(user=actors["member"]).exists()
    with wallclock.fixed(datetime(2028, 3, 6, 12, tzinfo=UTC)):  # a Monday
        saved = page.post(path, {"period": "weekly", "hour": "8", "weekday": "4",
                                 "zone": "Europe/London"}, follow=True)
    assert "the next one Fri 10 Mar 2028, 08:00 GMT" in saved.content.decode()
    assert engine_words(visible_text(saved.content.decode())) == []
    digest = Digest.objects.get(user=actors["member"], brand=brand)
    assert (digest.period, digest.hour, digest.weekday) == ("weekly", 8, 4)


def test_a_stranger_hears_404_from_a_brands_digest_page(brand, actors):
    stranger = Client()
    stranger.force_login(actors["outsider"])
    assert stranger.get(f"/console/{brand.pk}/digest").status_code == 404
    assert stranger.post(f"/console/{brand.pk}/digest", {"period": "daily", "hour": "7",
                                                         "weekday": "0"}).status_code == 404
    assert not Digest.objects.exists()
