"""Automations run (issue 30, A7): a rule hears a row entering a state (moved by a person or by
a timed move through the tick) and acts in the same transaction: an email in the outbox, a
webhook to the receiver after the sweep, a move of a linked row, recorded; a chain of rules
stops at its depth; one brand's rules never hear another brand's rows; the Why page and the
preview say the rules. The venue is in London (BST, then GMT); time moves by explicit
instants."""

import copy
import json
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import transaction
from django.test import Client

from tests.timekeeping.moves.test_moves import HOURS, VENUE
from timekeeping import manifests
from timekeeping.basics import wallclock
from timekeeping.models import Brand, Connection, Delivery, Record, RowAudit
from timekeeping.moves import rehearse, samples
from timekeeping.moves.rows import Venue, move
from timekeeping.tick import phases, test_clocks
from timekeeping.timers import outbox
from timekeeping.webhooks import endpoints

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]
FRIDAY = datetime(2026, 10, 23, 11, 30, tzinfo=UTC)  # a pickup at 12:30 BST
CLOSING = datetime(2026, 10, 23, 20, tzinfo=UTC)  # 21:00 BST, the Friday's closing hour
EMAIL = {"when": {"row": "orders", "enters": "cancelled"},
         "do": {"email": {"to": {"column": "email"}, "who": "the guest",
                          "subject": "About your order, {customer}",
                          "body": "We could not keep order {id}."}}}
READY = {"when": {"row": "order_lines", "enters": "served"},
         "do": {"move": {"via": "order_id", "to": "ready"}}}


def venue_for(brand, rules, document=VENUE):
    document = copy.deepcopy(document)
    document["automations"] = rules
    manifests.load(brand, document)
    found = Venue.of(Connection.objects.select_related("brand").get(brand=brand))
    if "settings" in found.tables:
        found.model("settings").objects.create(no_show_at="10:00", offer_hours=24,
                                               arrive_from="15:00", cancel_hours=48,
                                               door_on=True)
        for weekday, opens, closes, is_open in HOURS:
            found.model("opening_hours").objects.create(weekday=weekday, opens=opens,
                                                        closes=closes, open=is_open)
    return found


def order(venue, status="placed", email="ines@example.test"):
    return venue.model("orders").objects.create(customer="Ines", email=email,
                                                pickup_at=FRIDAY, status=status)


def runs(brand, kind="automation.ran"):
    return list(Record.objects.filter(brand=brand, kind=kind).order_by("written", "instant"))


def mails(subject_start):
    return [d for d in Delivery.objects.filter(channel=Delivery.Channel.EMAIL)
            if d.payload["subject"].startswith(subject_start)]


def test_a_person_cancelling_an_order_emails_the_guest_through_the_outbox(brand):
    venue = venue_for(brand, [EMAIL])
    placed = order(venue)
    move(venue, "orders", placed.pk, "cancelled", who="staff", at=FRIDAY)
    sent = mails("About your order")
    assert [(d.payload["to"], d.payload["subject"], d.brand_id) for d in sent] == [
        (["ines@example.test"], "About your order, Ines", brand.pk)]
    assert sent[0].payload["body"] == f"We could not keep order {placed.pk}."
    [ran] = runs(brand)
    assert ran.data["rule"] == 1 and ran.data["did"] == "emailed the guest"
    assert ran.data["heard"] == Record.objects.get(brand=brand, kind="row.moved").pk


def test_a_rule_that_fails_takes_the_change_with_it(brand, monkeypatch):
    venue = venue_for(brand, [EMAIL])
    placed = order(venue)

    def broken(*args, **kwargs):
        raise RuntimeError("the outbox is gone")

    monkeypatch.setattr(outbox, "enqueue_email", broken)
    with pytest.raises(RuntimeError), transaction.atomic():
        move(venue, "orders", placed.pk, "cancelled", who="staff", at=FRIDAY)
    assert venue.model("orders").objects.get(pk=placed.pk).status == "placed"
    assert not Record.objects.filter(brand=brand, kind="row.moved").exists()


def test_a_timed_move_through_the_tick_sets_a_rule_off(brand):
    venue = venue_for(brand, [EMAIL])
    placed = order(venue)
    with wallclock.fixed(CLOSING):
        result = phases.run_once(now=CLOSING, sweep=False)
    assert sum(len(minute.moved) for minute in result.moves) == 1
    assert venue.model("orders").objects.get(pk=placed.pk).status == "cancelled"
    assert [d.payload["to"] for d in mails("About your order")] == [["ines@example.test"]]
    [ran] = runs(brand)
    assert ran.instant == CLOSING and ran.data["did"] == "emailed the guest"
    assert Record.objects.get(pk=ran.data["heard"]).data["by"] == "timed move"


