"""Each item of "Needs attention" offers what settles it and leaves once settled (issue 27):
a failure sent again or marked resolved, a warning dismissed with a reason, a held row tried
again, a missed date opened on its subject's page. Live items: the desk's people leave test
mode first."""

import html
import re
from datetime import UTC, datetime, timedelta

import pytest

from timekeeping.basics import wallclock
from timekeeping.models import Connection, Delivery, Dismissal, Fault, Record, SetAside, Timer
from timekeeping.timers import records

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


def _text(answer) -> str:
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode())))


def _needs(desk, who="owner") -> str:
    with wallclock.fixed(NOW):
        page = desk.clients[who].get(desk.url(), {"test": "off"})
    return _text(page).split("Needs attention")[1].split("The next 30 days")[0]


def _settle(desk, who="owner", **fields):
    with wallclock.fixed(NOW):
        return desk.clients[who].post(desk.url("attention/settle"), fields)


def _late(desk) -> Timer:
    return Timer.objects.create(brand=desk.brand, key="late", kind="delay", place=4, owed=NOW,
                                state=Timer.State.FIRED, fired=NOW - timedelta(hours=1),
                                late_by=timedelta(minutes=9), owner_id="job_X",
                                owner_opened=NOW)


def test_a_warning_is_dismissed_with_a_reason_and_leaves(desk):
    late = _late(desk)
    assert "ran 9m late" in _needs(desk) and "Why it can be dismissed" in _needs(desk)
    refused = _settle(desk, kind="late", row=late.pk, do="dismiss", reason="   ")
    assert refused.status_code == 302 and not Dismissal.objects.exists()
    assert "Nothing was done. The reason: say why it can be dismissed." in _text(
        desk.clients["owner"].get(refused["Location"]))
    done = _settle(desk, kind="late", row=late.pk, do="dismiss", reason="the server rebooted")
    assert "Dismissed: it leaves the list" in _text(desk.clients["owner"].get(done["Location"]))
    assert "ran 9m late" not in _needs(desk)
    kept = Record.objects.get(kind="attention.dismissed")
    assert kept.data == {"kind": "late", "row": late.pk, "by": records.person(desk.brand.owner),
                         "reason": "the server rebooted"}
    again = _settle(desk, kind="late", row=late.pk, do="dismiss", reason="twice")
    assert "It was dismissed already." in _text(desk.clients["owner"].get(again["Location"]))
    assert Dismissal.objects.count() == 1


def test_a_failed_email_is_sent_again_and_a_fault_marked_resolved(desk):
    failed = Delivery.objects.create(brand=desk.brand, channel="email", idempotency_key="a",
                                     payload={"subject": "Your reminder"}, state="failed",
                                     attempts=5, next_attempt=NOW - timedelta(days=1))
    fault = Fault.objects.create(brand=desk.brand, phase=Fault.Phase.TIMERS,
                                 where=desk.brand.pk, error="ValueError: broke",
                                 first_seen=NOW, last_seen=NOW)
    needs = _needs(desk)
    assert "could not be sent after 5 tries" in needs and "Send again" in needs
    assert "Mark resolved" in needs
    _settle(desk, kind="undelivered", row=failed.pk, do="retry")
    failed.refresh_from_db()
    assert failed.state == "pending" and failed.attempts == 0 and failed.next_attempt == NOW
    _settle(desk, kind="fault", row=fault.pk, do="resolve")
    fault.refresh_from_db()
    assert fault.resolved == NOW and "has not worked since" not in _needs(desk)
    assert "could not be sent" not in _needs(desk)


