"""Timed moves on real SQL tables built from a manifest. The tables are made by DDL, so these
tests commit (transactional)."""

import copy
import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from tests.processes import needs_postgres, start_manage
from timekeeping import manifests
from timekeeping.basics import wallclock
from timekeeping.models import Brand, Connection, RowAudit, SetAside
from timekeeping.moves import job
from timekeeping.moves.rows import MoveRefused, Venue, move
from timekeeping.tick import phases

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]
VENUE = json.loads((Path(__file__).resolve().parents[3] / "timekeeping" / "manifests" /
                    "examples" / "venue.json").read_text())
HOURS = [("mon", "11:00", "21:00", False), ("tue", "11:00", "21:00", True),
         ("wed", "11:00", "21:00", True), ("thu", "11:00", "21:00", True),
         ("fri", "11:00", "21:00", True), ("sat", "18:00", "02:00", True),
         ("sun", "12:00", "20:00", True)]


def utc(*parts):
    return datetime(*parts, tzinfo=UTC)


@pytest.fixture
def venue():
    return make_venue("Corner Kitchen", "corner", VENUE)


def make_venue(name, slug, document, zone=None):
    brand = Brand.objects.create(name=name, slug=slug)
    document = copy.deepcopy(document)
    if zone:
        document["calendar"]["zone"] = zone
    manifests.load(brand, document)
    found = Venue.of(Connection.objects.select_related("brand").get(brand=brand))
    found.model("settings").objects.create(no_show_at="10:00", offer_hours=24,
                                           arrive_from="15:00", cancel_hours=48, door_on=True)
    for weekday, opens, closes, is_open in HOURS:
        found.model("opening_hours").objects.create(weekday=weekday, opens=opens, closes=closes,
                                                    open=is_open)
    return found


def order(venue, pickup, status="placed"):
    return venue.model("orders").objects.create(customer="Ines", pickup_at=pickup,
                                                status=status)


def run(venue, now, cap=job.CAP):
    venue.link.refresh_from_db()
    return job.run_connection(venue.link, now=now, holder="test:1:x", cap=cap)


def state(venue, table, pk):
    return venue.model(table).objects.get(pk=pk)


def test_it_cancels_an_order_still_placed_at_the_closing_hour_of_its_day(venue):
    friday = order(venue, utc(2026, 10, 23, 11, 30))  # 12:30 BST on Friday 23 October
    assert run(venue, utc(2026, 10, 23, 19, 59)).moved == []  # 20:59 BST: still open
    minute = run(venue, utc(2026, 10, 23, 20))  # 21:00 BST
    assert minute.moved == [("orders", friday.pk)]
    row = state(venue, "orders", friday.pk)
    assert (row.status, row.cancel_code) == ("cancelled", "closed")
    trail = RowAudit.objects.get(table="orders", row=friday.pk)
    assert (trail.kind, trail.who) == ("timed move", "timed move")
    assert trail.before["status"] == "placed" and trail.after["status"] == "cancelled"


def test_it_reads_a_21_00_closing_as_21_00_in_winter_too(venue):
    winter = order(venue, utc(2026, 11, 27, 12, 30))  # a Friday in GMT
    assert run(venue, utc(2026, 11, 27, 20, 59)).moved == []
    assert run(venue, utc(2026, 11, 27, 21)).moved == [("orders", winter.pk)]


def test_it_ends_a_closed_monday_at_midnight_and_a_saturday_past_midnight(venue):
    monday = order(venue, utc(2026, 10, 26, 12))  # closed on Mondays
    saturday = order(venue, utc(2026, 10, 24, 19))  # closes 02:00 Sunday, after the change
    assert run(venue, utc(2026, 10, 25, 1, 59)).moved == []
    assert run(venue, utc(2026, 10, 25, 2)).moved == [("orders", saturday.pk)]
    assert run(venue, utc(2026, 10, 27, 0)).moved == [("orders", monday.pk)]


def test_it_makes_a_guest_a_no_show_at_ten_the_calendar_day_after(venue):
    stays = venue.model("stays")
    guest = stays.objects.create(guest="Ola", arrive=date(2026, 10, 24), status="booked")
    assert run(venue, utc(2026, 10, 25, 9, 59)).moved == []  # 09:00Z would be 10:00 BST
    assert run(venue, utc(2026, 10, 25, 10)).moved == [("stays", guest.pk)]
    assert state(venue, "stays", guest.pk).status == "no_show"


