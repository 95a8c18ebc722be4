"""Rehearsing timed moves on a test clock (issue 29): a venue's week of orders copied onto a
test clock and walked there makes the moves the live job makes, at the same instants, while
the live rows stay as they were. The tables are made by DDL, so these tests commit."""

import html
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model

from tests.timekeeping.moves.test_moves import VENUE, make_venue
from timekeeping.models import Delivery, Rehearsal, RowAudit, TestClock
from timekeeping.moves import job, moved, rehearse
from timekeeping.moves.rows import Venue
from timekeeping.tick import test_clocks

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

MONDAY = datetime(2026, 10, 18, 23, tzinfo=UTC)  # 00:00 BST, Monday 19 October, London
NEXT_MONDAY = datetime(2026, 10, 26, 0, tzinfo=UTC)  # 00:00 GMT: the clocks went back Sunday


def utc(*parts):
    return datetime(*parts, tzinfo=UTC)


@pytest.fixture
def venue():
    found = make_venue("Corner Kitchen", "corner", VENUE)
    owner = get_user_model().objects.create_user("owner", email="owner@corner.test",
                                                  password="pw-owner")
    found.link.brand.owner = owner
    found.link.brand.save(update_fields=["owner"])
    return found


def week_of_orders(venue):
    """A week at the venue: orders still placed at closing (Wednesday, Friday, and Saturday,
    whose night ends at 02:00 Sunday as the clocks go back), one confirmed, one the Monday
    after (outside the week)."""
    orders, lines = venue.model("orders"), venue.model("order_lines")
    made = {
        "wednesday": orders.objects.create(customer="Ines", email="ines@example.test",
                                           pickup_at=utc(2026, 10, 21, 11), status="placed"),
        "friday": orders.objects.create(customer="Rui", pickup_at=utc(2026, 10, 23, 11, 30),
                                        status="placed"),
        "saturday": orders.objects.create(customer="Sam", pickup_at=utc(2026, 10, 24, 19),
                                          status="placed"),
        "confirmed": orders.objects.create(customer="Ana", pickup_at=utc(2026, 10, 22, 12),
                                           status="confirmed"),
        "after": orders.objects.create(customer="Ola", pickup_at=utc(2026, 10, 27, 12),
                                       status="placed"),
    }
    for item in ("bread", "soup"):
        lines.objects.create(order_id=made["wednesday"].pk, item=item, status="open")
    return made


def states(venue, table="orders"):
    return dict(venue.model(table).objects.values_list("pk", "status"))


def test_a_week_rehearsed_moves_as_the_live_job_would_and_leaves_the_live_rows_alone(venue):
    made = week_of_orders(venue)
    live_before = states(venue), states(venue, "order_lines")
    clock = test_clocks.create(brand=venue.link.brand, name="Next week", frozen_time=MONDAY)

    copied = rehearse.copy(clock, "orders", start=MONDAY, end=NEXT_MONDAY, who="owner")
    assert sorted(copied.copied) == sorted(made[name].pk for name in
                                           ("wednesday", "friday", "saturday", "confirmed"))
    assert copied.linked == 2  # the Wednesday order's lines came with it
    test_clocks.advance(clock, to=NEXT_MONDAY + timedelta(hours=9))

    # Live rows: untouched by the walk.
    assert (states(venue), states(venue, "order_lines")) == live_before
    world = Venue.of(venue.link, test_clock_id=clock.pk)
    rehearsed = states(world)
    assert rehearsed == {made["wednesday"].pk: "cancelled", made["friday"].pk: "cancelled",
                         made["saturday"].pk: "cancelled", made["confirmed"].pk: "confirmed"}
    assert set(states(world, "order_lines").values()) == {"void"}
    timed = list(RowAudit.objects.filter(test_clock=clock, kind="timed move")
                 .order_by("at").values_list("row", "at"))
    assert timed == [(made["wednesday"].pk, utc(2026, 10, 21, 20)),  # 21:00 BST closing
                     (made["friday"].pk, utc(2026, 10, 23, 20)),
                     (made["saturday"].pk, utc(2026, 10, 25, 2))]  # 02:00 GMT, after the change

    # The live job, run at the same instants (and a minute before each), makes the same moves.
    for row, at in timed:
        assert job.run_connection(venue.link, now=at - timedelta(minutes=1),
                                  holder="test:1:x").moved == []
        venue.link.refresh_from_db()
        assert job.run_connection(venue.link, now=at, holder="test:1:x").moved == [
            ("orders", row)]
        venue.link.refresh_from_db()
    assert {pk: state for pk, state in states(venue).items() if pk in rehearsed} == rehearsed
    assert states(venue, "order_lines") == states(world, "order_lines")