def test_a_viewer_sees_no_control_and_a_stranger_or_anothers_row_changes_nothing(desk):
    late = _late(desk)
    assert "Why it can be dismissed" not in _needs(desk, "viewer")
    assert _settle(desk, "viewer", kind="late", row=late.pk, do="dismiss",
                   reason="x").status_code == 403
    assert _settle(desk, "stranger", kind="late", row=late.pk, do="dismiss",
                   reason="x").status_code == 404
    theirs = Timer.objects.create(brand=desk.other, key="late", kind="delay", place=4,
                                  owed=NOW, state=Timer.State.FIRED, fired=NOW,
                                  late_by=timedelta(minutes=9), owner_id="job_Y",
                                  owner_opened=NOW)
    answer = _settle(desk, kind="late", row=theirs.pk, do="dismiss", reason="x")
    assert "The item: no such item at this brand." in _text(
        desk.clients["owner"].get(answer["Location"]))
    answer = _settle(desk, kind="late", row=late.pk, do="retry")
    assert "What to do: this item offers no such action." in _text(
        desk.clients["owner"].get(answer["Location"]))
    assert not Dismissal.objects.exists()


def test_a_missed_date_opens_on_its_subjects_page(desk):
    Record.objects.create(kind="clock.lapsed", instant=desk.test_clock.frozen_time,
                          brand=desk.brand, test_clock=desk.test_clock,
                          subject=desk.subject.pk, job=desk.job.pk,
                          data={"name": "file", "due": "2028-04-18"})
    page = desk.clients["owner"].get(desk.url()).content.decode()  # the desk's test world
    assert f'href="/console/{desk.brand.pk}/subjects/{desk.subject.pk}/">open it</a>' in page


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_a_row_held_back_is_tried_again(world):
    link = world.brand.connection
    held = SetAside.objects.create(brand_id=link.brand_id, connection=link, table="orders",
                                   row=world.orders[0], rule=1, code="STATE_MOVE_REFUSED",
                                   until=NOW + timedelta(minutes=30))
    owner, home = world.clients["owner_a"], f"/console/{world.brand.pk}/"
    with wallclock.fixed(NOW):
        before = _text(owner.get(home))
        assert "Try it again now" in before
        assert f"Couldn't move row {world.orders[0]} of orders: a rule of the table holds it " \
               "back. Change the row or the rule, or move it by hand; it is tried again after " \
               "the hour" in before
        owner.post(f"{home}attention/settle", {"kind": "set aside", "row": held.pk,
                                               "do": "release"})
        held.refresh_from_db()
        assert held.until == NOW and "Couldn't move row" not in _text(owner.get(home))


def _parked(brand, key="boom") -> Timer:
    return Timer.objects.create(brand=brand, key=key, kind="delay", place=4,
                                owed=NOW - timedelta(hours=9), owner_opened=NOW,
                                state=Timer.State.HELD, parked=NOW - timedelta(minutes=5),
                                attempts=10, ended_by="parked",
                                last_error="Traceback …\nRuntimeError: the handler broke\n",
                                payload={"operation": "timekeeping.note", "input": {},
                                         "overdue_s": None})


def test_a_parked_timer_is_retried_now_or_given_up_from_the_list(desk):
    parked, other = _parked(desk.brand), _parked(desk.brand, "boom2")
    needs = _needs(desk)
    assert "failed 10 times in a row, so it was parked" in needs
    assert "Retry now" in needs and "Give up" in needs
    assert "Retry now" not in _needs(desk, "viewer")
    assert _settle(desk, "viewer", kind="parked", row=parked.pk,
                   do="retry_now").status_code == 403
    assert _settle(desk, "stranger", kind="parked", row=parked.pk,
                   do="give_up").status_code == 404
    done = _settle(desk, "manager", kind="parked", row=parked.pk, do="retry_now")
    assert "It is tried again at the next tick" in _text(
        desk.clients["manager"].get(done["Location"]))
    parked.refresh_from_db()
    assert (parked.state, parked.parked) == ("armed", None)
    assert Record.objects.get(kind="timer.retried").data["attempts"] == 10
    _settle(desk, kind="parked", row=other.pk, do="give_up")
    other.refresh_from_db()
    assert other.state == "cancelled" and other.ended_by.startswith("given up by")
    assert "so it was parked" not in _needs(desk)
    again = _settle(desk, kind="parked", row=other.pk, do="retry_now")
    assert "no such item at this brand" in _text(desk.clients["owner"].get(again["Location"]))