def test_it_gives_a_lapsed_offer_back_and_empties_the_friend(venue):
    tickets = venue.model("tickets")
    ticket = tickets.objects.create(holder="Ana", pending_email="friend@example.test",
                                    offer_until=utc(2026, 11, 30, 18), doors_at=utc(2026, 12, 5),
                                    valid_to=utc(2026, 12, 6), status="offered")
    run(venue, utc(2026, 11, 30, 18))
    row = state(venue, "tickets", ticket.pk)
    assert (row.status, row.pending_email) == ("valid", None)


def test_it_never_fires_a_moment_with_no_value(venue):
    tickets = venue.model("tickets")
    ticket = tickets.objects.create(holder="Ana", offer_until=None, doors_at=utc(2026, 12, 5),
                                    valid_to=utc(2026, 12, 6), status="offered")
    assert run(venue, utc(2030, 1, 1)).moved == []
    assert state(venue, "tickets", ticket.pk).status == "offered"


def test_it_closes_at_the_venue_hour_in_new_york_across_the_spring_change():
    kitchen = make_venue("Bodega", "bodega", VENUE, zone="America/New_York")
    before = order(kitchen, utc(2026, 3, 6, 17))  # Friday, EST
    after = order(kitchen, utc(2026, 3, 13, 16))  # Friday, EDT
    assert run(kitchen, utc(2026, 3, 7, 1, 59)).moved == []
    assert run(kitchen, utc(2026, 3, 7, 2)).moved == [("orders", before.pk)]  # 21:00 EST
    assert run(kitchen, utc(2026, 3, 14, 0, 59)).moved == []
    assert run(kitchen, utc(2026, 3, 14, 1)).moved == [("orders", after.pk)]  # 21:00 EDT


def test_it_moves_at_most_500_a_minute_oldest_first_and_drains_the_backlog(venue):
    orders = venue.model("orders")
    orders.objects.bulk_create([
        orders(customer=f"c{n}", pickup_at=utc(2026, 10, 1) + timedelta(hours=n),
               status="placed") for n in range(1200)])
    first = run(venue, utc(2026, 12, 1), cap=500)
    assert len(first.moved) == 500
    moved_first = {pk for _, pk in first.moved}
    oldest = set(orders.objects.order_by("pickup_at").values_list("pk", flat=True)[:500])
    assert moved_first == oldest
    second = run(venue, utc(2026, 12, 1, 0, 1), cap=500)
    third = run(venue, utc(2026, 12, 1, 0, 2), cap=500)
    assert (len(second.moved), len(third.moved)) == (500, 200)
    assert not orders.objects.filter(status="placed").exists()


def test_it_leaves_a_row_moved_or_re_dated_by_a_person_after_the_prefilter(venue):
    moved = order(venue, utc(2026, 10, 23, 11))
    re_dated = order(venue, utc(2026, 10, 23, 12))
    now = utc(2026, 10, 23, 21)
    due = job.candidates(venue, now, job.CAP)
    assert {item.pk for item in due} == {moved.pk, re_dated.pk}
    move(venue, "orders", moved.pk, "confirmed", who="staff", at=now)
    orders = venue.model("orders")
    orders.objects.filter(pk=re_dated.pk).update(pickup_at=utc(2026, 10, 30, 12))
    assert [job.move_one(venue, item, now) for item in due] == ["left", "left"]
    assert state(venue, "orders", moved.pk).status == "confirmed"
    assert state(venue, "orders", re_dated.pk).status == "placed"


def test_it_sets_a_refused_row_aside_for_an_hour_and_never_holds_newer_rows_up(venue):
    document = copy.deepcopy(VENUE)
    document["tables"]["orders"]["states"]["timed"][0]["set"] = {"cancel_code": "x" * 40}
    document["tables"]["orders"]["columns"].append({"ref": "note", "type": "text",
                                                    "nullable": True})
    manifests.load(venue.link.brand, document)
    refused = Venue.of(venue.link)
    stuck = order(refused, utc(2026, 10, 23, 11))
    minute = run(refused, utc(2026, 10, 23, 21))
    assert minute.set_aside == 1 and minute.moved == []
    aside = SetAside.objects.get(row=stuck.pk)
    assert aside.rule == 1 and "cancel_code" in aside.code
    assert aside.until == utc(2026, 10, 23, 22)
    assert run(refused, utc(2026, 10, 23, 21, 30)).set_aside == 0  # left alone for the hour
    assert run(refused, utc(2026, 10, 23, 22, 1)).set_aside == 1  # tried again after it