def test_its_emails_go_to_the_owner_marked_as_a_practice_run(venue):
    made = week_of_orders(venue)
    clock = test_clocks.create(brand=venue.link.brand, name="Next week", frozen_time=MONDAY)
    rehearse.copy(clock, "orders", ids=[made["wednesday"].pk], who="owner")
    test_clocks.advance(clock, to=utc(2026, 10, 22))
    mail = Delivery.objects.get()
    assert mail.payload["to"] == ["owner@corner.test"]  # never the customer
    assert mail.payload["subject"] == "Practice run: Your order was cancelled"
    assert clock.pk in mail.idempotency_key


def test_the_moves_are_told_in_words_with_when_and_why(venue):
    made = week_of_orders(venue)
    clock = test_clocks.create(brand=venue.link.brand, name="Next week", frozen_time=MONDAY)
    rehearse.copy(clock, "orders", ids=[made["wednesday"].pk], who="owner")
    test_clocks.advance(clock, to=utc(2026, 10, 22))
    world = Venue.of(venue.link, test_clock_id=clock.pk)
    said = [line.said for line in moved.lines(clock, world)]
    assert said[0] == (f"Order {made['wednesday'].pk} (Ines) cancelled at Wed 21 Oct 2026, "
                       "21:00 BST: still placed at closing time on the day of its pickup.")
    assert said[1:] == [f"Order line {pk} (bread) moved to void at Wed 21 Oct 2026, 21:00 BST: "
                        f"its order {made['wednesday'].pk} was cancelled."
                        for pk in sorted(states(venue, "order_lines"))[:1]] + [
        f"Order line {sorted(states(venue, 'order_lines'))[1]} (soup) moved to void at Wed 21 "
        f"Oct 2026, 21:00 BST: its order {made['wednesday'].pk} was cancelled."]


def test_rows_added_on_the_test_clock_are_relative_to_its_time(venue):
    clock = test_clocks.create(brand=venue.link.brand, name="Try it", frozen_time=MONDAY)
    made = rehearse.add(clock, "orders", [{"customer": "Kai",
                                           "pickup_at": {"@in": "P2DT12H"}}], who="owner")
    world = Venue.of(venue.link, test_clock_id=clock.pk)
    row = world.model("orders").objects.get(pk=made[0])
    assert row.pickup_at == MONDAY + timedelta(days=2, hours=12)
    assert venue.model("orders").objects.count() == 0  # nothing live
    test_clocks.advance(clock, to=utc(2026, 10, 22))
    assert world.model("orders").objects.get(pk=made[0]).status == "cancelled"


def test_a_copy_is_bounded_scoped_and_refusals_name_the_field(venue, monkeypatch):
    made = week_of_orders(venue)
    clock = test_clocks.create(brand=venue.link.brand, name="Next week", frozen_time=MONDAY)
    with pytest.raises(rehearse.RehearsalRefused) as refused:
        rehearse.copy(clock, "orders", ids=list(range(1, 1002)), who="owner")
    assert refused.value.field == "ids" and "1,000" in refused.value.message
    with pytest.raises(rehearse.RehearsalRefused) as refused:
        rehearse.copy(clock, "orders", ids=[made["friday"].pk, 99999], who="owner")
    assert refused.value.field == "ids" and "99999" in refused.value.message
    with pytest.raises(rehearse.RehearsalRefused) as refused:
        rehearse.copy(clock, "settings", ids=[1], who="owner")
    assert refused.value.field == "table"
    monkeypatch.setattr(rehearse, "MOST_ROWS", 3)
    with pytest.raises(rehearse.RehearsalRefused) as refused:
        rehearse.copy(clock, "orders", start=MONDAY, end=NEXT_MONDAY, who="owner")
    assert refused.value.field == "end"
    with pytest.raises(rehearse.RehearsalRefused) as refused:
        rehearse.add(clock, "orders", [{"customer": "Kai", "pickup_at": {"@in": "PT1H"}},
                                       {"customer": 5}], who="owner")
    assert (refused.value.field, refused.value.message) == ("rows[1].customer",
                                                            "customer is text")
    assert not Rehearsal.objects.exists()  # nothing was changed


