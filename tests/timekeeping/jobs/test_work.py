"""A job's own time, through the gate and the tick on a test clock in New York, across the
spring change of 2028 (12 March): deadlines held while a party is asked, asks that expire
twice, grants that end, holds, quiet jobs, a member's withdrawal, and the tie order."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from timekeeping import clocks, manifests
from timekeeping.basics import wallclock
from timekeeping.clocks import gate
from timekeeping.jobs import asks, grants, lifecycle, tasks
from timekeeping.models import (
    Ask,
    Deadline,
    Delivery,
    Grant,
    Job,
    Member,
    Occurrence,
    Record,
    Subject,
    Task,
    Timer,
)
from timekeeping.tick import test_clocks
from timekeeping.timers.firing import Firing

START = datetime(2028, 3, 1, 14, tzinfo=UTC)  # 09:00 EST; EDT from 12 March


RUNG_RINGS = datetime(2028, 6, 27, 13, tzinfo=UTC)  # 3 days before 06-30, 09:00 EDT
RUN_SUBMIT = {"file": {"title": "file it", "due": {"input": "due"}, "owner": "brand",
                       "satisfied_by": ["file"], "rungs": ["run submit 3d"]}}


def manifest(**service) -> dict:
    base = {
        "subject": {"kind": "client"},
        "steps": {"file": {}, "nudge": {}},
        "clocks": {"file": {"title": "file it", "due": {"input": "due"}, "owner": "brand",
                            "satisfied_by": ["file"]}},
    }
    base.update(service)
    return {"calendar": {"zone": "America/New_York", "weekends": [], "closes": "23:59",
                         "rings_at": "09:00"},
            "services": {"work": base}}


@pytest.fixture
def world(brand, actors):
    actors["owner"].email = "owner@northwind.test"
    actors["owner"].save()

    def make(**service):
        manifests.load(brand, manifest(**service))
        clock = test_clocks.create(brand=brand, name="spring", frozen_time=START)
        subject = Subject.objects.create(brand=brand, test_clock=clock, kind="client", key="1",
                                         name="Harbor", zone="America/New_York",
                                         owner_name="Grace", contact_email="g@harbor.test")
        job = clocks.order(brand=brand, service="work", subject=subject,
                           input={"due": "2028-06-30"})
        return clock, job
    return make


def _advance(clock, to):
    clock.refresh_from_db()
    return test_clocks.advance(clock, to=to)


def _kinds(job, prefix):
    return [r.kind for r in Record.objects.filter(job=job.pk, kind__startswith=prefix)
            .order_by("instant", "id")]


def test_an_ask_that_expires_for_good_ends_its_job_in_a_bounded_number_of_statements(
        world, monkeypatch):
    """Issue 32: the job's end reads only what it could have (a job of no steward service
    keeps no one's dates; one of no grant has none; a brand with no steward service looks
    for no successor), ends its timers by key in one read and one update, takes no savepoint
    inside the firing's transaction, and reads no date's brand again. The ask's firings,
    its reminder's and its second expiry's: 26 statements before, 18 after."""
    clock, job = world(deliver={"organizer": {"ask": "owner", "expires": "2d"}},
                       price={"within": "30d", "late": "20%"})
    ask = Ask.objects.get(job=job)
    _advance(clock, ask.expires)
    ask.refresh_from_db()
    sent, fire = [], Firing.fire

    def seen(execute, sql, *rest):
        sent.append(sql)
        return execute(sql, *rest)

    def counted(batch, timer):
        if timer.kind != "ask":
            return fire(batch, timer)
        with connection.execute_wrapper(seen):
            return fire(batch, timer)

    monkeypatch.setattr(Firing, "fire", counted)
    _advance(clock, ask.expires)
    assert Job.objects.get(pk=job.pk).state == Job.State.LAPSED
    assert Deadline.objects.get(job=job).state == Deadline.State.CLOSED
    assert not Timer.objects.filter(owner_id=job.pk, state=Timer.State.ARMED).exists()
    assert len(sent) <= 18, "\n".join(sent)


def test_a_job_deadline_is_at_risk_at_exactly_three_quarters_of_its_work_time(world):
    clock, job = world(price={"within": "30d", "late": "20%"})
    deadline = Deadline.objects.get(job=job)
    # 30 calendar days at 09:00 New York: the spring change makes it 719 hours, not 720.
    assert deadline.ends == datetime(2028, 3, 31, 13, tzinfo=UTC)
    assert deadline.budget == timedelta(hours=719)
    risk = START + timedelta(hours=719) * 3 / 4
    _advance(clock, risk - timedelta(seconds=1))
    assert Deadline.objects.get(pk=deadline.pk).state == Deadline.State.OPEN
    _advance(clock, risk)
    assert Deadline.objects.get(pk=deadline.pk).state == Deadline.State.AT_RISK
    _advance(clock, deadline.ends)
    late = Record.objects.get(job=job.pk, kind="deadline.late")
    assert late.data["late_price"] == "20%" and late.instant == deadline.ends
    assert Deadline.objects.get(pk=deadline.pk).state == Deadline.State.LATE


def test_held_time_is_not_counted_and_the_answer_rearms_the_work_left(world):
    clock, job = world(deliver={"organizer": {"ask": "owner", "expires": "60d"}},
                       price={"within": "30d"})
    deadline = Deadline.objects.get(job=job)
    assert deadline.running_since is None and deadline.held_by.startswith("ask_")
    risk = Timer.objects.get(key=f"{deadline.pk}:risk", state=Timer.State.HELD)
    assert "of work left · held by ask_" in risk.ended_by
    answered_at = START + timedelta(days=10)
    _advance(clock, answered_at)
    assert Deadline.objects.get(pk=deadline.pk).state == Deadline.State.OPEN  # nothing counted
    ask = Ask.objects.get(job=job)
    opened = asks.Opened(ask, "")
    assert opened.ask.state == Ask.State.OPEN
    gate.propose(job=job, step="organizer", by="the party")  # the answer, however it comes
    deadline.refresh_from_db()
    assert deadline.running_since == answered_at and deadline.used == timedelta(0)
    assert deadline.ends == answered_at + deadline.budget
    rearmed = Timer.objects.get(key=f"{deadline.pk}:risk", state=Timer.State.ARMED)
    assert rearmed.owed == answered_at + deadline.budget * 3 / 4
    assert Ask.objects.get(pk=ask.pk).state == Ask.State.ANSWERED


def test_the_link_serves_its_own_expiry_and_the_second_expiry_lapses_the_job(world):
    clock, job = world(deliver={"organizer": {"ask": "owner", "expires": "2d"}})
    ask = Ask.objects.get(job=job)
    first = ask.expires
    assert first == datetime(2028, 3, 3, 14, tzinfo=UTC)
    _advance(clock, first - timedelta(days=1))
    assert _kinds(job, "ask.") == ["ask.opened", "ask.reminded"]
    _advance(clock, first)
    ask.refresh_from_db()
    assert ask.state == Ask.State.OPEN and ask.expiries == 1
    assert ask.expires == datetime(2028, 3, 5, 14, tzinfo=UTC)
    # T1: past its moment the link refuses on use, before any tick fires the expiry.
    refused = asks.judge(ask, ask.expires)
    assert refused.code == "link_expired" and refused.moment == ask.expires
    assert asks.judge(ask, ask.expires - timedelta(seconds=1)) is None
    _advance(clock, ask.expires)
    job.refresh_from_db()
    assert job.state == Job.State.LAPSED
    lapsed = Record.objects.get(job=job.pk, kind="job.lapsed")
    assert lapsed.data["cause"] == ask.pk and lapsed.data["hold"] == "returns"
    assert Ask.objects.get(pk=ask.pk).state == Ask.State.LAPSED
    said = [d.payload["subject"] for d in Delivery.objects.all()]
    assert sum("Stopped: " in subject for subject in said) == 2  # buyer and owner
    assert all(subject.startswith("Practice run: ") for subject in said)


def test_a_deadline_before_a_clock_follows_the_clock_when_it_moves(world):
    clock, job = world(steps={"file": {}, "nudge": {}, "extend": {}},
                       clocks={"file": {"title": "file it", "due": {"input": "due"},
                                        "owner": "brand", "satisfied_by": ["file"],
                                        "moves": {"extend": {"input": "extended"}}}},
                       price={"within": "5d before file"})
    job.input = {"due": "2028-06-30", "extended": "2028-09-29"}
    Job.objects.filter(pk=job.pk).update(input=job.input)
    deadline = Deadline.objects.get(job=job)
    assert deadline.ends == datetime(2028, 6, 26, 4, tzinfo=UTC)  # 5 days before 07-01 00:00
    assert gate.propose(job=Job.objects.get(pk=job.pk), step="extend").committed
    deadline.refresh_from_db()
    assert deadline.ends == datetime(2028, 9, 25, 4, tzinfo=UTC)
    late = Timer.objects.get(key=f"{deadline.pk}:late", state=Timer.State.ARMED)
    assert late.owed == deadline.ends
    assert Record.objects.filter(job=job.pk, kind="deadline.moved").count() == 1


def test_an_ended_grant_refuses_its_steps_holds_its_run_rung_and_is_asked_again(world):
    clock, job = world(steps={"file": {}, "nudge": {}},
                       deliver={"submit": {"needs_grant": True}}, clocks=RUN_SUBMIT,
                       scope={"for": "10d", "expires": "120d"})
    grant = Grant.objects.get(job=job)
    assert grant.ends == datetime(2028, 3, 11, 14, tzinfo=UTC)
    _advance(clock, grant.ends)
    refused = gate.propose(job=Job.objects.get(pk=job.pk), step="submit")
    assert (refused.committed, refused.code) == (False, "needs_grant")
    again = Ask.objects.get(job=job, purpose=Ask.Purpose.GRANT)
    # The file date's `run submit 3d` rung rings on 06-27 at 09:00 EDT, the grant still ended.
    _advance(clock, RUNG_RINGS)
    rung = Timer.objects.get(key__endswith="run submit 3d")
    assert rung.state == Timer.State.HELD and rung.ended_by.endswith(f"grant {grant.pk} ended")
    assert Ask.objects.get(pk=again.pk).state == Ask.State.OPEN
    assert Job.objects.get(pk=job.pk).state == Job.State.OPEN


def test_a_grant_given_again_releases_the_held_rung_which_fires_in_place(world):
    clock, job = world(deliver={"submit": {"needs_grant": True}}, clocks=RUN_SUBMIT,
                       scope={"for": "10d", "expires": "120d"})
    grant = Grant.objects.get(job=job)
    _advance(clock, RUNG_RINGS + timedelta(hours=2))
    assert Timer.objects.get(key__endswith="run submit 3d").state == Timer.State.HELD
    ask = Ask.objects.get(job=job, purpose=Ask.Purpose.GRANT)
    asks.settle(ask, RUNG_RINGS + timedelta(hours=2), by="party")
    grants.renew(Job.objects.get(pk=job.pk), RUNG_RINGS + timedelta(hours=2), by="party")
    assert Timer.objects.get(key__endswith="run submit 3d").state == Timer.State.ARMED
    _advance(clock, RUNG_RINGS + timedelta(hours=3))  # owed in the past: it fires in place
    committed = Record.objects.get(job=job.pk, kind="step.committed")
    assert committed.data["step"] == "submit"
    assert Grant.objects.get(pk=grant.pk).state == Grant.State.ACTIVE


def test_a_hold_warns_at_three_quarters_extends_once_and_opens_again_at_its_end(world,
                                                                                  brand,
                                                                                  actors):
    clock, job = world(deliver={"prepare": {"task": True, "hold": "2d", "within": "10d"}})
    member = Member.objects.create(brand=brand, user=actors["staff"], role="manager")
    actors["staff"].email = "staff@northwind.test"
    actors["staff"].save()
    task = Task.objects.get(job=job)
    assert task.due == Deadline.objects.get(job=job, step="prepare").ends
    tasks.take(task, member)
    task.refresh_from_db()
    assert task.held_until == START + timedelta(days=2)
    tasks.extend(task, member)
    with pytest.raises(tasks.TaskRefused) as second:
        tasks.extend(task, member)
    assert second.value.code == "hold_extended_once"
    task.refresh_from_db()
    assert task.held_until == START + timedelta(days=4)
    _advance(clock, START + timedelta(days=3))  # three quarters of four days
    assert sorted(_kinds(job, "task.")) == ["task.extended", "task.opened", "task.taken",
                                            "task.warned"]
    _advance(clock, START + timedelta(days=4))
    task.refresh_from_db()
    assert task.state == Task.State.OPEN and task.holder is None
    assert _kinds(job, "task.")[-1] == "task.opened_again"


def test_a_quiet_job_raises_its_signal_and_its_goto_moves_the_job(world):
    clock, job = world(signals={"quiet": {"silent": "14d", "goto": "nudge"}})
    gate.propose(job=job, step="file")  # something happens on day 0: silent from then
    quiet_from = datetime(2028, 3, 15, 13, tzinfo=UTC)  # 14 days at 09:00, now EDT
    _advance(clock, quiet_from - timedelta(minutes=1))
    assert not Record.objects.filter(job=job.pk, kind="signal.raised").exists()
    _advance(clock, quiet_from)
    raised = Record.objects.get(job=job.pk, kind="signal.raised")
    assert raised.data == {"signal": "quiet", "silent": "14d", "goto": "nudge"}
    steps = [r.data["step"] for r in Record.objects.filter(job=job.pk, kind="step.committed")]
    assert steps == ["file", "nudge"]


def test_withdrawing_hands_dates_and_holds_to_the_successor(world, brand, actors):
    clock, job = world(deliver={"prepare": {"task": True}})
    leaving = Member.objects.create(brand=brand, user=actors["staff"], role="manager")
    successor = Member.objects.create(brand=brand, user=actors["member"], role="manager")
    occurrence = Occurrence.objects.get(clock__job=job)
    clocks.assign(occurrence, leaving, by="owner")
    tasks.take(Task.objects.get(job=job), leaving)
    moved = lifecycle.withdraw(leaving, job.subject, successor, by="staff")
    assert moved == {"dates": 1, "tasks": 1}
    assert Occurrence.objects.get(pk=occurrence.pk).assignee == successor
    assert Task.objects.get(job=job).holder == successor
    withdrew = Record.objects.get(kind="member.withdrew")
    assert withdrew.data["successor"] == successor.pk
    with pytest.raises(lifecycle.WithdrawRefused) as same:
        lifecycle.withdraw(successor, job.subject, successor, by="x")
    assert same.value.code == "successor_self"


def test_a_live_seat_of_record_lapses_with_the_owner_and_the_member_told(brand, actors):
    """S23: withdrawing with no successor on the real clock. The record says who hears, and
    both the brand's owner and the member who left are emailed; the customer is not."""
    actors["owner"].email, actors["staff"].email = "owner@northwind.test", "staff@northwind.test"
    for user in (actors["owner"], actors["staff"]):
        user.save()
    manifests.load(brand, manifest())
    leaving = Member.objects.create(brand=brand, user=actors["staff"], role="manager")
    with wallclock.fixed(START):
        subject = Subject.objects.create(brand=brand, kind="client", key="1", name="Harbor",
                                         zone="America/New_York", owner_name="Grace",
                                         contact_email="g@harbor.test")
        job = clocks.order(brand=brand, service="work", subject=subject,
                           input={"due": "2028-06-30"})
        clocks.assign(Occurrence.objects.get(clock__job=job), leaving, by="owner")
        assert lifecycle.withdraw(leaving, subject, None, by="staff") == {"dates": 1,
                                                                          "tasks": 0}
    lapsed = Record.objects.get(kind="subject.of_record_lapsed")
    assert lapsed.instant == START and lapsed.test_clock_id is None
    assert [each["who"] for each in lapsed.data["told"] if each["emailed"]] == ["owner",
                                                                                "member"]
    sent = {tuple(each.payload["to"]): each.payload for each in Delivery.objects.all()}
    assert set(sent) == {("owner@northwind.test",), ("staff@northwind.test",)}
    assert sent[("staff@northwind.test",)]["subject"] == "No one answers for Harbor now: " \
                                                          "staff withdrew"
    assert "/delivery/" in sent[("staff@northwind.test",)]["body"]
    assert f"/console/{brand.pk}/subjects/{subject.pk}/" in \
        sent[("owner@northwind.test",)]["body"]


