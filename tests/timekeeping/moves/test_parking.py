"""Backoff and parking of a connection whose minute of timed moves fails (issue 31): tried
again after 1, 2, 4 … minutes (the timers' own waits, `timers.parking.delay`), parked after the
brand's `park_after` failed minutes in a row, retried now or given up; a refused row is no
failure of the connection (timekeeping.moves.parking, through the tick `phases.run_once`).
The tables are made by DDL, so these tests commit (transactional)."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.timekeeping.moves.test_moves import VENUE, make_venue
from timekeeping.access import keys
from timekeeping.basics import wallclock
from timekeeping.models import Connection, Delivery, Fault, Member, Record, SetAside
from timekeeping.moves import job, parking
from timekeeping.tick import phases
from timekeeping.timers import parking as timer_parking
from timekeeping.webhooks import catalogue

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]
AUCKLAND = ZoneInfo("Pacific/Auckland")
# NZDT, UTC+13. Ten seconds before a minute: the first wait (54 to 66 s) ends in the next
# minute, never in the failed one, whose job has run (once a minute per connection).
T0 = datetime(2027, 3, 14, 9, 29, 50, tzinfo=AUCKLAND)
MINUTE = timedelta(minutes=1)


@pytest.fixture
def venue():
    return make_venue("Harbour Kitchen", "harbour", VENUE, zone="Pacific/Auckland")


def link_of(venue) -> Connection:
    return Connection.objects.select_related("brand").get(pk=venue.link.pk)


def unreachable(venue) -> None:
    """Its database alias removed from the settings: each minute fails as a whole."""
    Connection.objects.filter(pk=venue.link.pk).update(database="nowhere")


def reachable(venue) -> None:
    Connection.objects.filter(pk=venue.link.pk).update(database="default")


def tried(venue) -> int:
    """How many of its minutes failed: the tick's fault counts each try."""
    fault = Fault.objects.filter(phase="moves", where=venue.link.pk).first()
    return fault.count if fault else 0


def test_a_failing_connection_is_tried_on_its_backoff_and_parked_after_ten(venue):
    unreachable(venue)
    instant, tries = T0, []
    for attempt in range(1, 11):
        phases.run_once(now=instant)
        link = link_of(venue)
        assert (link.attempts, tried(venue)) == (attempt, attempt)
        tries.append(instant)
        if attempt == 10:
            break
        # The timers' own schedule, seeded by the connection's id: one function for both.
        assert link.next_attempt == instant + timer_parking.delay(attempt, seed=link.pk)
        assert job.due_connections(now=link.next_attempt - timedelta(seconds=1)) == []
        phases.run_once(now=link.next_attempt - timedelta(seconds=1))  # not yet: passed by
        assert (link_of(venue).attempts, tried(venue)) == (attempt, attempt)
        instant = link.next_attempt
    gaps = [(b - a) / MINUTE for a, b in zip(tries, tries[1:], strict=False)]
    assert [g / n for g, n in zip(gaps, [1, 2, 4, 8, 16, 32, 64, 128, 256], strict=True)
            if not 0.9 <= g / n <= 1.1] == []
    parked = link_of(venue)
    assert (parked.parked, parked.next_attempt, parked.paused) == (instant, None, False)
    assert "ConnectionDoesNotExist" in parked.last_error and "nowhere" in parked.last_error
    assert Record.objects.filter(kind="connection.failed").count() == 10
    event = Record.objects.get(kind="connection.parked")
    assert event.data["attempts"] == 10 and event.data["connection"] == parked.pk
    said = catalogue.event(event)
    assert said["type"] == "connection.parked" and said["objects"] == {"connection": parked.pk}
    assert "failed 10 times in a row, so they were parked" in said["summary"]
    # No phase of the tick tries it again, however long it waits.
    for later in (MINUTE, timedelta(hours=6), timedelta(days=30)):
        assert phases.run_once(now=instant + later).faults == []
    assert (link_of(venue).attempts, tried(venue)) == (10, 10)


