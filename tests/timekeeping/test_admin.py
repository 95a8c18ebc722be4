import copy
import json
from datetime import UTC, date, datetime, timedelta

import pytest
from django.contrib.admin.utils import quote
from django.forms.models import model_to_dict

from calendars.models import Postponement
from money.models import Account, Hold, Posting
from timekeeping import clocks, manifests
from timekeeping.basics import wallclock
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import (
    Clock,
    Connection,
    Delivery,
    Occurrence,
    Record,
    RowAudit,
    Schedule,
    ScheduleRun,
    Subject,
    TestClock,
    TickRun,
    Timer,
)
from timekeeping.tick import test_clocks
from timekeeping.timers import outbox

TAX = json.loads(TAX_MANIFEST.read_text())


@pytest.mark.parametrize("model", ["brand", "testclock", "record"])
def test_it_lists_each_model_in_the_admin(admin_client_logged_in, brand, test_clock, model):
    page = admin_client_logged_in.get(f"/admin/timekeeping/{model}/")
    assert page.status_code == 200


def test_it_shows_a_record_but_offers_no_way_to_change_it(admin_client_logged_in, brand):
    record = Record.objects.create(kind="note", instant=brand.created, brand=brand)
    page = admin_client_logged_in.get(f"/admin/timekeeping/record/{quote(record.pk)}/change/")
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    assert admin_client_logged_in.get("/admin/timekeeping/record/add/").status_code == 403


def test_it_keeps_strangers_out_of_the_admin(client, actors):
    client.force_login(actors["outsider"])
    page = client.get("/admin/timekeeping/brand/")
    assert page.status_code == 302
    assert "/admin/login/" in page["Location"]


@pytest.mark.parametrize("model", ["timer", "tickrun", "delivery"])
def test_it_lists_the_tick_models_in_the_admin(admin_client_logged_in, brand, model):
    assert admin_client_logged_in.get(f"/admin/timekeeping/{model}/").status_code == 200


def test_it_filters_timers_by_lateness_and_says_why_on_each(admin_client_logged_in, brand):
    from timekeeping.tick import phases
    from timekeeping.timers import delays

    at = datetime(2026, 11, 30, 14, tzinfo=UTC)
    late = delays.delay("timekeeping.note", {}, brand=brand, at=at - timedelta(minutes=2),
                        key="late-one")
    waiting = delays.delay("timekeeping.note", {}, brand=brand, at=at + timedelta(days=9),
                           key="waiting-one")
    phases.run_once(now=at)
    page = admin_client_logged_in.get("/admin/timekeeping/timer/?late=yes").content.decode()
    assert late in page and waiting not in page
    found = admin_client_logged_in.get("/admin/timekeeping/timer/?q=waiting-one")
    assert waiting in found.content.decode() and late not in found.content.decode()
    detail = admin_client_logged_in.get(f"/admin/timekeeping/timer/{quote(late)}/change/")
    assert "late by 2m" in detail.content.decode()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_it_shows_a_job_and_a_clock_with_their_rows(admin_client_logged_in, settings):
    from django.core.management import call_command

    settings.DEBUG = True  # the demo loads only in development
    from timekeeping.models import Clock, Job

    call_command("demo")
    call_command("tick", "--test-clock", "tc_7Hq4", "--to", "2028-02-01T20:00:00Z")  # opens it
    clock = Clock.objects.get(name="file", subject_id="sbj_7Hq2", job__period="2027")
    page = admin_client_logged_in.get(f"/admin/timekeeping/clock/{quote(clock.pk)}/change/")
    assert page.status_code == 200 and "US-NJ" in page.content.decode()
    job = Job.objects.get(subject_id="sbj_7Hq2", period="2027")
    page = admin_client_logged_in.get(f"/admin/timekeeping/job/{quote(job.pk)}/change/")
    assert page.status_code == 200 and "refund-window" in page.content.decode()


# -- what the product owns is read-only; the admin's writes go through the product ------------

