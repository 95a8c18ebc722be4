"""Inviting a subject's contact: the email's link opens a page naming the brand and the
subject; setting a password there (or accepting, signed in) links the account to the subject,
signs the person in and sends them to the portal. A used, expired or wrong link answers one
and the same 404 page, never an error."""

import copy
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from timekeeping import manifests
from timekeeping.access import invitations
from timekeeping.basics import wallclock
from timekeeping.demo import TAX_MANIFEST
from timekeeping.models import Customer, Delivery, Subject

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)


@pytest.fixture
def invited(brand, actors, settings):
    """An invitation of the subject's contact, and its link's token (from the email)."""
    settings.SITE_URL = "https://time.example.com"
    manifests.load(brand, copy.deepcopy(json.loads(TAX_MANIFEST.read_text())))
    subject = Subject.objects.create(brand=brand, kind="taxpayer", key="1", name="Fernhill Tools",
                                     contact_email="books@fernhill.example")
    made = invitations.invite(subject=subject, email="books@fernhill.example",
                              by=actors["owner"], now=NOW)
    body = Delivery.objects.get(idempotency_key=f"invitation:{made.id}").payload["body"]
    token = re.search(r"https://time\.example\.com/accounts/invitations/([^/]+)/", body)[1]
    return made, token


def page(client, token, data=None):
    path = f"/accounts/invitations/{token}/"
    with wallclock.fixed(NOW + timedelta(hours=1)):
        return client.post(path, data or {}) if data is not None else client.get(path)


def test_it_names_the_brand_and_the_subject_and_asks_for_a_password(invited):
    made, token = invited
    text = page(Client(), token).content.decode()
    assert "Northwind Filing shares the dates of Fernhill Tools" in text
    assert '<label for="id_password1">' in text and '<label for="id_password2">' in text
    assert "csrfmiddlewaretoken" in text


def test_setting_a_password_makes_the_account_signs_in_and_opens_the_portal(invited):
    made, token = invited
    client = Client()
    answer = page(client, token, {"password1": "a long walk home", "password2": "a long walk home"})
    assert answer.status_code == 302
    assert answer["Location"] == f"/portal/subjects/{made.subject_id}/"
    user = get_user_model().objects.get(username="books@fernhill.example")
    assert user.email == "books@fernhill.example" and user.check_password("a long walk home")
    assert list(Customer.objects.get(user=user).subjects.all()) == [made.subject]
    welcome = client.get(answer["Location"]).content.decode()
    assert "Welcome: Northwind Filing shares the dates of Fernhill Tools with you here." in welcome
    assert Client().login(username="books@fernhill.example", password="a long walk home")


def test_it_says_why_a_password_is_refused_and_keeps_the_link_working(invited):
    made, token = invited
    mismatch = page(Client(), token, {"password1": "a long walk home", "password2": "other"})
    assert "The two passwords differ." in mismatch.content.decode()
    weak = page(Client(), token, {"password1": "12345678", "password2": "12345678"})
    assert weak.status_code == 200
    assert "This password is too common." in weak.content.decode()
    assert not get_user_model().objects.filter(username="books@fernhill.example").exists()
    made.refresh_from_db()
    assert made.accepted is None


def test_a_signed_in_person_accepts_with_one_button(invited, actors):
    made, token = invited
    client = Client()
    client.force_login(actors["buyer"])
    assert ">Accept</button>" in page(client, token).content.decode()
    answer = page(client, token, {})
    assert answer.status_code == 302
    assert list(Customer.objects.get(user=actors["buyer"]).subjects.all()) == [made.subject]


def test_an_existing_account_is_asked_to_sign_in_first(invited):
    made, token = invited
    get_user_model().objects.create_user("Books@Fernhill.example", password="pw")
    answer = page(Client(), token, {"password1": "a long walk home",
                                    "password2": "a long walk home"})
    assert answer.status_code == 200
    assert "An account with this email exists: sign in first" in answer.content.decode()


def test_a_used_expired_or_wrong_link_answers_one_404_page(invited, actors):
    made, token = invited
    wrong = page(Client(), "x" * 43)
    assert wrong.status_code == 404
    assert "This link no longer works" in wrong.content.decode()
    with wallclock.fixed(made.expires):
        expired = Client().get(f"/accounts/invitations/{token}/")
    page(Client(), token, {"password1": "a long walk home", "password2": "a long walk home"})
    used = page(Client(), token)
    signed_in = Client()
    signed_in.force_login(actors["buyer"])
    used_post = page(signed_in, token, {})
    for answer in (expired, used, used_post):
        assert (answer.status_code, main(answer)) == (404, main(wrong))


def main(answer) -> str:
    """The page's own content (the header differs for a signed-in person)."""
    text = answer.content.decode()
    return text[text.index("<main"):text.index("</main>")]


@pytest.mark.parametrize("token", ["a", "é" * 40, "z" * 500, "..", "a b", "%2F" * 30])
def test_no_token_breaks_the_page(invited, token):
    assert page(Client(), token).status_code == 404


def test_a_nul_in_the_link_is_refused_before_the_page(invited):
    assert page(Client(), "%00" * 30).status_code == 400  # timekeeping.web.strict.RefuseNul


def test_a_test_clocks_invitation_goes_to_the_brands_owner(brand, actors, test_clock):
    actors["owner"].email = "owner@example.test"
    actors["owner"].save()
    subject = Subject.objects.create(brand=brand, test_clock=test_clock, kind="taxpayer",
                                     key="2", name="Rehearsal Co")
    made = invitations.invite(subject=subject, email="real.customer@example.com",
                              by=actors["owner"], now=NOW)
    mail = Delivery.objects.get(idempotency_key=f"invitation:{made.id}")
    assert mail.payload["to"] == ["owner@example.test"]
    assert mail.payload["subject"].startswith("Practice run: ")