def test_a_move_through_the_api_sends_a_rules_webhook_to_its_endpoint(brand, actors,
                                                                      receiver):
    screen = endpoints.make(brand, url=receiver.url, description="Kitchen screen",
                            types=["job.opened"]).endpoint
    venue = venue_for(brand, [{"when": {"row": "orders", "enters": "confirmed"},
                               "do": {"webhook": "Kitchen screen"}}])
    placed = order(venue)
    client = Client()
    client.force_login(actors["owner"])
    moved = client.post(f"/api/tables/orders/rows/{placed.pk}/move", {"to": "confirmed"},
                        content_type="application/json")
    assert moved.status_code == 200
    assert Delivery.objects.filter(channel=Delivery.Channel.WEBHOOK,
                                   endpoint_id=screen.pk).count() == 1
    outbox.sweep(now=wallclock.wall_now())
    [(_, body)] = receiver.requests
    event = json.loads(body)
    assert event["type"] == "row.moved" and event["brand"] == brand.pk
    assert event["data"]["table"] == "orders" and event["data"]["row"] == placed.pk
    assert event["data"]["to"] == "confirmed"
    assert runs(brand)[0].data["did"] == "sent the event to Kitchen screen"


def test_a_move_rule_moves_the_linked_row_and_audits_it(brand):
    venue = venue_for(brand, [READY])
    cooking = order(venue, status="preparing")
    line = venue.model("order_lines").objects.create(order_id=cooking.pk, item="soup",
                                                     status="open")
    move(venue, "order_lines", line.pk, "served", who="staff", at=FRIDAY)
    assert venue.model("orders").objects.get(pk=cooking.pk).status == "ready"
    trail = RowAudit.objects.get(table="orders", row=cooking.pk)
    assert (trail.kind, trail.who) == ("automation", "automation rule 1")
    moved = Record.objects.get(brand=brand, kind="row.moved", data__table="orders")
    assert (moved.data["from"], moved.data["to"], moved.data["by"]) == (
        "preparing", "ready", "automation")
    assert runs(brand)[0].data["did"] == "moved 1 row of orders to ready"


def test_a_linked_row_with_no_such_move_from_its_state_is_left_as_it_is(brand):
    venue = venue_for(brand, [READY])
    placed = order(venue)  # placed lists no move to ready
    line = venue.model("order_lines").objects.create(order_id=placed.pk, item="tea",
                                                     status="open")
    move(venue, "order_lines", line.pk, "served", who="staff", at=FRIDAY)
    assert venue.model("orders").objects.get(pk=placed.pk).status == "placed"
    assert runs(brand)[0].data["did"] == ("moved 0 rows of orders to ready; left 1 row as "
                                          "it was: no such move from its state")


CHAIN = {"calendar": {"zone": "Europe/London"}, "tables": {
    name: {"columns": ([{"ref": "parent", "type": "integer", "references": before,
                         "nullable": True}] if before else [{"ref": "label", "type": "text",
                                                              "maxLength": 20}]),
           "states": {"column": "status", "initial": "open", "moves": {"open": ["closed"]}}}
    for name, before in (("a", None), ("b", "a"), ("c", "b"), ("d", "c"), ("e", "d"))}}
CHAINED = [{"when": {"row": parent, "enters": "closed"},
            "do": {"move": {"table": child, "link": "parent", "to": "closed"}}}
           for parent, child in (("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"))]


def test_a_chain_of_rules_stops_at_its_depth_and_says_so(brand):
    assert manifests.check({**CHAIN, "automations": CHAINED}) == []  # no loop to see
    venue = venue_for(brand, CHAINED, CHAIN)
    top = venue.model("a").objects.create(label="top", status="open")
    below = top.pk
    for name in ("b", "c", "d", "e"):
        below = venue.model(name).objects.create(parent=below, status="open").pk
    move(venue, "a", top.pk, "closed", who="staff", at=FRIDAY)
    states = {name: venue.model(name).objects.get().status for name in "abcde"}
    assert states == {"a": "closed", "b": "closed", "c": "closed", "d": "closed", "e": "open"}
    assert {r.data["rule"]: r.data["depth"] for r in runs(brand)} == {1: 1, 2: 2, 3: 3}
    [stopped] = runs(brand, "automation.stopped")
    assert stopped.data["rule"] == 4 and stopped.data["depth"] == 4


def test_one_brands_rules_never_hear_another_brands_rows(brand):
    mine = venue_for(brand, [EMAIL])
    other = Brand.objects.create(name="Bodega", slug="bodega")
    theirs = venue_for(other, [])
    move(theirs, "orders", order(theirs).pk, "cancelled", who="staff", at=FRIDAY)
    assert not Record.objects.filter(kind="automation.ran").exists()
    assert mails("About your order") == []
    move(mine, "orders", order(mine).pk, "cancelled", who="staff", at=FRIDAY)
    assert [r.brand_id for r in Record.objects.filter(kind="automation.ran")] == [brand.pk]