def test_it_skips_a_paused_connection(venue):
    order(venue, utc(2026, 10, 23, 11))
    Connection.objects.filter(pk=venue.link.pk).update(paused=True)
    with wallclock.fixed(utc(2026, 10, 23, 21)):
        result = phases.run_once(now=utc(2026, 10, 23, 21))
    assert not result.moves
    Connection.objects.filter(pk=venue.link.pk).update(paused=False)
    with wallclock.fixed(utc(2026, 10, 23, 21, 1)):
        result = phases.run_once(now=utc(2026, 10, 23, 21, 1))
    assert sum(len(m.moved) for m in result.moves) == 1  # every row already due moves


def test_a_person_moves_only_by_listed_moves_and_inside_their_time(venue):
    tickets = venue.model("tickets")
    ticket = tickets.objects.create(holder="Ana", doors_at=utc(2026, 12, 5, 19),
                                    valid_to=utc(2026, 12, 5, 23), status="valid")
    with pytest.raises(MoveRefused) as refused:
        move(venue, "tickets", ticket.pk, "no_show", who="staff", at=utc(2026, 12, 5, 19))
    assert refused.value.details["reason"] == "not-listed"
    with pytest.raises(MoveRefused) as early:
        move(venue, "tickets", ticket.pk, "checked_in", who="staff", at=utc(2026, 12, 5, 18, 29))
    assert early.value.code == "STATE_MOVE_REFUSED"
    assert early.value.details == {"requires": "time", "bound": "after",
                                   "at": utc(2026, 12, 5, 18, 30)}
    with pytest.raises(MoveRefused) as late:
        move(venue, "tickets", ticket.pk, "checked_in", who="staff", at=utc(2026, 12, 5, 23))
    assert late.value.details["bound"] == "before"
    move(venue, "tickets", ticket.pk, "checked_in", who="staff", at=utc(2026, 12, 5, 18, 30))
    assert state(venue, "tickets", ticket.pk).status == "checked_in"


def test_the_rows_api_creates_moves_refuses_and_audits(venue, client):
    owner = get_user_model().objects.create_user("chef", password="pw")
    Brand.objects.filter(pk=venue.link.brand_id).update(owner=owner)
    client.force_login(owner)
    made = client.post("/api/tables/orders/rows", {"customer": "Rui",
                                                   "pickup_at": "2026-12-04T12:30:00Z"},
                       content_type="application/json")
    assert made.status_code == 201 and made.json()["status"] == "placed"
    pk = made.json()["id"]
    refused = client.post(f"/api/tables/orders/rows/{pk}/move", {"to": "ready"},
                          content_type="application/json")
    assert refused.status_code == 409 and refused.json()["code"] == "STATE_MOVE_REFUSED"
    state_patch = client.patch(f"/api/tables/orders/rows/{pk}", {"status": "ready"},
                               content_type="application/json")
    assert state_patch.status_code == 409
    moved = client.post(f"/api/tables/orders/rows/{pk}/move", {"to": "confirmed"},
                        content_type="application/json")
    assert moved.status_code == 200 and moved.json()["status"] == "confirmed"
    listed = client.get("/api/tables/orders/rows?state=confirmed").json()["rows"]
    assert [row["id"] for row in listed] == [pk]
    kinds = list(RowAudit.objects.filter(row=pk).values_list("kind", flat=True))
    assert kinds == ["create", "move"]
    bad = client.post("/api/tables/orders/rows", {"customer": "x" * 200,
                                                  "pickup_at": "2026-12-04T12:30:00Z"},
                      content_type="application/json")
    assert bad.status_code == 400 and "customer" in bad.json()
    stranger = get_user_model().objects.create_user("stranger", password="pw")
    client.force_login(stranger)
    assert client.get(f"/api/tables/orders/rows/{pk}").status_code == 404


@needs_postgres
def test_two_ticks_at_once_move_each_row_once(venue):
    orders = venue.model("orders")
    orders.objects.bulk_create([orders(customer=f"c{n}", pickup_at=utc(2026, 10, 1, 12),
                                       status="placed") for n in range(300)])
    processes = [start_manage("tick") for _ in range(2)]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    assert orders.objects.filter(status="cancelled").count() == 300
    trails = RowAudit.objects.filter(table="orders", kind="timed move")
    assert trails.count() == 300 and trails.values("row").distinct().count() == 300


