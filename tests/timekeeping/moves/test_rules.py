"""The seed's rules on moves (A1, A7, A8, A11, A12) and rows whose moments leave the calendar
(A6). The venue is in Europe/London; the tables are made by DDL, so these tests commit."""

import copy
import logging
import threading
from datetime import UTC, date, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction

from tests.processes import needs_postgres
from tests.timekeeping.moves.test_moves import VENUE, make_venue, order, run, state, utc
from timekeeping import manifests
from timekeeping.basics import wallclock
from timekeeping.models import Brand, Delivery, SetAside
from timekeeping.moves import job, moments
from timekeeping.moves.owned import product_columns
from timekeeping.moves.rows import MoveRefused, Venue, move
from timekeeping.tick import phases

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]


@pytest.fixture
def venue():
    return make_venue("Corner Kitchen", "corner", VENUE)


def reloaded(venue, change) -> Venue:
    """The venue under a changed copy of its manifest (`change` edits the document's tables)."""
    document = copy.deepcopy(VENUE)
    change(document["tables"])
    manifests.load(venue.link.brand, document)
    return Venue.of(venue.link)


def refusal(call) -> MoveRefused:
    with pytest.raises(MoveRefused) as refused:
        call()
    return refused.value


def set_aside(table, pk) -> SetAside:
    return SetAside.objects.get(table=table, row=pk)


# -- A7/A8: a timed move waits for what its listed move waits for --------------------------------

def _offer_back_waits_for_the_door(tables):
    tables["tickets"]["states"]["moves"]["offered"] = [
        {"to": "valid", "requires": {"setting": [{"table": "settings", "column": "door_on",
                                                   "eq": True}]}},
        "checked_in"]


def test_it_sets_a_timed_move_aside_while_the_setting_its_move_waits_for_does_not_hold(venue):
    here = reloaded(venue, _offer_back_waits_for_the_door)
    here.model("settings").objects.update(door_on=False)
    ticket = here.model("tickets").objects.create(
        holder="Ana", pending_email="f@example.test", offer_until=utc(2026, 11, 30, 18),
        doors_at=utc(2026, 12, 5), valid_to=utc(2026, 12, 6), status="offered")
    now = utc(2026, 11, 30, 18)
    person = refusal(lambda: move(here, "tickets", ticket.pk, "valid", who="Ana", at=now))
    assert (person.code, person.details["requires"]) == ("STATE_MOVE_REFUSED", "setting")
    minute = run(here, now)  # the clock is refused as the person was
    assert (minute.moved, minute.set_aside) == ([], 1)
    aside = set_aside("tickets", ticket.pk)
    assert aside.code.startswith("STATE_MOVE_REFUSED: ") and "settings.door_on" in aside.code
    assert (aside.rule, aside.until) == (1, utc(2026, 11, 30, 19))
    assert state(here, "tickets", ticket.pk).status == "offered"
    here.model("settings").objects.update(door_on=True)
    assert run(here, utc(2026, 11, 30, 18, 59)).moved == []  # left alone for its hour
    assert run(here, utc(2026, 11, 30, 19)).moved == [("tickets", ticket.pk)]


def _lines_void_after_their_order_pickup(tables):
    lines = tables["order_lines"]
    lines["columns"].append({"ref": "due_at", "type": "timestamptz", "nullable": True})
    lines["states"]["moves"]["open"] = ["served", {"to": "void", "requires": {"time": {
        "after": {"via": "order_id", "column": "pickup_at"}}}}]
    lines["states"]["timed"] = [{"from": "open", "to": "void", "at": {"column": "due_at"}}]


def test_it_judges_the_time_a_timed_move_waits_for_through_a_link(venue):
    here = reloaded(venue, _lines_void_after_their_order_pickup)
    lines = here.model("order_lines")
    later = order(here, utc(2026, 12, 4, 18))  # Friday: its own cancellation is at 21:00
    earlier = order(here, utc(2026, 12, 4, 11))
    waiting = lines.objects.create(order_id=later.pk, item="soup", status="open",
                                   due_at=utc(2026, 12, 4, 11))
    ready = lines.objects.create(order_id=earlier.pk, item="tea", status="open",
                                 due_at=utc(2026, 12, 4, 11))
    now = utc(2026, 12, 4, 12)
    person = refusal(lambda: move(here, "order_lines", waiting.pk, "void", who="staff", at=now))
    assert person.details == {"requires": "time", "bound": "after", "at": utc(2026, 12, 4, 18)}
    minute = run(here, now)
    assert minute.moved == [("order_lines", ready.pk)] and minute.set_aside == 1
    assert set_aside("order_lines", waiting.pk).code.startswith("STATE_MOVE_REFUSED: ")
    assert state(here, "order_lines", waiting.pk).status == "open"