T = datetime(2028, 2, 1, 14, tzinfo=UTC)


@pytest.fixture
def world(brand):
    """One row of each thing the product writes: a tax job on a test clock (its timers,
    records, clocks and dates), a delivery, runs, an audit row, a posting and a hold."""
    manifests.load(brand, copy.deepcopy(TAX))
    brand.refresh_from_db()
    test_clock = TestClock.objects.create(brand=brand, name="2027", frozen_time=T)
    subject = Subject.objects.create(brand=brand, test_clock=test_clock, kind="taxpayer",
                                     key="11-1111111", name="Fernhill Tools",
                                     zone="America/New_York")
    job = clocks.order(brand=brand, service="annual-return", subject=subject, period="2027",
                       input={"jurisdictions": ["US", "US-NJ"],
                              "earliest_credit_expiry": "2046-12-31"})
    with wallclock.fixed(T):
        outbox.enqueue_email(brand=brand, to=["a@example.test"], subject="s", body="b",
                             key="failed-one")
    Delivery.objects.filter(idempotency_key="failed-one").update(state="failed", attempts=10)
    schedule = Schedule.objects.create(key="ops.census", name="ops.census",
                                       action="demo.heartbeat", every_s=60)
    link = Connection.objects.create(brand=brand)
    payer = Account.objects.create(brand=brand, key="buyer:1", currency="USD")
    postponement, _ = clocks.add_postponement(
        calendar=brand.calendar, from_date=date(2028, 5, 15), through=date(2028, 5, 15),
        to=date(2028, 5, 16), where={}, notice="Relief notice NJ-1",
        test_clock_id=test_clock.pk)
    return {
        "timekeeping/timer": Timer.objects.filter(test_clock=test_clock).first(),
        "timekeeping/record": Record.objects.filter(brand=brand).first(),
        "timekeeping/delivery": Delivery.objects.get(),
        "timekeeping/tickrun": TickRun.objects.create(brand=brand, instant=T, started=T),
        "timekeeping/schedule": schedule,
        "timekeeping/schedulerun": ScheduleRun.objects.create(schedule=schedule, due=T, tick=T,
                                                              outcome="succeeded"),
        "timekeeping/rowaudit": RowAudit.objects.create(brand=brand, connection=link,
                                                        table="orders", row=1, kind="create",
                                                        who="api", at=T),
        "timekeeping/job": job,
        "timekeeping/walk": test_clocks.request(test_clock, to=T + timedelta(days=1)),
        "timekeeping/clock": Clock.objects.filter(job=job).first(),
        "calendars/postponement": postponement,
        "money/posting": Posting.objects.create(brand=brand, kind="charge",
                                                reference="job:1", currency="USD", at=T),
        "money/hold": Hold.objects.create(brand=brand, reference="hold:1", payer=payer,
                                          amount=500, currency="USD", until=T),
        "test_clock": test_clock, "connection": link,
    }


PRODUCT_OWNED = ["timekeeping/timer", "timekeeping/record", "timekeeping/delivery",
                 "timekeeping/tickrun", "timekeeping/schedule", "timekeeping/schedulerun",
                 "timekeeping/rowaudit", "timekeeping/job", "timekeeping/clock",
                 "calendars/postponement", "money/posting", "money/hold", "timekeeping/walk"]


# A postponement is added in the admin (through the clocks), then never changed there.
ADDED_HERE = {"calendars/postponement"}


def snapshot(row):
    return model_to_dict(type(row).objects.get(pk=row.pk))


