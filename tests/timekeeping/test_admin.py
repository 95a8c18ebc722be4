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
