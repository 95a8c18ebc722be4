from django.core.management import call_command

from timekeeping.demo import DEMO_PASSWORD, DEMO_USERNAME
from timekeeping.models import Brand


def test_it_loads_the_demo_twice_without_doubling_anything(db, capsys):
    call_command("demo")
    call_command("demo")
    out = capsys.readouterr().out
    assert Brand.objects.filter(slug="demo").count() == 1
    assert f"{DEMO_USERNAME} / {DEMO_PASSWORD}" in out


def test_it_lets_the_printed_login_into_the_admin(db, client):
    call_command("demo")
    assert client.login(username=DEMO_USERNAME, password=DEMO_PASSWORD)
    page = client.get("/admin/timekeeping/brand/")
    assert page.status_code == 200
    assert "Demo brand" in page.content.decode()