def test_it_flags_a_cancellation_inside_48_hours_of_the_arrival(venue):
    stays = venue.model("stays")
    early = stays.objects.create(guest="Ana", arrive=date(2026, 12, 10), status="booked")
    late = stays.objects.create(guest="Bea", arrive=date(2026, 12, 10), status="booked")
    move(venue, "stays", early.pk, "cancelled", who="guest", at=utc(2026, 12, 8, 14, 59))
    move(venue, "stays", late.pk, "cancelled", who="guest", at=utc(2026, 12, 8, 15))
    assert state(venue, "stays", early.pk).late_cancel is False
    assert state(venue, "stays", late.pk).late_cancel is True  # 15:00 GMT on the 10th, -48h


def test_a_guest_hears_public_codes_and_staff_hear_state_codes(venue):
    tickets = venue.model("tickets")
    ticket = tickets.objects.create(holder="Ana", doors_at=utc(2026, 12, 5, 19),
                                    valid_to=utc(2026, 12, 5, 23), status="valid")
    with pytest.raises(MoveRefused) as early:
        move(venue, "tickets", ticket.pk, "checked_in", who="guest", at=utc(2026, 12, 5, 18),
             audience="public")
    assert early.value.code == "PUBLIC_TOO_EARLY"
    assert early.value.details == {"from": utc(2026, 12, 5, 18, 30), "at": utc(2026, 12, 5, 19)}
    with pytest.raises(MoveRefused) as late:
        move(venue, "tickets", ticket.pk, "checked_in", who="guest", at=utc(2026, 12, 6),
             audience="public")
    assert (late.value.code, late.value.details) == ("PUBLIC_TOO_LATE",
                                                     {"at": utc(2026, 12, 5, 23)})


def test_sample_rows_are_written_relative_to_now_moved_like_others_and_removed(venue):
    from timekeeping.moves import samples

    now = utc(2026, 10, 23, 11)
    made = samples.add(venue, "orders", [{"customer": "sample", "pickup_at": {"@in": "PT20M"}},
                                         {"customer": "old", "pickup_at": {"@in": "-P1D"}}],
                       now=now)
    orders = venue.model("orders")
    assert orders.objects.get(pk=made[0]).pickup_at == now + timedelta(minutes=20)
    assert run(venue, utc(2026, 10, 23, 20)).moved == [("orders", made[1]), ("orders", made[0])]
    assert samples.remove(venue) == 2
    assert not orders.objects.exists()
    assert not RowAudit.objects.filter(table="orders").exists()
    with pytest.raises(ValueError, match="@in: 'soon'"):
        samples.resolve({"@in": "soon"}, now)


def test_operators_see_the_backlog_what_is_set_aside_and_what_moves_next(venue):
    from timekeeping.moves import operate

    order(venue, utc(2026, 10, 22, 11))
    order(venue, utc(2026, 10, 23, 11))
    tomorrow = order(venue, utc(2026, 10, 24, 11))
    lines = operate.backlog(venue.link, now=utc(2026, 10, 23, 21))
    orders = next(line for line in lines if line.table == "orders")
    assert (orders.due, orders.oldest, orders.move) == (2, utc(2026, 10, 22, 20),
                                                         "placed → cancelled")
    ahead = operate.preview(venue.link, now=utc(2026, 10, 23, 21), hours=30)
    assert ahead == [f"2026-10-25 02:00Z  orders #{tomorrow.pk}  placed → cancelled  "
                     "(timed move 1: pickup_at at the closing hour)"]
    assert operate.set_aside(venue.link, now=utc(2026, 10, 23, 21)) == []


def test_a_lapsed_offer_renews_the_link_code_and_an_offer_stamps_its_end(venue):
    tickets = venue.model("tickets")
    made = tickets.objects.create(holder="Ana", doors_at=utc(2026, 12, 5),
                                  valid_to=utc(2026, 12, 6), status="valid")
    from timekeeping.moves.rows import update

    row = update(venue, "tickets", made.pk, {"pending_email": "friend@example.test"},
                 who="Ana", at=utc(2026, 11, 30, 9))
    first_code = row.link_token
    assert first_code and len(first_code) == 16
    offered = move(venue, "tickets", made.pk, "offered", who="Ana", at=utc(2026, 11, 30, 9))
    assert offered.offer_until == utc(2026, 12, 1, 9)  # now plus the setting's 24 hours
    run(venue, utc(2026, 12, 1, 9))
    lapsed = state(venue, "tickets", made.pk)
    assert (lapsed.status, lapsed.pending_email) == ("valid", None)
    assert lapsed.link_token != first_code  # the friend's old link opens nothing now


