"""Signing in and out, and a password reset by email whose link starts with SITE_URL (never
with the Host a request names)."""

import re

import pytest
from django.test import Client


@pytest.fixture
def person(django_user_model):
    return django_user_model.objects.create_user("grace", email="grace@harbor.example",
                                                 password="the old password")


def test_a_reset_emails_a_link_on_the_site_that_sets_a_new_password(person, mailoutbox,
                                                                    settings):
    settings.SITE_URL = "https://time.example.com"
    client = Client(HTTP_HOST="evil.example")
    settings.ALLOWED_HOSTS = ["evil.example", "testserver"]
    answer = client.post("/accounts/password_reset/", {"email": "grace@harbor.example"})
    assert answer.status_code == 302 and answer["Location"] == "/accounts/password_reset/done/"
    (mail,) = mailoutbox
    assert mail.to == ["grace@harbor.example"]
    assert mail.subject == "Reset your Keeping Time password"
    link = re.search(r"https://time\.example\.com(/accounts/reset/\S+/)", mail.body)[1]
    assert "evil.example" not in mail.body
    form = client.get(link, follow=True)
    assert form.status_code == 200 and "New password" in form.content.decode()
    done = client.post(form.redirect_chain[-1][0], {"new_password1": "a new long password",
                                                    "new_password2": "a new long password"})
    assert done["Location"] == "/accounts/reset/done/"
    assert Client().login(username="grace", password="a new long password")
    assert "no longer works" in Client().get(link, follow=True).content.decode()


def test_a_reset_for_an_unknown_address_says_the_same_and_sends_nothing(db, mailoutbox):
    answer = Client().post("/accounts/password_reset/", {"email": "nobody@example.test"})
    assert answer["Location"] == "/accounts/password_reset/done/"
    assert mailoutbox == []


@pytest.mark.parametrize("path", ["/accounts/password_reset/", "/accounts/password_reset/done/",
                                  "/accounts/reset/done/", "/accounts/reset/MQ/wrong-token/"])
def test_the_reset_pages_answer_everyone(db, path):
    text = Client().get(path, follow=True).content.decode()
    assert text.count("<h1>") == 1


def test_signing_out_takes_a_post(person):
    client = Client()
    client.force_login(person)
    assert client.get("/accounts/logout/").status_code == 405
    assert client.post("/accounts/logout/")["Location"] == "/"
    assert client.get("/portal/").status_code == 302  # to the sign-in page


def test_signing_in_sends_a_customer_to_the_portal(portal):
    client = Client()
    answer = client.post("/accounts/login/", {"username": "buyer", "password": "pw-buyer"},
                         follow=True)
    assert answer.redirect_chain[-1][0] == "/portal/"
    assert "<h1>Your dates</h1>" in answer.content.decode()