@pytest.mark.parametrize("model", PRODUCT_OWNED)
def test_it_shows_what_the_product_owns_and_refuses_every_change(admin_client_logged_in, world,
                                                                 model):
    row = world[model]
    before = snapshot(row)
    page = admin_client_logged_in.get(f"/admin/{model}/{quote(row.pk)}/change/")
    assert page.status_code == 200
    assert 'name="_save"' not in page.content.decode()
    changed = admin_client_logged_in.post(f"/admin/{model}/{quote(row.pk)}/change/", {
        "state": "fired", "owed": "2020-01-01", "attempts": "0", "next_due": "2020-01-01",
        "every_s": "1", "paused": "on", "to": "2020-01-01", "amount": "1", "_save": "Save"})
    assert changed.status_code == 403
    adding = admin_client_logged_in.get(f"/admin/{model}/add/").status_code
    assert adding == (200 if model in ADDED_HERE else 403)
    assert admin_client_logged_in.get(f"/admin/{model}/{quote(row.pk)}/delete/").status_code == 403
    assert admin_client_logged_in.post(f"/admin/{model}/{quote(row.pk)}/delete/",
                                       {"post": "yes"}).status_code == 403
    assert snapshot(row) == before


@pytest.mark.parametrize("model", PRODUCT_OWNED + ["timekeeping/testclock",
                                                   "timekeeping/connection",
                                                   "timekeeping/subject", "calendars/calendar"])
def test_it_lists_each_model_in_a_bounded_number_of_queries(admin_client_logged_in, world,
                                                             model,
                                                             django_assert_max_num_queries):
    with django_assert_max_num_queries(10):
        page = admin_client_logged_in.get(f"/admin/{model}/")
    assert page.status_code == 200


def test_it_makes_a_test_clock_with_its_time_but_never_moves_it(admin_client_logged_in, brand):
    made = admin_client_logged_in.post("/admin/timekeeping/testclock/add/", {
        "brand": brand.pk, "name": "spring", "frozen_time_0": "2028-03-01",
        "frozen_time_1": "12:00:00"})
    assert made.status_code == 302
    test_clock = TestClock.objects.get(name="spring")
    assert test_clock.frozen_time == datetime(2028, 3, 1, 12, tzinfo=UTC)
    page = admin_client_logged_in.get(
        f"/admin/timekeeping/testclock/{quote(test_clock.pk)}/change/")
    assert 'name="frozen_time_0"' not in page.content.decode()
    assert 'name="status"' not in page.content.decode()
    moved = admin_client_logged_in.post(
        f"/admin/timekeeping/testclock/{quote(test_clock.pk)}/change/", {
            "name": "spring, renamed", "frozen_time_0": "2027-01-01", "frozen_time_1": "00:00:00",
            "status": "advancing"})
    assert moved.status_code == 302
    test_clock.refresh_from_db()
    assert test_clock.name == "spring, renamed"
    assert (test_clock.frozen_time, test_clock.status) == (datetime(2028, 3, 1, 12, tzinfo=UTC),
                                                           "ready")
    assert admin_client_logged_in.get(
        f"/admin/timekeeping/testclock/{quote(test_clock.pk)}/delete/").status_code == 403


def test_it_refuses_a_test_clock_outside_the_dates_kept(admin_client_logged_in, brand):
    page = admin_client_logged_in.post("/admin/timekeeping/testclock/add/", {
        "brand": brand.pk, "name": "far", "frozen_time_0": "2999-03-01",
        "frozen_time_1": "12:00:00"})
    assert page.status_code == 200 and "frozen_time" in page.context["adminform"].form.errors
    assert not TestClock.objects.exists()


def test_it_changes_a_connections_zone_and_pause_but_never_its_database(admin_client_logged_in,
                                                                          world):
    link = world["connection"]
    page = admin_client_logged_in.post(f"/admin/timekeeping/connection/{quote(link.pk)}/change/", {
        "database": "elsewhere", "zone": "Europe/London", "paused": "on"})
    assert page.status_code == 302
    link.refresh_from_db()
    assert (link.database, link.zone, link.paused) == ("default", "Europe/London", True)