def test_removing_the_rehearsal_drops_its_rows_and_keeps_the_live_ones(venue):
    made = week_of_orders(venue)
    clock = test_clocks.create(brand=venue.link.brand, name="Next week", frozen_time=MONDAY)
    rehearse.copy(clock, "orders", ids=[made["friday"].pk], who="owner")
    assert rehearse.rows_held(clock)["orders"] == 1
    held = rehearse.remove(clock)
    assert held >= 1 and rehearse.rows_held(clock) == {}
    assert not RowAudit.objects.filter(test_clock=clock).exists()
    assert venue.model("orders").objects.count() == 5
    assert TestClock.objects.filter(pk=clock.pk).exists()


def test_deleting_a_test_clock_removes_its_rows(venue):
    from django.db import connection

    made = week_of_orders(venue)
    clock = test_clocks.create(brand=venue.link.brand, name="Next week", frozen_time=MONDAY)
    rehearse.copy(clock, "orders", ids=[made["friday"].pk], who="owner")
    names = set(Rehearsal.objects.get(test_clock=clock).tables)
    assert names <= set(connection.introspection.table_names())
    clock.delete()
    assert not names & set(connection.introspection.table_names())
    assert not RowAudit.objects.filter(table="orders", kind="copy").exists()
    assert venue.model("orders").objects.count() == 5


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


def test_the_console_rehearses_a_week_and_says_what_moved_and_why(venue, client):
    made = week_of_orders(venue)
    brand = venue.link.brand
    clock = test_clocks.create(brand=brand, name="Next week", frozen_time=MONDAY)
    client.force_login(brand.owner)
    page = f"/console/{brand.pk}/moves/"
    assert "Rehearse these rows" in _text(client.get(page, {"test": clock.pk}, follow=True))
    answer = client.post(f"/console/{brand.pk}/moves/rehearse",
                         {"test_clock": clock.pk, "table": "orders",
                          "start": "2026-10-19T00:00", "days": 7}, follow=True)
    assert "4 rows of orders copied into the test world \u201cNext week\u201d, with 2 linked " \
           "rows" in _text(answer)
    test_clocks.advance(clock, to=NEXT_MONDAY)
    text = _text(client.get(page, {"test": clock.pk}, follow=True))
    assert (f"Order {made['friday'].pk} (Rui) cancelled at Fri 23 Oct 2026, 21:00 BST: still "
            "placed at closing time on the day of its pickup.") in text
    assert "Orders: 4 rows" in text
    assert "at the test world's time, Mon 26 Oct 2026" in text  # its time, not "now"
    live = _text(client.get(page, {"test": "off"}, follow=True))
    assert "(Rui) cancelled" not in live and "Rehearse these rows" not in live
    assert states(venue)[made["friday"].pk] == "placed"

    client.post(f"/console/{brand.pk}/moves/rehearse/remove", {"test_clock": clock.pk})
    assert rehearse.rows_held(clock) == {}