# -- A1: an undo is made only by a person who names the state they saw ----------------------------

def test_an_undo_needs_the_state_the_person_saw_under_the_lock(venue):
    ready = order(venue, utc(2026, 12, 4, 12), status="ready")
    at = utc(2026, 12, 4, 11)
    bare = refusal(lambda: move(venue, "orders", ready.pk, "preparing", who="staff", at=at))
    assert (bare.code, bare.details["reason"], bare.details["from"]) == (
        "STATE_MOVE_REFUSED", "undo-needs-seen", "ready")
    stale = refusal(lambda: move(venue, "orders", ready.pk, "preparing", who="staff", at=at,
                                 seen="preparing"))
    assert (stale.details["reason"], stale.details["from"]) == ("state-changed", "ready")
    guest = refusal(lambda: move(venue, "orders", ready.pk, "preparing", who="guest", at=at,
                                 audience="public"))
    assert (guest.code, guest.details["reason"]) == ("STATE_MOVE_REFUSED", "undo-by-staff-only")
    assert state(venue, "orders", ready.pk).status == "ready"
    move(venue, "orders", ready.pk, "preparing", who="staff", at=at, seen="ready")
    assert state(venue, "orders", ready.pk).status == "preparing"


def test_any_move_naming_a_state_the_row_has_left_is_refused(venue):
    placed = order(venue, utc(2026, 12, 4, 12))
    move(venue, "orders", placed.pk, "confirmed", who="staff", at=utc(2026, 12, 4, 9))
    late = refusal(lambda: move(venue, "orders", placed.pk, "cancelled", who="staff",
                                at=utc(2026, 12, 4, 9, 1), seen="placed"))
    assert late.details == {"reason": "state-changed", "from": "confirmed", "seen": "placed",
                            "to": "cancelled"}
    move(venue, "orders", placed.pk, "cancelled", who="staff", at=utc(2026, 12, 4, 9, 1),
         seen="confirmed")


def test_the_rows_api_passes_the_state_the_person_saw_as_from(venue, client):
    owner = get_user_model().objects.create_user("chef", password="pw")
    Brand.objects.filter(pk=venue.link.brand_id).update(owner=owner)
    client.force_login(owner)
    ready = order(venue, utc(2026, 12, 4, 12), status="ready")
    url = f"/api/tables/orders/rows/{ready.pk}/move"
    bare = client.post(url, {"to": "preparing"}, content_type="application/json")
    assert bare.status_code == 409
    assert (bare.json()["code"], bare.json()["details"]["reason"]) == ("STATE_MOVE_REFUSED",
                                                                      "undo-needs-seen")
    undone = client.post(url, {"to": "preparing", "from": "ready"},
                         content_type="application/json")
    assert undone.status_code == 200 and undone.json()["status"] == "preparing"


def _served_lines_undo_to_void(tables):
    tables["order_lines"]["states"]["moves"]["served"] = [{"to": "void", "undo": True}]


def test_an_effect_never_makes_an_undo_of_a_linked_row(venue):
    here = reloaded(venue, _served_lines_undo_to_void)
    placed = order(here, utc(2026, 12, 4, 12))
    lines = here.model("order_lines")
    open_line = lines.objects.create(order_id=placed.pk, item="soup", status="open")
    served = lines.objects.create(order_id=placed.pk, item="bread", status="served")
    move(here, "orders", placed.pk, "cancelled", who="staff", at=utc(2026, 12, 4, 9))
    assert state(here, "order_lines", open_line.pk).status == "void"
    assert state(here, "order_lines", served.pk).status == "served"  # only an undo reaches void


# -- A row another writer holds: WRITE_CONFLICT at once ------------------------------------------

@needs_postgres
@pytest.mark.parametrize("public", [False, True], ids=["staff", "public"])
def test_a_move_on_a_row_another_writer_holds_answers_write_conflict_at_once(venue, client,
                                                                             public):
    owner = get_user_model().objects.create_user("chef", password="pw")
    Brand.objects.filter(pk=venue.link.brand_id).update(owner=owner)
    client.force_login(owner)
    tickets = venue.model("tickets")
    ticket = tickets.objects.create(holder="Ana", link_token="A" * 16, doors_at=utc(2030, 12, 5),
                                    valid_to=utc(2030, 12, 6), status="valid")
    url = (f"/api/public/{venue.link.brand_id}/tables/tickets/links/{'A' * 16}/move" if public
           else f"/api/tables/tickets/rows/{ticket.pk}/move")
    held, answered = threading.Event(), threading.Event()

    def hold():  # a second writer, on its own connection, holds the row until we are answered
        try:
            with transaction.atomic():
                tickets.objects.select_for_update().get(pk=ticket.pk)
                held.set()
                answered.wait(timeout=60)  # only a safety net: set as soon as we are answered
        finally:
            connection.close()

    writer = threading.Thread(target=hold)
    writer.start()
    try:
        assert held.wait(timeout=60)
        answer = client.post(url, {"to": "offered"}, content_type="application/json")
    finally:
        answered.set()
        writer.join()
    assert answer.status_code == 409 and answer.json()["code"] == "WRITE_CONFLICT"
    assert state(venue, "tickets", ticket.pk).status == "valid"