def test_a_timed_cancellation_queues_its_email_but_a_sample_row_sends_none(venue):
    from timekeeping.models import Delivery
    from timekeeping.moves import samples

    real = venue.model("orders").objects.create(customer="Rui", email="rui@example.test",
                                                pickup_at=utc(2026, 10, 23, 11), status="placed")
    samples.add(venue, "orders", [{"customer": "Sam", "email": "sam@example.test",
                                   "pickup_at": utc(2026, 10, 23, 11)}], now=utc(2026, 10, 23))
    assert len(run(venue, utc(2026, 10, 23, 20)).moved) == 2
    mail = Delivery.objects.get()
    assert mail.payload["to"] == ["rui@example.test"]
    assert mail.payload["subject"] == "Your order was cancelled"
    assert "Sorry Rui" in mail.payload["body"] and "code: closed" in mail.payload["body"]
    assert str(real.pk) in mail.idempotency_key


@pytest.mark.parametrize(
    ("hours", "at", "sent"),
    [(24, "09:00", utc(2026, 11, 27, 9)),   # 24 h before Saturday 20:00 reaches Friday: 09:00
     (3, "09:00", utc(2026, 11, 28, 9)),    # 3 h reaches Saturday itself: 09:00 Saturday
     (3, None, utc(2026, 11, 28, 17))],     # without a wall time: the hour itself
)
def test_it_reminds_at_a_wall_time_on_the_day_the_lead_reaches(venue, hours, at, sent):
    from timekeeping.models import Delivery

    document = copy.deepcopy(VENUE)
    lead = document["tables"]["orders"]["reminders"][0]["lead"]
    lead["hours"] = hours
    if at is None:
        lead.pop("at")
    else:
        lead["at"] = at
    manifests.load(venue.link.brand, document)
    here = Venue.of(venue.link)
    here.model("orders").objects.create(customer="Rui", email="rui@example.test",
                                        pickup_at=utc(2026, 11, 28, 20), status="confirmed")
    assert run(here, sent - timedelta(minutes=1)).reminders == 0
    assert run(here, sent).reminders == 1
    run(here, sent + timedelta(minutes=1))  # the next minute queues nothing new
    assert Delivery.objects.filter(idempotency_key__contains="reminder1").count() == 1
    assert run(here, utc(2026, 11, 28, 20)).reminders == 0  # never once the moment is here


def test_a_creation_that_waits_for_a_time_is_judged_on_the_new_row(venue):
    from timekeeping.moves.rows import create

    document = copy.deepcopy(VENUE)
    document["tables"]["orders"]["states"]["create"] = {"requires": {"time": {
        "before": {"column": "pickup_at", "minus": {"minutes": 30}}}}}
    manifests.load(venue.link.brand, document)
    here = Venue.of(venue.link)
    made = create(here, "orders", {"customer": "Rui", "pickup_at": utc(2026, 12, 4, 12)},
                  who="guest", at=utc(2026, 12, 4, 11, 29))
    assert made.status == "placed"
    with pytest.raises(MoveRefused) as late:
        create(here, "orders", {"customer": "Rui", "pickup_at": utc(2026, 12, 4, 12)},
               who="guest", at=utc(2026, 12, 4, 11, 30), audience="public")
    assert late.value.code == "PUBLIC_TOO_LATE"
    assert here.model("orders").objects.count() == 1  # nothing was written


def test_a_timed_cancellation_voids_the_order_lines_by_their_own_move(venue):
    from timekeeping.moves import samples

    placed = order(venue, utc(2026, 10, 23, 11))
    lines = venue.model("order_lines")
    open_line = lines.objects.create(order_id=placed.pk, item="soup", status="open")
    served = lines.objects.create(order_id=placed.pk, item="bread", status="served")
    run(venue, utc(2026, 10, 23, 20))
    assert state(venue, "order_lines", open_line.pk).status == "void"
    assert state(venue, "order_lines", served.pk).status == "served"  # no listed move to void
    trail = RowAudit.objects.get(table="order_lines", row=open_line.pk)
    assert (trail.kind, trail.who) == ("effect", "timed move")
    made = samples.add(venue, "orders", [{"customer": "Sam", "pickup_at": utc(2026, 10, 30, 11)}],
                       now=utc(2026, 10, 29))
    lines.objects.create(order_id=made[0], item="tea", status="open")
    run(venue, utc(2026, 10, 30, 21))  # Friday's 21:00 closing, on GMT by then
    assert samples.remove(venue) == 2  # the sample order and the line its move touched
    assert lines.objects.count() == 2