def test_the_why_page_says_which_rule_heard_the_row(brand, actors):
    venue = venue_for(brand, [EMAIL])
    placed = order(venue)
    move(venue, "orders", placed.pk, "cancelled", who="staff", at=FRIDAY)
    client = Client()
    client.force_login(actors["owner"])
    page = client.get(f"/console/{brand.pk}/why", {"q": f"orders:{placed.pk}"})
    assert page.status_code == 200
    assert "Heard by rule 1: emailed the guest." in page.content.decode()
    stranger = Client()
    stranger.force_login(actors["outsider"])
    assert stranger.get(f"/console/{brand.pk}/why", {"q": f"orders:{placed.pk}"}
                        ).status_code == 404


def test_moves_preview_lists_the_rules_a_timed_move_would_set_off(brand, actors):
    venue = venue_for(brand, [EMAIL, {"when": {"row": "orders", "enters": "cancelled"},
                                      "do": {"move": {"table": "order_lines",
                                                      "link": "order_id", "to": "void"}}}])
    order(venue)
    out = StringIO()
    with wallclock.fixed(datetime(2026, 10, 23, 12, tzinfo=UTC)):
        call_command("moves", "preview", "--brand", brand.slug, "--hours", "12", stdout=out)
    [line] = out.getvalue().splitlines()  # one line per row that moves
    assert "orders #1  placed → cancelled" in line
    assert line.endswith("; heard by rule 1: would email the guest; heard by rule 2: would "
                         "move its rows of order_lines to void")
    client = Client()
    client.force_login(actors["owner"])
    with wallclock.fixed(datetime(2026, 10, 23, 12, tzinfo=UTC)):
        page = client.get(f"/console/{brand.pk}/moves/").content.decode()
    assert "1 row moves in the next" in page
    assert "heard by rule 1: would email the guest" in page


def test_a_rehearsed_timed_move_sets_the_rule_off_in_its_world_only(brand, actors):
    actors["owner"].email = "owner@corner.test"
    actors["owner"].save()
    venue = venue_for(brand, [EMAIL])
    placed = order(venue)
    monday = datetime(2026, 10, 18, 23, tzinfo=UTC)
    clock = test_clocks.create(brand=brand, name="Next week", frozen_time=monday)
    rehearse.copy(clock, "orders", start=monday, end=datetime(2026, 10, 26, tzinfo=UTC),
                  who="owner")
    test_clocks.advance(clock, to=datetime(2026, 10, 24, 9, tzinfo=UTC))
    assert venue.model("orders").objects.get(pk=placed.pk).status == "placed"  # live: as it was
    [ran] = runs(brand)
    assert ran.test_clock_id == clock.pk and ran.instant == CLOSING
    assert [(d.payload["to"], d.payload["subject"]) for d in mails("Practice run: About")] == [
        (["owner@corner.test"], "Practice run: About your order, Ines")]
    assert mails("About your order") == []  # no real guest hears a rehearsal


def test_an_endpoint_that_hears_the_event_anyway_is_sent_it_once(brand, settings):
    settings.WEBHOOK_ALLOW_HOSTS = ["127.0.0.1"]
    settings.WEBHOOK_ALLOW_HTTP = True
    hears_all = endpoints.make(brand, url="http://127.0.0.1:9/hooks",
                               description="Everything").endpoint
    off = endpoints.make(brand, url="http://127.0.0.1:9/off", description="Off").endpoint
    endpoints.change(off, enabled=False)
    venue = venue_for(brand, [{"when": {"row": "orders", "enters": "confirmed"},
                               "do": {"webhook": "Everything"}},
                              {"when": {"row": "orders", "enters": "confirmed"},
                               "do": {"webhook": "Off"}}])
    move(venue, "orders", order(venue).pk, "confirmed", who="staff", at=FRIDAY)
    moved = Record.objects.get(brand=brand, kind="row.moved")
    sent = Delivery.objects.filter(channel=Delivery.Channel.WEBHOOK)
    assert [(d.endpoint_id, d.event) for d in sent] == [(hears_all.pk, moved.pk)]
    assert sorted(r.data["did"] for r in runs(brand)) == [
        "sent nothing: the endpoint Off is turned off", "sent the event to Everything"]


def test_a_sample_rows_rule_emails_nobody_and_moves_no_real_row(brand):
    venue = venue_for(brand, [EMAIL, {"when": {"row": "orders", "enters": "cancelled"},
                                      "do": {"move": {"table": "order_lines",
                                                      "link": "order_id", "to": "served"}}}])
    [pk] = samples.add(venue, "orders", [{"customer": "Sample", "email": "s@example.test",
                                          "pickup_at": FRIDAY.isoformat()}], now=FRIDAY)
    real_line = venue.model("order_lines").objects.create(order_id=pk, item="tea",
                                                          status="open")
    move(venue, "orders", pk, "cancelled", who="staff", at=FRIDAY)
    assert mails("About your order") == []
    assert venue.model("order_lines").objects.get(pk=real_line.pk).status == "void"  # effect
    said = sorted(r.data["did"] for r in runs(brand))
    assert said[0] == "emailed nobody: a sample row sends no email"
    assert said[1] == "moved 0 rows of order_lines to served; left alone 1 row that is no sample"