# -- A11: the columns only the product writes -----------------------------------------------

def test_the_product_owns_the_key_the_state_late_flags_codes_and_stamps(venue):
    def owned(table):
        return product_columns(venue.tables[table], venue.raw_table(table))

    assert owned("stays") == {"id", "status", "late_cancel"}
    assert owned("tickets") == {"id", "status", "link_token", "offer_until"}
    assert owned("orders") == {"id", "status"}
    assert owned("settings") == {"id"}


# -- A12: a reminder's look-ahead reaches its largest lead ----------------------------------------

def _orders_remind(lead):
    def change(tables):
        tables["orders"]["columns"].append({"ref": "lead_hours", "type": "integer",
                                            "nullable": True})
        tables["orders"]["reminders"][0]["lead"] = lead
    return change


PICKUP = utc(2026, 10, 28, 20)  # Wednesday 20:00 GMT; 96 hours before is Saturday 21:00 BST


@pytest.mark.parametrize(
    ("lead", "sent"),
    [({"hours": 96}, utc(2026, 10, 24, 20)),                   # elapsed hours, across the change
     ({"column": "lead_hours"}, utc(2026, 10, 24, 20)),        # the largest in the column
     ({"hours": 96, "at": "09:00"}, utc(2026, 10, 24, 8)),     # 09:00 BST on the day it reaches
     ({"column": "lead_hours", "at": "09:00"}, utc(2026, 10, 24, 8))],
    ids=["hours", "column", "hours-at", "column-at"],
)
def test_a_lead_past_three_days_with_no_max_is_sent_on_time(venue, lead, sent):
    here = reloaded(venue, _orders_remind(lead))
    here.model("orders").objects.create(customer="Rui", email="rui@example.test",
                                        pickup_at=PICKUP, status="confirmed", lead_hours=96)
    here.model("orders").objects.create(customer="Ola", email="ola@example.test",
                                        pickup_at=PICKUP, status="confirmed", lead_hours=2)
    assert run(here, sent - timedelta(minutes=1)).reminders == 0
    assert run(here, sent).reminders == (1 if "column" in lead else 2)
    assert [mail.payload["to"] for mail in Delivery.objects.all()].count(["rui@example.test"]) == 1


def _lines_remind_by_their_order(tables):
    lines = tables["order_lines"]
    lines["columns"] += [{"ref": "due_at", "type": "timestamptz", "nullable": True},
                         {"ref": "email", "type": "text", "maxLength": 254, "nullable": True}]
    tables["orders"]["columns"].append({"ref": "lead_hours", "type": "integer",
                                        "nullable": True})
    lines["reminders"] = [{"at": {"column": "due_at"},
                           "lead": {"via": "order_id", "column": "lead_hours"},
                           "to": {"column": "email"}, "subject": "Soon"}]


def test_a_lead_read_through_a_link_looks_as_far_ahead_as_the_linked_table_reaches(venue):
    here = reloaded(venue, _lines_remind_by_their_order)
    parent = here.model("orders").objects.create(customer="Rui", pickup_at=PICKUP,
                                                 status="confirmed", lead_hours=100)
    here.model("order_lines").objects.create(order_id=parent.pk, item="soup", status="open",
                                             due_at=PICKUP, email="rui@example.test")
    sent = PICKUP - timedelta(hours=100)
    assert run(here, sent - timedelta(minutes=1)).reminders == 0
    assert run(here, sent).reminders == 1


# -- A6: a moment past the calendar sets one row aside; the minute goes on ------------------------

def _no_show_falls_back_to_noon(tables):
    # A fallback leaves the prefilter no bound: every booked stay is read each minute.
    tables["stays"]["states"]["timed"][0]["at"]["or"] = [
        {"column": "arrive", "time": "12:00", "plus": {"days": 1}}]