def test_a_friend_moves_an_offered_ticket_by_its_link_and_hears_public_codes(venue, client):
    from timekeeping.moves.rows import update

    tickets = venue.model("tickets")
    made = tickets.objects.create(holder="Ana", doors_at=utc(2030, 12, 5, 19),
                                  valid_to=utc(2030, 12, 5, 23), status="valid")
    code = update(venue, "tickets", made.pk, {"pending_email": "f@example.test"}, who="Ana",
                  at=utc(2026, 11, 30)).link_token
    url = f"/api/public/{venue.link.brand_id}/tables/tickets/links/{code}/move"
    early = client.post(url, {"to": "checked_in"}, content_type="application/json")
    assert early.status_code == 409 and early.json()["code"] == "PUBLIC_TOO_EARLY"
    assert early.json()["details"]["from"] == "2030-12-05T18:30:00Z"
    assert client.post(url.replace(code, "wrong-code"), {"to": "offered"},
                       content_type="application/json").status_code == 404
    offered = client.post(url, {"to": "offered"}, content_type="application/json")
    assert offered.status_code == 200 and offered.json()["status"] == "offered"
    assert RowAudit.objects.filter(row=made.pk, kind="move").get().who.startswith("guest")


def test_money_held_by_an_order_is_taken_given_back_or_returned_at_its_moment(venue):
    from money import ledger
    from money.models import Hold

    orders = venue.model("orders")
    from timekeeping.moves.rows import create

    at = utc(2026, 10, 20, 9)
    kept = create(venue, "orders", {"customer": "Ines", "pickup_at": utc(2026, 10, 20, 12),
                                    "total": 1250}, who="Ines", at=at)
    dropped = create(venue, "orders", {"customer": "Rui", "pickup_at": utc(2026, 10, 20, 12),
                                       "total": 900}, who="Rui", at=at)
    forgotten = create(venue, "orders", {"customer": "Ola", "pickup_at": utc(2026, 10, 20, 12),
                                         "total": 700}, who="Ola", at=at)
    assert ledger.balance("corner:Ines", brand=venue.link.brand_id) == -1250
    for step in ("confirmed", "preparing", "ready", "picked_up"):
        move(venue, "orders", kept.pk, step, who="staff", at=at)
    move(venue, "orders", dropped.pk, "cancelled", who="Rui", at=at)
    move(venue, "orders", forgotten.pk, "confirmed", who="staff", at=at)
    states = dict(Hold.objects.values_list("amount", "state"))
    assert states == {1250: "taken", 900: "given_back", 700: "held"}
    assert run(venue, utc(2026, 10, 20, 13, 59)).holds_given_back == 0
    minute = run(venue, utc(2026, 10, 20, 14))  # pickup plus two hours
    assert minute.holds_given_back == 1
    assert ledger.balance("corner:Ola", brand=venue.link.brand_id) == 0
    assert orders.objects.get(pk=forgotten.pk).status == "confirmed"  # the row is not moved


def test_a_refused_give_back_waits_an_hour(venue):
    from money import ledger
    from money.models import Account, Hold
    from timekeeping.moves.rows import create

    create(venue, "orders", {"customer": "Ola", "pickup_at": utc(2026, 10, 20, 12),
                             "total": 700}, who="Ola", at=utc(2026, 10, 20, 9))
    Account.objects.filter(key="held:corner:Ola").update(floor=701)
    assert run(venue, utc(2026, 10, 20, 14)).holds_given_back == 0
    hold = Hold.objects.get()
    assert (hold.state, hold.last_refusal) == ("held", "floor")
    assert hold.retry_after == utc(2026, 10, 20, 15)
    assert run(venue, utc(2026, 10, 20, 14, 30)).holds_given_back == 0
    Account.objects.filter(key="held:corner:Ola").update(floor=None)
    assert run(venue, utc(2026, 10, 20, 15)).holds_given_back == 1
    assert ledger.balance("corner:Ola", brand=venue.link.brand_id) == 0