def test_ending_a_job_meets_its_deadline_and_leaves_subject_dates_open(world):
    clock, job = world(price={"within": "30d"},
                       clocks={"file": {"title": "file it", "due": {"input": "due"},
                                        "owner": "brand", "satisfied_by": ["file"]},
                               "keep": {"title": "keep it", "due": {"input": "due"},
                                        "owner": "brand", "lives_on": "subject"}})
    lifecycle.end(job, by="owner")
    assert Deadline.objects.get(job=job).state == Deadline.State.MET
    assert Record.objects.get(job=job.pk, kind="deadline.met").data["on_time"] is True
    statuses = dict(Occurrence.objects.filter(clock__job=job).values_list("clock__name",
                                                                            "status"))
    assert statuses == {"file": "closed", "keep": "open"}
    with pytest.raises(clocks.OrderRefused):
        lifecycle.end(Job.objects.get(pk=job.pk), by="owner")


def test_places_three_to_six_fire_in_order_at_one_instant(world, brand, actors):
    """An ask's expiry, a hold's end, a deadline and a clock rung all owed at one instant."""
    clock, job = world(deliver={"organizer": {"ask": "owner", "expires": "2d"},
                                "prepare": {"task": True, "hold": "2d"}},
                       clocks={"file": {"title": "file it", "due": {"input": "due"},
                                        "owner": "brand", "rungs": ["notice 119d"]}},
                       signals={"quiet": {"silent": "2d", "goto": "nudge"}})
    member = Member.objects.create(brand=brand, user=actors["staff"], role="manager")
    tasks.take(Task.objects.get(job=job), member)
    at = START + timedelta(days=2)
    assert Occurrence.objects.get(clock__job=job).due.isoformat() == "2028-06-30"
    clock.refresh_from_db()
    rows = []  # the trace's rows, handed over batch by batch
    test_clocks.advance(clock, to=at, trace=lambda run, batch: rows.extend(batch))
    fired = [row.timer.kind for row in rows if row.timer.owed == at]
    assert fired == ["ask", "task", "signal", "clock"]
    order = [row.timer.place for row in rows if row.timer.owed == at]
    assert order == sorted(order)


