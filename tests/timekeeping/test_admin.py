import pytest

from timekeeping.models import Record


@pytest.mark.parametrize("model", ["brand", "testclock", "record"])
def test_it_lists_each_model_in_the_admin(admin_client_logged_in, brand, test_clock, model):
    page = admin_client_logged_in.get(f"/admin/timekeeping/{model}/")
    assert page.status_code == 200


def test_it_shows_a_record_but_offers_no_way_to_change_it(admin_client_logged_in, brand):
    record = Record.objects.create(kind="note", instant=brand.created, brand=brand)
    page = admin_client_logged_in.get(f"/admin/timekeeping/record/{record.pk}/change/")
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
    from datetime import UTC, datetime, timedelta

    from timekeeping import delays, tick

    at = datetime(2026, 11, 30, 14, tzinfo=UTC)
    late = delays.delay("timekeeping.note", {}, brand=brand, at=at - timedelta(minutes=2),
                        key="late-one")
    waiting = delays.delay("timekeeping.note", {}, brand=brand, at=at + timedelta(days=9),
                           key="waiting-one")
    tick.run_once(now=at)
    page = admin_client_logged_in.get("/admin/timekeeping/timer/?late=yes").content.decode()
    assert late in page and waiting not in page
    found = admin_client_logged_in.get("/admin/timekeeping/timer/?q=waiting-one")
    assert waiting in found.content.decode() and late not in found.content.decode()
    detail = admin_client_logged_in.get(f"/admin/timekeeping/timer/{late}/change/")
    assert "late by 2m" in detail.content.decode()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_it_shows_a_job_and_a_clock_with_their_rows(admin_client_logged_in):
    from django.core.management import call_command

    from timekeeping.models import Clock, Job

    call_command("demo")
    clock = Clock.objects.get(name="file")
    page = admin_client_logged_in.get(f"/admin/timekeeping/clock/{clock.pk}/change/")
    assert page.status_code == 200 and "US-NJ" in page.content.decode()
    job = Job.objects.get()
    page = admin_client_logged_in.get(f"/admin/timekeeping/job/{job.pk}/change/")
    assert page.status_code == 200 and "refund-window" in page.content.decode()