def test_the_api_copies_reads_what_moved_and_refuses_naming_the_field(venue, client):
    made = week_of_orders(venue)
    brand = venue.link.brand
    clock = test_clocks.create(brand=brand, name="Next week", frozen_time=MONDAY)
    client.force_login(brand.owner)
    rows = f"/api/test_clocks/{clock.pk}/rows"
    answer = client.post(rows, {"table": "orders", "start": "2026-10-18T23:00:00Z",
                                "end": "2026-10-26T00:00:00Z"}, content_type="application/json")
    assert answer.status_code == 201, answer.content
    assert answer.json()["linked"] == 2 and len(answer.json()["copied"]) == 4
    refused = client.post(rows, {"table": "orders", "ids": list(range(1, 1002))},
                          content_type="application/json")
    assert refused.status_code == 400 and "ids" in refused.json()
    refused = client.post(rows, {"table": "orders", "rows": [{"customer": "Kai",
                                                              "pickup_at": {"@in": "P9999999D"}}]},
                          content_type="application/json")
    assert refused.status_code == 400 and "rows[0]" in str(refused.json())
    assert client.get(rows).json() == {"tables": {"order_lines": 2, "orders": 4,
                                                  "opening_hours": 7, "settings": 1,
                                                  "stays": 0, "tickets": 0}}
    client.post(f"/api/test_clocks/{clock.pk}/advance", {"to": "2026-10-22T00:00:00Z"},
                content_type="application/json")
    test_clocks.drive(test_clocks.walking(clock))
    moves = client.get(f"/api/test_clocks/{clock.pk}/moves").json()["moves"]
    assert [(m["table"], m["row"], m["to"]) for m in moves][0] == (
        "orders", made["wednesday"].pk, "cancelled")
    assert moves[0]["at"] == "2026-10-21T20:00:00Z"
    assert client.delete(rows).json()["removed"] == 4 + 2 + 7 + 1
    assert states(venue)[made["wednesday"].pk] == "placed"


def test_the_demo_rehearses_the_venues_week_once_and_leaves_the_live_orders(venue):
    from timekeeping.basics import wallclock
    from timekeeping.demo import VENUE_REHEARSAL, demo_rehearsal

    made = week_of_orders(venue)
    with wallclock.fixed(MONDAY):
        clock = demo_rehearsal(venue.link.brand)
        assert demo_rehearsal(venue.link.brand).pk == clock.pk  # once
    clock.refresh_from_db()
    assert clock.name == VENUE_REHEARSAL and clock.frozen_time == MONDAY + timedelta(days=7)
    world = Venue.of(venue.link, test_clock_id=clock.pk)
    said = [line.said for line in moved.lines(clock, world)]
    assert any(f"Order {made['friday'].pk} (Rui) cancelled" in line for line in said)
    assert any("(Noor (rehearsal)) cancelled" in line for line in said)
    assert not any("Theo" in line for line in said)  # confirmed: nothing moves it
    assert set(states(venue).values()) == {"placed", "confirmed"}  # the live orders


def test_a_reminder_goes_at_the_minute_the_live_job_would_send_it(venue):
    venue.model("settings").objects.update(reminder_hours=24)
    order = venue.model("orders").objects.create(
        customer="Ines", email="ines@example.test", pickup_at=utc(2026, 10, 21, 11),
        status="confirmed")  # 12:00 BST Wednesday: reminded at 09:00 BST on Tuesday
    clock = test_clocks.create(brand=venue.link.brand, name="Next week", frozen_time=MONDAY)
    rehearse.copy(clock, "orders", ids=[order.pk], who="owner")
    test_clocks.advance(clock, to=utc(2026, 10, 20, 7, 59))
    assert not Delivery.objects.exists()
    test_clocks.advance(clock, to=utc(2026, 10, 20, 8))
    mail = Delivery.objects.get()
    assert mail.payload["subject"] == "Practice run: Your order is ready for pickup soon"
    assert mail.payload["to"] == ["owner@corner.test"]
    test_clocks.advance(clock, to=utc(2026, 10, 22))
    assert Delivery.objects.count() == 1  # once per row and moment
    # The live job, on the live row: nothing a minute before, the reminder at that minute.
    assert job.reminders.run(venue, utc(2026, 10, 20, 7, 59)) == 0
    assert job.reminders.run(venue, utc(2026, 10, 20, 8)) == 1