def test_a_job_keeps_the_manifest_version_it_opened_under(world, brand):
    clock, job = world(price={"within": "30d"})
    manifests.load(brand, manifest(price={"within": "3d"}))
    later = Subject.objects.create(brand=brand, test_clock=clock, kind="client", key="2",
                                   name="Later")
    newer = clocks.order(brand=brand, service="work", subject=later,
                         input={"due": "2028-06-30"})
    assert Deadline.objects.get(job=job).rule == "30d"
    assert Deadline.objects.get(job=newer).rule == "3d"
    lifecycle.open_steps(Job.objects.get(pk=job.pk), START)  # reads the job's own version
    assert Deadline.objects.filter(job=job).count() == 1


def test_a_notice_on_a_date_assigned_to_a_member_goes_to_that_member(brand, actors):
    """On the real clock (a test clock's emails reach the brand's owner only)."""
    from timekeeping.basics import wallclock as wall
    actors["owner"].email = "owner@northwind.test"
    actors["owner"].save()
    actors["staff"].email = "staff@northwind.test"
    actors["staff"].save()
    manifests.load(brand, manifest(clocks={"file": {
        "title": "file it", "due": {"input": "due"}, "owner": "brand",
        "rungs": ["notice 30d"]}}))
    subject = Subject.objects.create(brand=brand, kind="client", key="9", name="Real")
    with wall.fixed(START):
        job = clocks.order(brand=brand, service="work", subject=subject,
                           input={"due": "2028-06-30"})
        member = Member.objects.create(brand=brand, user=actors["staff"], role="manager")
        clocks.assign(Occurrence.objects.get(clock__job=job), member, by="owner")
    from timekeeping.tick.phases import run_once

    run_once(now=datetime(2028, 5, 31, 13, tzinfo=UTC), phases=False)
    (told,) = [mail for mail in Delivery.objects.all()
               if "reminder: file it" in mail.payload["subject"]]
    assert told.payload["to"] == ["staff@northwind.test"]


def test_a_two_day_hold_across_the_spring_change_ends_at_the_hour_it_began(world, brand,
                                                                             actors):
    clock, job = world(deliver={"prepare": {"task": True, "hold": "2d"}})
    member = Member.objects.create(brand=brand, user=actors["staff"], role="manager")
    saturday = datetime(2028, 3, 11, 14, tzinfo=UTC)  # 09:00 EST, the day before the change
    _advance(clock, saturday)
    task = tasks.take(Task.objects.get(job=job), member)
    assert task.held_until == datetime(2028, 3, 13, 13, tzinfo=UTC)  # 09:00 EDT, 47 hours on


def test_a_tasks_due_date_follows_its_step_deadline_while_a_party_is_asked(world):
    clock, job = world(deliver={"organizer": {"ask": "owner", "expires": "60d"},
                                "prepare": {"task": True, "within": "10d"}})
    task = Task.objects.get(job=job)
    held_due = task.due
    answered = START + timedelta(days=5)
    _advance(clock, answered)
    gate.propose(job=Job.objects.get(pk=job.pk), step="organizer")
    task.refresh_from_db()
    deadline = Deadline.objects.get(job=job, step="prepare")
    assert task.due == deadline.ends == answered + deadline.budget
    assert task.due > held_due