@pytest.mark.parametrize(
    ("zone", "pickup", "closing"),
    [
        ("Europe/London", utc(2026, 3, 27, 12), utc(2026, 3, 27, 21)),     # Friday, GMT
        ("Europe/London", utc(2026, 4, 3, 11), utc(2026, 4, 3, 20)),       # Friday, BST
        ("America/New_York", utc(2026, 10, 30, 16), utc(2026, 10, 31, 1)),  # Friday, EDT
        ("America/New_York", utc(2026, 11, 6, 17), utc(2026, 11, 7, 2)),    # Friday, EST
    ],
)
def test_it_closes_at_21_00_on_either_side_of_each_change(zone, pickup, closing):
    kitchen = make_venue(f"K {zone}", zone.split("/")[1].lower().replace("_", ""), VENUE,
                         zone=zone)
    placed = order(kitchen, pickup)
    assert run(kitchen, closing - timedelta(seconds=1)).moved == []
    assert run(kitchen, closing).moved == [("orders", placed.pk)]


def test_a_move_that_waits_for_a_setting_is_refused_until_it_holds(venue):
    tickets = venue.model("tickets")
    ticket = tickets.objects.create(holder="Ana", doors_at=utc(2026, 12, 5, 19),
                                    valid_to=utc(2026, 12, 5, 23), status="valid")
    venue.model("settings").objects.update(door_on=False)
    with pytest.raises(MoveRefused) as refused:
        move(venue, "tickets", ticket.pk, "checked_in", who="staff", at=utc(2026, 12, 5, 19))
    assert refused.value.details["requires"] == "setting"
    venue.model("settings").objects.update(door_on=True)
    move(venue, "tickets", ticket.pk, "checked_in", who="staff", at=utc(2026, 12, 5, 19))


def test_a_sample_order_lands_on_the_next_open_slot(venue):
    from timekeeping.moves import samples

    sunday_night = utc(2026, 11, 29, 21)  # Sunday closes 20:00; Monday is closed
    made = samples.add(venue, "orders", [{"customer": "Sam", "pickup_at": {
        "@in": "PT20M", "@slot": "opening_hours"}}], now=sunday_night)
    assert venue.model("orders").objects.get(pk=made[0]).pickup_at == utc(2026, 12, 1, 11)
    open_now = utc(2026, 12, 1, 12)  # Tuesday, open
    made = samples.add(venue, "orders", [{"customer": "Sue", "pickup_at": {
        "@in": "PT20M", "@slot": "opening_hours"}}], now=open_now)
    assert venue.model("orders").objects.get(pk=made[0]).pickup_at == utc(2026, 12, 1, 12, 20)


def test_connections_the_budget_does_not_reach_are_left_for_the_next_tick(venue, monkeypatch):
    """The budget runs out while the first connection's minute runs: the second connection's
    minute is the next tick's, and the tick says so. The next tick starts with it (the
    connection whose job ran least recently goes first), so no connection starves."""
    other = make_venue("Other Kitchen", "other-kitchen", VENUE)
    late = {venue.link.pk: order(venue, utc(2026, 10, 23, 11)).pk,
            other.link.pk: order(other, utc(2026, 10, 23, 11)).pk}
    seconds = [0.0]
    monkeypatch.setattr(phases.time, "monotonic", lambda: seconds[0])
    run_connection = job.run_connection

    def spends_the_budget(link, **kwargs):
        seconds[0] += 100.0  # this connection's minute takes longer than the whole budget
        return run_connection(link, **kwargs)

    monkeypatch.setattr(job, "run_connection", spends_the_budget)
    now = utc(2026, 10, 23, 21)
    first = phases.run_once(now=now, sweep=False)
    (reached,) = first.moves
    (unreached,) = first.moves_unreached
    assert {reached.connection, unreached} == set(late)
    assert "1 connection(s) left for the next tick (budget)" in first.summary()
    assert state(Venue.of(Connection.objects.get(pk=unreached)), "orders",
                 late[unreached]).status == "placed"
    second = phases.run_once(now=now + timedelta(minutes=1), sweep=False)
    assert [minute.connection for minute in second.moves] == [unreached]
    assert list(second.moves_unreached) == [reached.connection]
    assert state(Venue.of(Connection.objects.get(pk=unreached)), "orders",
                 late[unreached]).status == "cancelled"
