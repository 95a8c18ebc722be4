from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.admin.utils import quote
from django.core.checks import run_checks

from timekeeping.basics import wallclock
from timekeeping.models import Schedule, Timer
from timekeeping.schedules import pulses
from timekeeping.tick import loop
from timekeeping.timers import delays

T0 = datetime(2026, 11, 30, 14, tzinfo=UTC)


def test_a_sweep_takes_a_bounded_step_and_lets_the_transition_decide(brand):
    ids = [delays.delay("timekeeping.note", {}, brand=brand, at=T0) for _ in range(5)]
    touched = []

    def cancel_if_armed(timer):
        fresh = Timer.objects.select_for_update().get(pk=timer.pk)  # the transition re-reads
        if fresh.state == "armed":
            delays.cancel(fresh.pk)
        touched.append(fresh.pk)

    assert pulses.sweep(Timer.objects.filter(state="armed").order_by("owed"), cancel_if_armed,
                        limit=3) == 3
    assert Timer.objects.filter(state="cancelled").count() == 3
    assert pulses.sweep(Timer.objects.filter(state="armed"), cancel_if_armed) == 2
    assert sorted(touched) == sorted(ids)


def test_a_sweep_that_fails_halfway_keeps_what_it_did(brand):
    for _ in range(4):
        delays.delay("timekeeping.note", {}, brand=brand, at=T0)

    def cancel_until_third(timer):
        if Timer.objects.filter(state="cancelled").count() == 2:
            raise RuntimeError("the third one breaks")
        delays.cancel(timer.pk)

    with pytest.raises(RuntimeError):
        pulses.sweep(Timer.objects.filter(state="armed"), cancel_until_third)
    assert Timer.objects.filter(state="cancelled").count() == 2  # the next pulse takes the rest


def test_a_pulse_of_one_process_is_a_schedule():
    from timekeeping.schedules.declare import code_schedules

    @pulses.pulse("shop.sweep_orders", every="5m")
    def sweep_orders():
        return 0

    assert ("shop.sweep_orders", 300) in [(d.name, d.every_s) for d in code_schedules()]
    with pytest.raises(ValueError, match="scope: 'cluster'"):
        pulses.pulse("shop.x", every="5m", scope="cluster")
    with pytest.raises(ValueError, match="every: '5 minutes'"):
        pulses.pulse("shop.y", every="5 minutes")


@pytest.mark.filterwarnings("ignore:Overriding setting DATABASES")
def test_it_needs_the_schedules_store_named_with_several_databases(settings):
    settings.DATABASES = {**settings.DATABASES, "other": settings.DATABASES["default"]}
    settings.SCHEDULES_STORE = None
    assert "timekeeping.E001" in [e.id for e in run_checks()]
    settings.SCHEDULES_STORE = "elsewhere"
    assert "timekeeping.E002" in [e.id for e in run_checks()]
    settings.SCHEDULES_STORE = "default"
    assert not [e for e in run_checks() if e.id.startswith("timekeeping")]
    settings.DATABASE_ROUTERS = []  # named, but nothing would route to it
    assert "timekeeping.E003" in [e.id for e in run_checks()]


def test_the_loop_ticks_as_often_as_the_shortest_schedule_but_at_most_once_a_second(db):
    assert loop.period() == timedelta(minutes=1)
    Schedule.objects.create(key="a", name="a", action="demo.heartbeat", every_s=15)
    assert loop.period() == timedelta(seconds=15)
    Schedule.objects.create(key="b", name="b", action="demo.heartbeat", every_s=1,
                            active=False)
    assert loop.period() == timedelta(seconds=15)


def test_the_admin_pauses_resumes_and_runs_schedules(admin_client_logged_in):
    row = Schedule.objects.create(key="k", name="ops.census", action="demo.heartbeat",
                                  every_s=900, next_due=T0)
    page = admin_client_logged_in.get("/admin/timekeeping/schedule/")
    assert "No tick has run yet" in page.content.decode()
    for verb in ("pause_schedules", "run_now"):
        admin_client_logged_in.post("/admin/timekeeping/schedule/",
                                    {"action": verb, "_selected_action": [row.pk]})
    row.refresh_from_db()
    assert row.paused and row.run_requested
    detail = admin_client_logged_in.get(f"/admin/timekeeping/schedule/{quote(row.pk)}/change/")
    assert "it is paused" in detail.content.decode()
    admin_client_logged_in.post("/admin/timekeeping/schedule/",
                                {"action": "resume_schedules", "_selected_action": [row.pk]})
    row.refresh_from_db()
    assert not row.paused


def test_the_admin_retries_a_parked_schedule_or_gives_it_up(admin_client_logged_in):
    """The door for a parked schedule of the product's own, which no brand's console lists
    (issue 31); one not parked is left as it is."""
    parked = Schedule.objects.create(key="p", name="ops.census", action="demo.heartbeat",
                                     every_s=900, next_due=T0, attempts=10, parked=T0)
    fine = Schedule.objects.create(key="f", name="ops.fine", action="demo.heartbeat",
                                   every_s=900, next_due=T0)

    def act(verb):
        with wallclock.fixed(T0 + timedelta(minutes=20)):
            answer = admin_client_logged_in.post("/admin/timekeeping/schedule/", {
                "action": verb, "_selected_action": [parked.pk, fine.pk]}, follow=True)
        return answer.content.decode()

    assert "1 parked schedule(s) run at the next tick; 1 were not parked" in act("retry_parked")
    parked.refresh_from_db()
    assert (parked.parked, parked.run_requested, parked.next_due) == (
        None, True, T0 + timedelta(minutes=30))  # its grid, from now on
    Schedule.objects.filter(pk=parked.pk).update(parked=T0)
    assert "1 parked schedule(s) paused" in act("give_up_parked")
    parked.refresh_from_db()
    fine.refresh_from_db()
    assert (parked.paused, parked.parked, parked.attempts) == (True, None, 0)
    assert (fine.paused, fine.run_requested) == (False, False)
