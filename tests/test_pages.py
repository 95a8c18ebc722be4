import pytest


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_home_sends_each_person_where_they_work(client, world):
    assert client.get("/")["Location"] == "/accounts/login/"
    sent = {name: world.clients[name].get("/")["Location"] for name in
            ("owner_a", "staff_a", "viewer_a", "customer_a", "nobody")}
    assert sent == {"owner_a": "/console/", "staff_a": "/console/", "viewer_a": "/console/",
                    "customer_a": "/portal/", "nobody": "/accounts/login/"}


def test_it_serves_the_sign_in_page_and_the_api_schema(client, db):
    assert "Sign in" in client.get("/accounts/login/").content.decode()
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"Keeping Time API" in schema.content
