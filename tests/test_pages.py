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


def test_the_pages_past_a_limit_say_what_happened_and_when_to_try_again(client, db, settings):
    """Issue 31's two pages: signing in paused, and too many tries of a link page."""
    from tests.words import engine_words, visible_text

    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "link": "1/min"}
    for _ in range(settings.AXES_FAILURE_LIMIT):
        paused = client.post("/accounts/login/", {"username": "someone", "password": "wrong"})
    client.get("/accounts/invitations/NoSuchInvitation000000000000/")
    too_many = client.get("/accounts/invitations/NoSuchInvitation000000000000/")
    for answer, title in ((paused, "Signing in is paused"), (too_many, "Too many tries")):
        text = visible_text(answer.content.decode())
        assert answer.status_code == 429 and int(answer["Retry-After"]) > 0
        assert title in text and "then try again." in text
        assert engine_words(text) == []