def test_the_brand_sets_how_many_failed_minutes_park_it(venue):
    venue.link.brand.park_after = 2
    venue.link.brand.save(update_fields=["park_after"])
    unreachable(venue)
    phases.run_once(now=T0)
    phases.run_once(now=link_of(venue).next_attempt)
    assert link_of(venue).parked is not None


def test_a_minute_that_works_resets_the_count(venue):
    unreachable(venue)
    phases.run_once(now=T0)
    phases.run_once(now=link_of(venue).next_attempt)
    assert link_of(venue).attempts == 2
    reachable(venue)
    back = link_of(venue).next_attempt
    result = phases.run_once(now=back)
    link = link_of(venue)
    assert [m.connection for m in result.moves if m.ran] == [link.pk]
    assert (link.attempts, link.next_attempt, link.last_error, link.last_run) == (0, None, "",
                                                                               back)
    assert Fault.objects.get(phase="moves").resolved == back
    # A failure after it waits a minute again, not eight.
    unreachable(venue)
    later = back + timedelta(hours=1)
    phases.run_once(now=later)
    assert link_of(venue).next_attempt == later + timer_parking.delay(1, seed=link.pk)


def test_a_refused_row_is_no_failure_of_the_connection():
    london = make_venue("Corner Kitchen", "corner", VENUE)
    # Its moment, the closing hour of its day in London, falls before the calendar (A6).
    lost = london.model("orders").objects.create(customer="Year one", status="placed",
                                                 pickup_at=datetime(1, 1, 1, tzinfo=UTC))
    for minute in range(3):
        phases.run_once(now=T0 + minute * MINUTE)
    assert SetAside.objects.get(row=lost.pk).code.startswith("MOMENT_OUT_OF_RANGE")
    link = link_of(london)
    assert (link.attempts, link.next_attempt, link.parked) == (0, None, None)
    assert link.last_run == T0 + 2 * MINUTE  # tried each minute, as before
    assert not Fault.objects.exists()


def test_the_owner_is_told_once_that_it_waits_longer_after_each_failure(venue):
    owner = get_user_model().objects.create_user("kitchen", email="chef@harbour.test")
    venue.link.brand.owner = owner
    venue.link.brand.save(update_fields=["owner"])
    unreachable(venue)
    with wallclock.fixed(T0):  # the email is written at the real clock's time: the tick's
        phases.run_once(now=T0)
        phases.run_once(now=link_of(venue).next_attempt)
    [told] = Delivery.objects.filter(idempotency_key__startswith="fault:")
    assert "wait longer after each failure; after 10 failures in a row we stop trying" in (
        told.payload["body"])


def park(venue) -> Connection:
    venue.link.brand.park_after = 1
    venue.link.brand.save(update_fields=["park_after"])
    unreachable(venue)
    phases.run_once(now=T0)
    assert link_of(venue).parked == T0
    return link_of(venue)


def test_retry_now_runs_its_minute_at_the_next_tick(venue):
    placed = venue.model("orders").objects.create(customer="Ines", status="placed",
                                                  pickup_at=T0 - timedelta(days=2))
    link = park(venue)
    reachable(venue)
    later = T0 + timedelta(hours=3)
    retried = parking.retry_now(link.pk, by="owner", now=later)
    assert (retried.parked, retried.next_attempt, retried.attempts) == (None, None, 1)
    assert Record.objects.get(kind="connection.retried").data == {
        "connection": link.pk, "by": "owner", "attempts": 1}
    phases.run_once(now=later + MINUTE)
    assert venue.model("orders").objects.get(pk=placed.pk).status == "cancelled"
    assert link_of(venue).attempts == 0
    with pytest.raises(parking.NotParked):
        parking.retry_now(link.pk, by="owner", now=later)


def test_a_retried_connection_that_fails_again_is_parked_again_at_once(venue):
    link = park(venue)
    parking.retry_now(link.pk, by="owner", now=T0 + MINUTE)
    phases.run_once(now=T0 + 2 * MINUTE)
    again = link_of(venue)
    assert (again.attempts, again.parked) == (2, T0 + 2 * MINUTE)
    assert Record.objects.filter(kind="connection.parked").count() == 2