def test_a_row_whose_moment_leaves_the_calendar_is_set_aside_and_the_tick_goes_on(venue, caplog):
    here = reloaded(venue, _no_show_falls_back_to_noon)
    stays = here.model("stays")
    last_day = stays.objects.create(guest="Zed", arrive=date(9999, 12, 31),  # plus a day
                                    status="booked")
    guest = stays.objects.create(guest="Ola", arrive=date(2026, 10, 24), status="booked")
    year_one = order(here, datetime(1, 1, 1, tzinfo=UTC))  # its London day is in year 0
    friday = order(here, utc(2026, 10, 23, 11))
    now = utc(2026, 10, 25, 10)
    with wallclock.fixed(now), caplog.at_level(logging.WARNING, logger="timekeeping.moves"):
        result = phases.run_once(now=now)
    moved = {pk for minute in result.moves for pk in minute.moved}
    assert moved == {("stays", guest.pk), ("orders", friday.pk)}
    for table, pk in (("stays", last_day.pk), ("orders", year_one.pk)):
        aside = set_aside(table, pk)
        assert aside.code.startswith("MOMENT_OUT_OF_RANGE: ") and aside.rule == 1
        assert aside.until == now + timedelta(hours=1)
        assert f"table={table} key={pk} rule=1 code=MOMENT_OUT_OF_RANGE" in caplog.text
    assert state(here, "stays", last_day.pk).status == "booked"


@pytest.mark.parametrize(
    ("arrive", "cancel_hours"),
    [(date(1, 1, 1), 48),                 # 15:00 on 1 January of year 1, less 48 hours
     (date(2026, 12, 10), 10 ** 12)],     # a setting's shift no timedelta holds
    ids=["year-one", "huge-setting"],
)
def test_a_person_move_on_a_row_whose_moment_leaves_the_calendar_is_refused(venue, arrive,
                                                                            cancel_hours):
    venue.model("settings").objects.update(cancel_hours=cancel_hours)
    stay = venue.model("stays").objects.create(guest="Zed", arrive=arrive, status="booked")
    refused = refusal(lambda: move(venue, "stays", stay.pk, "cancelled", who="staff",
                                   at=utc(2026, 12, 1)))
    assert (refused.code, refused.details["reason"]) == ("STATE_MOVE_REFUSED",
                                                         "moment-out-of-range")
    assert state(venue, "stays", stay.pk).status == "booked"


def test_a_reminder_whose_send_time_leaves_the_calendar_is_skipped(venue, caplog):
    here = reloaded(venue, _orders_remind({"column": "lead_hours"}))
    orders = here.model("orders")
    soon = utc(2026, 10, 26, 20)
    endless = orders.objects.create(customer="Zed", email="zed@example.test", pickup_at=soon,
                                    status="confirmed", lead_hours=10 ** 12)
    orders.objects.create(customer="Rui", email="rui@example.test", pickup_at=soon,
                          status="confirmed", lead_hours=48)
    with caplog.at_level(logging.WARNING, logger="timekeeping.moves"):
        assert run(here, utc(2026, 10, 24, 20)).reminders == 1
    assert f"reminder skipped: its moment is out of range: connection={here.link.pk} " \
           f"table=orders key={endless.pk} reminder=1" in caplog.text


def test_the_prefilter_opens_a_side_rather_than_overflow():
    now = utc(2026, 10, 25, 10)
    zone = "Europe/London"
    far_before = {"column": "due_at", "minus": {"days": 999_999_999}}
    assert moments.column_window("timestamptz", far_before, zone, after=now, until=now) == {
        "due_at__gt": now}
    far_after = {"column": "arrive", "time": "10:00", "plus": {"days": 10 ** 9}}
    assert moments.column_window("date", far_after, zone, after=now, until=now) == {
        "arrive__lte": date(2026, 10, 27)}
    last = datetime.max.replace(tzinfo=UTC)
    assert moments.column_window("timestamptz", {"column": "due_at"}, zone, after=None,
                                 until=last) == {"due_at__lte": last}
    assert moments.column_window("timestamptz", {"column": "due_at", "time": "10:00"}, zone,
                                 after=None, until=last) == {}


def _offers_lapse_two_hours_early(tables):
    tables["tickets"]["states"]["timed"][0]["at"] = {"column": "offer_until",
                                                     "minus": {"hours": 2}}


def test_it_moves_a_row_whose_moment_falls_before_its_column(venue):
    here = reloaded(venue, _offers_lapse_two_hours_early)
    now = utc(2026, 11, 30, 18)
    ticket = here.model("tickets").objects.create(
        holder="Ana", offer_until=now + timedelta(hours=1), doors_at=utc(2026, 12, 5),
        valid_to=utc(2026, 12, 6), status="offered")  # its moment was an hour ago
    assert [due.pk for due in job.candidates(here, now, job.CAP)] == [ticket.pk]
    assert run(here, now).moved == [("tickets", ticket.pk)]