def test_it_adds_a_postponement_through_the_clocks_and_moves_an_open_date(
        admin_client_logged_in, world):
    job, test_clock = world["timekeeping/job"], world["test_clock"]
    page = admin_client_logged_in.post("/admin/calendars/postponement/add/", {
        "calendar": job.brand.calendar_id, "from_date": "2028-04-01", "through": "2028-04-30",
        "to": "2028-06-15", "where": '{"zone": "America/New_York"}',
        "notice": "Relief notice NY-2028-03", "test_clock": test_clock.pk}, follow=True)
    assert page.status_code == 200
    pay = Occurrence.objects.get(clock__job=job, clock__name="pay")
    assert (pay.due, pay.moved_by) == (date(2028, 6, 15), "calendar")
    moved = Record.objects.get(kind="clock.moved", job=job.pk, data__name="pay")
    assert moved.data["notice"] == "Relief notice NY-2028-03"
    said = Record.objects.get(kind="calendar.postponed", data__notice="Relief notice NY-2028-03")
    assert said.data["by"] == "admin root"
    assert any("Moved 2 open dates" in str(m) for m in page.context["messages"])


@pytest.mark.parametrize("given, field", [
    ({"through": "2028-03-01"}, "through"),
    ({"from_date": "1850-04-01"}, "from_date"),
    ({"notice": "  "}, "notice"),
    ({"test_clock": "tc_not_here"}, "test_clock"),
])
def test_it_shows_a_refused_postponement_on_its_field_and_adds_nothing(admin_client_logged_in,
                                                                       world, given, field):
    before = Postponement.objects.count()
    page = admin_client_logged_in.post("/admin/calendars/postponement/add/", {
        "calendar": world["timekeeping/job"].brand.calendar_id, "from_date": "2028-04-01",
        "through": "2028-04-30", "to": "2028-06-15", "where": "{}", "notice": "Relief 2",
        "test_clock": world["test_clock"].pk, **given})
    assert page.status_code == 200
    assert field in page.context["adminform"].form.errors
    assert Postponement.objects.count() == before
    pay = Occurrence.objects.get(clock__job=world["timekeeping/job"], clock__name="pay")
    assert pay.due == date(2028, 4, 18)


def test_it_rerolls_the_open_dates_when_a_calendar_is_edited(admin_client_logged_in, world):
    job = world["timekeeping/job"]
    calendar = job.brand.calendar
    page = admin_client_logged_in.post(f"/admin/calendars/calendar/{quote(calendar.pk)}/change/", {
        "name": calendar.name, "zone": "America/New_York", "weekends": '["sat", "sun"]',
        "holidays_country": "US", "holidays_subdivision": "DC",
        "closed_dates": '["2028-04-18", "2028-05-16"]', "closes": "23:59", "rings_at": "09:00",
        "roll": "next open day"}, follow=True)
    assert page.status_code == 200
    federal = Occurrence.objects.get(clock__job=job, clock__name="file", item="US")
    assert (federal.due, federal.rolled_from) == (date(2028, 4, 19), date(2028, 4, 15))
    moved = Record.objects.get(kind="clock.moved", job=job.pk, data__item="US")
    assert (moved.data["by"], moved.data["who"]) == ("calendar change", "admin root")
    said = [str(m) for m in page.context["messages"]]
    assert said[0] == ("Re-rolled 2 open dates; 1 kept as they are (an authority's notice set "
                       "its date: 1).")
    assert Occurrence.objects.get(clock__job=job, item="US-NJ").due == date(2028, 5, 16)


def test_it_sends_only_the_failed_deliveries_again(world):
    failed = world["timekeeping/delivery"]
    with wallclock.fixed(T):
        outbox.enqueue_email(brand=failed.brand, to=["b@example.test"], subject="s", body="b",
                             key="pending-one")
    pending = Delivery.objects.get(idempotency_key="pending-one")
    later = T + timedelta(hours=3)
    assert outbox.retry([failed.pk, pending.pk], now=later) == 1
    assert outbox.retry([failed.pk], now=later) == 0  # pending now: nothing to send again
    failed.refresh_from_db()
    assert (failed.state, failed.attempts, failed.next_attempt) == ("pending", 0, later)
    assert Delivery.objects.get(pk=pending.pk).next_attempt == T


