"""The events the catalogue added beside the records the product already kept (issue 30): a row
moved by a timed move and one set aside (the venue in London, through the tick, across the
autumn change), late timers after the tick was stopped, and a stopped tick told when it runs
again. Each is a record, and each reaches an endpoint that hears it."""

import copy
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from timekeeping import manifests
from timekeeping.basics import wallclock
from timekeeping.models import Brand, Connection, Delivery, Record
from timekeeping.moves.rows import Venue, move, update
from timekeeping.tick import phases
from timekeeping.timers import delays, outbox
from timekeeping.webhooks import endpoints

VENUE = json.loads((Path(__file__).resolve().parents[3] / "timekeeping" / "manifests" /
                    "examples" / "venue.json").read_text())
HOURS = [("mon", "11:00", "21:00", False), ("tue", "11:00", "21:00", True),
         ("wed", "11:00", "21:00", True), ("thu", "11:00", "21:00", True),
         ("fri", "11:00", "21:00", True), ("sat", "18:00", "02:00", True),
         ("sun", "12:00", "20:00", True)]


def utc(*parts):
    return datetime(*parts, tzinfo=UTC)


def venue_of(document):
    brand = Brand.objects.create(name="Corner Kitchen", slug="corner")
    manifests.load(brand, copy.deepcopy(document))
    found = Venue.of(Connection.objects.select_related("brand").get(brand=brand))
    found.model("settings").objects.create(no_show_at="10:00", offer_hours=24,
                                           arrive_from="15:00", cancel_hours=48, door_on=True)
    for weekday, opens, closes, is_open in HOURS:
        found.model("opening_hours").objects.create(weekday=weekday, opens=opens, closes=closes,
                                                    open=is_open)
    return found


def bodies(receiver):
    return [json.loads(body) for _, body in receiver.requests]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_a_timed_move_and_a_row_set_aside_are_events(receiver):
    document = copy.deepcopy(VENUE)
    venue = venue_of(document)
    endpoints.make(venue.link.brand, url=receiver.url, types=["row.moved", "row.set_aside"])
    # Friday 23 October 2026, BST: the order placed for 12:30 is cancelled at the 21:00 close.
    placed = venue.model("orders").objects.create(customer="Ines", status="placed",
                                                  pickup_at=utc(2026, 10, 23, 11, 30))
    with wallclock.fixed(utc(2026, 10, 23, 20)):
        phases.run_once(now=utc(2026, 10, 23, 20))
    moved = Record.objects.get(kind="row.moved")
    assert moved.data == {"table": "orders", "row": placed.pk, "from": "placed",
                          "to": "cancelled", "by": "timed move", "who": "timed move"}
    # After the change to GMT, a refused move sets its row aside.
    document["tables"]["orders"]["states"]["timed"][0]["set"] = {"cancel_code": "x" * 40}
    manifests.load(venue.link.brand, document)
    stuck = venue.model("orders").objects.create(customer="Ada", status="placed",
                                                 pickup_at=utc(2026, 11, 6, 12))
    with wallclock.fixed(utc(2026, 11, 6, 21)):
        phases.run_once(now=utc(2026, 11, 6, 21))
    aside = Record.objects.get(kind="row.set_aside")
    assert aside.data["row"] == stuck.pk and aside.data["rule"] == 1
    outbox.sweep(now=utc(2026, 11, 6, 21))
    assert [b["type"] for b in bodies(receiver)] == ["row.moved", "row.set_aside"]
    assert bodies(receiver)[0]["occurs_at"] == "2026-10-23T20:00:00Z"


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_a_person_moving_a_row_is_an_event_too_and_an_edit_is_not(receiver):
    venue = venue_of(VENUE)
    endpoints.make(venue.link.brand, url=receiver.url, types=["row.moved"])
    row = venue.model("orders").objects.create(customer="Ines", status="placed",
                                               pickup_at=utc(2026, 10, 30, 11, 30))
    with wallclock.fixed(utc(2026, 10, 30, 9)):
        update(venue, "orders", row.pk, {"customer": "Inés"}, who="user 1 (ana)",
               at=utc(2026, 10, 30, 9))
        move(venue, "orders", row.pk, to="confirmed", who="user 1 (ana)", at=utc(2026, 10, 30, 9))
    moved = Record.objects.filter(kind="row.moved")
    assert [(r.data["from"], r.data["to"], r.data["by"]) for r in moved] == [
        ("placed", "confirmed", "move")]
    assert Delivery.objects.filter(channel="webhook").count() == 1


def test_timers_fired_late_after_a_stop_are_one_event_per_batch(brand, receiver):
    endpoints.make(brand, url=receiver.url, types=["timer.late", "tick.stopped"])
    owed = utc(2026, 12, 3, 9)
    with wallclock.fixed(owed - timedelta(hours=1)):
        phases.run_once(now=owed - timedelta(hours=1))  # the tick ran, then stopped
        for n in range(3):
            delays.delay("timekeeping.noop", {}, brand=brand, key=f"late:{n}",
                         at=owed + timedelta(minutes=n))
    back = owed + timedelta(minutes=40)
    with wallclock.fixed(back):
        phases.run_once(now=back, sweep=False)
    late = Record.objects.get(kind="timer.late")
    assert late.data["timers"] == 3 and late.data["latest_by_s"] == 40 * 60
    stopped = Record.objects.get(kind="tick.stopped", brand=brand)
    assert stopped.data["stopped_s"] == 100 * 60
    outbox.sweep(now=back)
    assert sorted(b["type"] for b in bodies(receiver)) == ["tick.stopped", "timer.late"]


def test_a_tick_on_time_tells_no_stop_and_no_lateness(brand, receiver):
    endpoints.make(brand, url=receiver.url)
    at = utc(2026, 12, 3, 9)
    with wallclock.fixed(at):
        delays.delay("timekeeping.noop", {}, brand=brand, key="on-time", at=at)
        phases.run_once(now=at)
    with wallclock.fixed(at + timedelta(minutes=1)):
        phases.run_once(now=at + timedelta(minutes=1))
    assert not Record.objects.filter(kind__in=["timer.late", "tick.stopped"]).exists()