def test_give_up_pauses_it_until_someone_resumes_it(venue):
    link = park(venue)
    given_up = parking.give_up(link.pk, by="owner", now=T0 + MINUTE)
    assert (given_up.paused, given_up.parked, given_up.attempts, given_up.next_attempt) == (
        True, None, 0, None)
    assert Record.objects.get(kind="connection.given_up").data == {
        "connection": link.pk, "by": "owner", "attempts": 1}
    assert job.due_connections(now=T0 + timedelta(days=1)) == []
    with pytest.raises(parking.NotParked):
        parking.give_up(link.pk, by="owner", now=T0 + MINUTE)
    # Resumed (the Timed moves page) with its database back: it runs at once.
    Connection.objects.filter(pk=link.pk).update(paused=False, database="default")
    assert [found.pk for found in job.due_connections(now=T0 + 2 * MINUTE)] == [link.pk]


def _api(client, brand_id, verb="", **extra):
    path = f"/api/brands/{brand_id}/connection" + (f"/{verb}" if verb else "")
    with wallclock.fixed(T0 + MINUTE):
        if not verb:
            return client.get(path, **extra)
        return client.post(path, content_type="application/json", **extra)


def test_the_api_says_how_it_fares_and_retries_or_gives_it_up(venue):
    brand = venue.link.brand
    users = get_user_model().objects
    brand.owner = users.create_user("kitchen")
    brand.save(update_fields=["owner"])
    manager = users.create_user("sous")
    Member.objects.create(brand=brand, user=manager, role=Member.Role.MANAGER)
    link = park(venue)
    made = keys.make(brand=brand, name="ops", by=None, now=T0)
    as_key = {"HTTP_AUTHORIZATION": f"Bearer {made.secret}"}
    read = _api(Client(), brand.pk, **as_key).json()
    assert (read["id"], read["attempts"], read["next_attempt"]) == (link.pk, 1, None)
    assert read["parked"] is not None and read["failed_with"].startswith(
        "django.utils.connection.ConnectionDoesNotExist")
    answer = _api(Client(), brand.pk, "retry", **as_key)
    assert answer.status_code == 200 and answer.json()["parked"] is None
    assert Record.objects.get(kind="connection.retried").data["by"].startswith("key ")
    refused = _api(Client(), brand.pk, "retry", **as_key)
    assert refused.status_code == 409 and "not parked" in refused.json()["connection"][0]
    phases.run_once(now=T0 + 2 * MINUTE)  # still unreachable: parked again at once
    sous = Client()
    sous.force_login(manager)
    given_up = _api(sous, brand.pk, "give-up")
    assert given_up.status_code == 200 and given_up.json()["paused"] is True
    stranger = Client()
    stranger.force_login(users.create_user("passer-by"))
    Connection.objects.filter(pk=link.pk).update(parked=T0, paused=False)
    for verb in ("", "retry", "give-up"):
        assert _api(stranger, brand.pk, verb).status_code == 404
    assert link_of(venue).parked == T0  # the stranger changed nothing


def test_why_a_row_waits_says_the_timed_moves_back_off_or_are_parked(venue):
    brand = venue.link.brand
    brand.owner = get_user_model().objects.create_user("kitchen")
    brand.save(update_fields=["owner"])
    placed = venue.model("orders").objects.create(customer="Ines", status="placed",
                                                  pickup_at=T0 - timedelta(days=2))
    unreachable(venue)
    phases.run_once(now=T0)
    retry_at = link_of(venue).next_attempt
    reachable(venue)  # back again, before the job tries it
    owner = Client()  # signed in after the tick, whose housekeeping ends sessions past T0
    owner.force_login(brand.owner)

    def why(now):
        with wallclock.fixed(now):
            answer = owner.get(f"/console/{brand.pk}/why", {"q": f"orders:{placed.pk}"})
        assert answer.status_code == 200
        return answer.content.decode()

    said = why(T0 + timedelta(seconds=5))
    assert "The timed moves failed once; the job tries again" in said
    assert retry_at.astimezone(AUCKLAND).strftime("%H:%M") in said
    Connection.objects.filter(pk=venue.link.pk).update(parked=T0, next_attempt=None)
    assert "so they were parked: nothing moves until someone retries them" in why(T0 + MINUTE)
