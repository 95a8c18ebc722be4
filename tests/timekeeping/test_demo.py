import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from timekeeping.demo import DEMO_PASSWORD, DEMO_USERNAME, DemoRefused, demo_load
from timekeeping.models import Brand, Record, Timer

# The demo builds its venue's tables (DDL), which SQLite allows only outside a transaction.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]


@pytest.fixture(autouse=True)
def debug_on(settings):
    """The demo loads only in development (its login's password is published)."""
    settings.DEBUG = True


def test_it_refuses_to_load_the_demo_with_debug_off_and_writes_nothing(settings):
    settings.DEBUG = False
    with pytest.raises(DemoRefused, match="published password"):
        demo_load()
    with pytest.raises(CommandError) as refused:
        call_command("demo")
    assert str(refused.value) == ("the demo login has a published password; load the demo "
                                  "only with DEBUG=true")
    assert not get_user_model().objects.filter(username=DEMO_USERNAME).exists()
    assert not (Brand.objects.exists() or Timer.objects.exists() or Record.objects.exists())


def test_it_loads_the_demo_twice_without_doubling_anything(capsys):
    call_command("demo")
    call_command("demo")
    out = capsys.readouterr().out
    assert Brand.objects.filter(slug="demo").count() == 1
    assert f"{DEMO_USERNAME} / {DEMO_PASSWORD}" in out


def test_it_lets_the_printed_login_into_the_admin(client):
    call_command("demo")
    assert client.login(username=DEMO_USERNAME, password=DEMO_PASSWORD)
    page = client.get("/admin/timekeeping/brand/")
    assert page.status_code == 200
    assert "Demo brand" in page.content.decode()


def test_it_loads_a_venue_whose_sample_rows_move_on_their_own():
    from datetime import timedelta

    from timekeeping import clock, tick
    from timekeeping.models import Connection, SampleRow
    from timekeeping.moves.rows import Venue

    call_command("demo")
    call_command("demo")
    link = Connection.objects.select_related("brand").get(brand__slug="demo-venue")
    assert SampleRow.objects.filter(connection=link).count() == 4
    later = clock.wall_now() + timedelta(days=3)
    with clock.fixed(later):
        tick.run_once(now=later)
    venue = Venue.of(link)
    assert set(venue.model("orders").objects.values_list("status", flat=True)) == {"cancelled"}
    assert venue.model("tickets").objects.get().status == "valid"
    assert venue.model("stays").objects.get().status == "no_show"