def _parked_moves(brand) -> Connection:
    """The brand's timed moves parked after ten failed minutes (issue 31, moves.parking); the
    tax desk has no tables, so its connection is made here, as a manifest with tables would."""
    link = Connection.objects.create(brand=brand, database="venue", attempts=10,
                                     parked=NOW - timedelta(minutes=5),
                                     last_error="Traceback …\nConnectionDoesNotExist: The "
                                                "connection 'venue' doesn't exist.\n")
    Fault.objects.create(brand=brand, phase=Fault.Phase.MOVES, where=link.pk, count=10,
                         error="ConnectionDoesNotExist", first_seen=NOW - timedelta(hours=9),
                         last_seen=NOW - timedelta(minutes=5))
    return link


def test_parked_timed_moves_are_retried_now_or_given_up_from_the_list(desk):
    link = _parked_moves(desk.brand)
    needs = _needs(desk)
    assert ("The timed moves of your tables failed 10 times in a row, so they were parked: no "
            "row moves on its own until you retry them or give them up") in needs
    assert "Retry now" in needs and "Give up" in needs
    assert "The timed moves failed" not in needs  # its fault is said by the parked item
    assert "Retry now" not in _needs(desk, "viewer")
    assert _settle(desk, "viewer", kind="parked moves", row=link.pk,
                   do="retry_now").status_code == 403
    assert _settle(desk, "stranger", kind="parked moves", row=link.pk,
                   do="give_up").status_code == 404
    done = _settle(desk, "manager", kind="parked moves", row=link.pk, do="retry_now")
    assert "They are tried again at the next tick" in _text(
        desk.clients["manager"].get(done["Location"]))
    link.refresh_from_db()
    assert (link.parked, link.next_attempt, link.attempts) == (None, None, 10)
    assert Record.objects.get(kind="connection.retried").data["attempts"] == 10
    # Back to backing off, it says so: its fault is on the list again, with when.
    assert "they are tried again later, waiting longer after each failure" in _needs(desk)
    Connection.objects.filter(pk=link.pk).update(parked=NOW)
    given_up = _settle(desk, kind="parked moves", row=link.pk, do="give_up")
    assert "the timed moves are paused" in _text(
        desk.clients["owner"].get(given_up["Location"]))
    link.refresh_from_db()
    assert (link.paused, link.parked, link.attempts) == (True, None, 0)
    assert "so they were parked" not in _needs(desk)
    again = _settle(desk, kind="parked moves", row=link.pk, do="retry_now")
    assert "no such item at this brand" in _text(desk.clients["owner"].get(again["Location"]))


def test_the_timed_moves_page_says_they_are_parked_and_offers_the_same_controls(desk):
    link = _parked_moves(desk.brand)
    page = desk.url("moves/")
    with wallclock.fixed(NOW):
        said = _text(desk.clients["owner"].get(page, {"test": "off"}))
        assert "Parked: the timed moves failed 10 times in a row" in said
        assert "Retry now" in said and "Give up" in said
        assert "Retry now" not in _text(desk.clients["viewer"].get(page, {"test": "off"}))
        done = desk.clients["owner"].post(desk.url("attention/settle"), {
            "kind": "parked moves", "row": link.pk, "do": "retry_now", "next": page})
        assert done["Location"] == page
        Connection.objects.filter(pk=link.pk).update(next_attempt=NOW + timedelta(minutes=8),
                                                     attempts=4)
        said = _text(desk.clients["owner"].get(page))
    assert "Parked" not in said
    assert "The timed moves failed 4 times in a row; they are tried again in 8 minutes" in said
