"""The pulses over a brand's tables (SPEC T5, T6): `reconcile` sets a copy to the truth outside,
skipping rows changed within a grace period; `revive` finds rows that stopped in a state and
asks the outside system before it moves any."""

from datetime import timedelta

import pytest

from tests.timekeeping.moves.test_moves import VENUE, make_venue, utc
from timekeeping.models import RowAudit
from timekeeping.moves.outside import PulseRefused, reconcile, revive
from timekeeping.moves.rows import create, move, update

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]

NOW = utc(2026, 11, 1, 6, 30)  # 01:30 EST in New York, just after the clocks went back
GRACE = timedelta(minutes=10)


@pytest.fixture
def venue():
    return make_venue("Corner Kitchen", "corner", VENUE, zone="America/New_York")


def placed(venue, email, total, at):
    return create(venue, "orders", {"customer": email.split("@")[0], "email": email,
                                    "pickup_at": NOW + timedelta(days=1), "total": total},
                  who="staff", at=at)


def total(venue, pk):
    return venue.model("orders").objects.get(pk=pk).total


def test_reconcile_sets_old_rows_to_the_truth_and_skips_fresh_same_and_unknown(venue):
    old = placed(venue, "ana@example.test", 1000, NOW - timedelta(days=2))
    fresh = placed(venue, "bo@example.test", 2000, NOW - timedelta(days=2))
    update(venue, "orders", fresh.pk, {"total": 2100}, who="staff",
           at=NOW - timedelta(minutes=5))  # changed here; the outside may not know yet
    same = placed(venue, "cy@example.test", 3000, NOW - timedelta(days=2))
    assert total(venue, same.pk) == 3000
    truth = [{"email": "ana@example.test", "total": 1250},
             {"email": "bo@example.test", "total": 2000},
             {"email": "cy@example.test", "total": 3000},
             {"email": "nobody@example.test", "total": 1}]
    result = reconcile(venue, "orders", truth, key="email", now=NOW, grace=GRACE)
    assert (result.set, result.fresh, result.same, result.missing, result.refused) == (
        [old.pk], [fresh.pk], 1, ["nobody@example.test"], {})
    assert (total(venue, old.pk), total(venue, fresh.pk)) == (1250, 2100)
    trail = RowAudit.objects.filter(table="orders", row=old.pk).latest("at")
    assert (trail.kind, trail.who, trail.at) == ("update", "reconcile", NOW)
    assert (trail.before["total"], trail.after["total"]) == (1000, 1250)
    # Twice is harmless: the row holds the truth now.
    again = reconcile(venue, "orders", truth, key="email", now=NOW, grace=GRACE)
    assert again.set == [] and again.same == 2
    # Once the grace has passed, the fresh change is corrected too.
    later = reconcile(venue, "orders", truth, key="email", now=NOW + GRACE, grace=GRACE)
    assert later.set == [fresh.pk] and total(venue, fresh.pk) == 2000


def test_reconcile_refuses_a_bad_line_by_its_key_and_takes_a_bounded_step(venue):
    first = placed(venue, "ana@example.test", 1000, NOW - timedelta(days=2))
    second = placed(venue, "bo@example.test", 2000, NOW - timedelta(days=2))
    placed(venue, "cy@example.test", 3000, NOW - timedelta(days=2))
    truth = [{"email": "ana@example.test", "total": "lots"},
             {"email": "bo@example.test", "total": 2500, "status": "cancelled"},
             {"email": "cy@example.test", "total": 3500}]
    result = reconcile(venue, "orders", truth, key="email", now=NOW, grace=GRACE, limit=2)
    assert set(result.refused) == {"ana@example.test", "bo@example.test"}
    assert "total" in result.refused["ana@example.test"]
    assert "status" in result.refused["bo@example.test"]
    assert (result.set, result.left) == ([], 1)
    assert (total(venue, first.pk), total(venue, second.pk)) == (1000, 2000)


@pytest.mark.parametrize(("table", "key", "grace", "limit", "field"), [
    ("nowhere", "email", GRACE, 10, "table"),
    ("orders", "colour", GRACE, 10, "key"),
    ("orders", "email", -GRACE, 10, "grace"),
    ("orders", "email", GRACE, 0, "limit"),
    ("orders", "email", GRACE, 10_001, "limit"),
])
def test_reconcile_called_wrongly_names_the_argument_and_writes_nothing(venue, table, key,
                                                                       grace, limit, field):
    row = placed(venue, "ana@example.test", 1000, NOW - timedelta(days=2))
    audits = RowAudit.objects.count()
    with pytest.raises(PulseRefused, match=f"^{field}:"):
        reconcile(venue, table, [{"email": "ana@example.test", "total": 5}], key=key,
                  now=NOW, grace=grace, limit=limit)
    assert total(venue, row.pk) == 1000 and RowAudit.objects.count() == audits


def test_revive_asks_about_rows_stopped_in_a_state_and_moves_only_where_told(venue):
    def confirmed(email, at):
        row = placed(venue, email, 1000, at - timedelta(minutes=1))
        return move(venue, "orders", row.pk, "confirmed", who="staff", at=at)

    picked = confirmed("ana@example.test", NOW - timedelta(hours=7))
    unknown = confirmed("bo@example.test", NOW - timedelta(hours=8))
    recent = confirmed("cy@example.test", NOW - timedelta(hours=1))
    wrong = confirmed("di@example.test", NOW - timedelta(hours=9))
    asked = []
    answers = {picked.pk: "preparing", unknown.pk: None, wrong.pk: "picked_up"}

    def ask(row):  # the kitchen's system, asked about each order before anything moves
        asked.append(row.pk)
        return answers[row.pk]

    result = revive(venue, "orders", state="confirmed", older_than=timedelta(hours=6),
                    now=NOW, ask=ask)
    assert sorted(asked) == sorted([picked.pk, unknown.pk, wrong.pk])  # not the recent one
    assert result.moved == [(picked.pk, "preparing")]
    assert result.left_alone == [unknown.pk]
    assert list(result.refused) == [wrong.pk]
    assert result.refused[wrong.pk].startswith("STATE_MOVE_REFUSED")
    orders = venue.model("orders").objects
    assert [orders.get(pk=pk).status for pk in (picked.pk, unknown.pk, recent.pk, wrong.pk)] == [
        "preparing", "confirmed", "confirmed", "confirmed"]
    trail = RowAudit.objects.filter(table="orders", row=picked.pk).latest("at")
    assert (trail.kind, trail.who, trail.at) == ("move", "revive", NOW)
    # The next pulse asks again about what is still stopped, and only that.
    asked.clear()
    revive(venue, "orders", state="confirmed", older_than=timedelta(hours=6), now=NOW, ask=ask,
           limit=1)
    assert len(asked) == 1 and asked[0] in {unknown.pk, wrong.pk}


def test_revive_refuses_a_state_the_table_does_not_have(venue):
    with pytest.raises(PulseRefused, match="^state:"):
        revive(venue, "orders", state="lost", older_than=timedelta(hours=1), now=NOW,
               ask=lambda row: None)
    with pytest.raises(PulseRefused, match="^table:"):
        revive(venue, "settings", state="placed", older_than=timedelta(hours=1), now=NOW,
               ask=lambda row: None)