def test_it_sends_failed_deliveries_again_from_the_admin(admin_client_logged_in, world):
    failed = world["timekeeping/delivery"]
    later = T + timedelta(hours=3)
    with wallclock.fixed(later):
        page = admin_client_logged_in.post("/admin/timekeeping/delivery/", {
            "action": "send_again", "_selected_action": [failed.pk]}, follow=True)
    failed.refresh_from_db()
    assert (failed.state, failed.attempts, failed.next_attempt) == ("pending", 0, later)
    assert any("1 failed deliveries go out again" in str(m) for m in page.context["messages"])


def test_it_offers_the_actions_only_to_whom_may_change_the_model(client, actors, world):
    from django.contrib.auth.models import Permission

    staff = actors["staff"]
    staff.is_staff = True
    staff.save()
    staff.user_permissions.add(Permission.objects.get(codename="view_delivery"),
                               Permission.objects.get(codename="view_schedule"))
    client.force_login(staff)
    failed = world["timekeeping/delivery"]
    page = client.post("/admin/timekeeping/delivery/", {
        "action": "send_again", "_selected_action": [failed.pk]})
    assert page.status_code == 200  # the action is not offered: the list is shown again
    assert Delivery.objects.get(pk=failed.pk).state == "failed"
    schedule = world["timekeeping/schedule"]
    client.post("/admin/timekeeping/schedule/", {"action": "pause_schedules",
                                                 "_selected_action": [schedule.pk]})
    assert Schedule.objects.get(pk=schedule.pk).paused is False


def test_it_pauses_a_schedule_by_its_action_though_its_form_is_read_only(
        admin_client_logged_in, world):
    schedule = world["timekeeping/schedule"]
    admin_client_logged_in.post("/admin/timekeeping/schedule/", {
        "action": "pause_schedules", "_selected_action": [schedule.pk]})
    assert Schedule.objects.get(pk=schedule.pk).paused is True
    page = admin_client_logged_in.get(f"/admin/timekeeping/schedule/{quote(schedule.pk)}/change/")
    assert "ops.census runs demo.heartbeat every 1m" in page.content.decode()


def test_it_never_moves_a_subject_to_another_brand_or_deletes_it(admin_client_logged_in, brand,
                                                                  actors):
    from timekeeping.models import Brand, Subject

    other = Brand.objects.create(name="Other", slug="other-brand")
    subject = Subject.objects.create(brand=brand, kind="taxpayer", key="1", name="S")
    page = admin_client_logged_in.get(f"/admin/timekeeping/subject/{quote(subject.pk)}/change/")
    assert page.status_code == 200 and 'name="brand"' not in page.content.decode()
    admin_client_logged_in.post(f"/admin/timekeeping/subject/{quote(subject.pk)}/change/",
                                {"brand": other.pk, "kind": "taxpayer", "key": "1",
                                 "name": "Renamed", "zone": "", "input": "{}"})
    subject.refresh_from_db()
    assert subject.brand_id == brand.pk
    deleted = admin_client_logged_in.post(f"/admin/timekeeping/subject/{quote(subject.pk)}/delete/",
                                          {"post": "yes"})
    assert deleted.status_code == 403 and Subject.objects.filter(pk=subject.pk).exists()


def test_it_never_deletes_a_brand_row_by_row(admin_client_logged_in, brand):
    """A brand is deleted whole, with its tables and 30 days to undo (`manage.py brand delete`,
    the console), never by the admin's cascade, which would leave its tables behind."""
    from timekeeping.models import Brand

    deleted = admin_client_logged_in.post(f"/admin/timekeeping/brand/{quote(brand.pk)}/delete/",
                                          {"post": "yes"})
    assert deleted.status_code == 403 and Brand.objects.filter(pk=brand.pk).exists()
