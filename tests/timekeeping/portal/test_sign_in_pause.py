"""Signing in pauses after too many failures (issue 31): five wrong passwords for a username,
or from an address, pause signing in there for fifteen minutes, at every door that takes a
password, in the same words whether the username exists or not.

django-axes keeps the failures on its own clock; the tests move a pause's end by moving the
failures' times back in the database, never by waiting."""

import io
from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.db.models import F
from django.test import Client

from tests.words import engine_words, visible_text

SIGN_IN = "/accounts/login/"


@pytest.fixture
def person(django_user_model):
    return django_user_model.objects.create_user("grace", password="the right password")


def _try(client, username="grace", password="a wrong password", path=SIGN_IN):
    return client.post(path, {"username": username, "password": password})


def _age_failures(by: timedelta) -> None:
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - by)


def test_it_pauses_an_account_after_five_failures_and_lets_it_in_fifteen_minutes_later(person):
    client = Client()
    for _ in range(4):
        assert _try(client).status_code == 200  # the sign-in page again, with its error
    paused = _try(client)
    assert paused.status_code == 429
    assert paused["Retry-After"] == "900"
    # Paused, the right password is refused unread, and the refusal added no failure.
    assert _try(client, password="the right password").status_code == 429
    assert sum(AccessAttempt.objects.values_list("failures_since_start", flat=True)) == 5
    _age_failures(timedelta(minutes=14))
    still = _try(client, password="the right password")
    assert still.status_code == 429 and still["Retry-After"] == "60"
    _age_failures(timedelta(minutes=1, seconds=1))
    signed_in = _try(client, password="the right password")
    assert signed_in.status_code == 302 and signed_in["Location"] == "/"
    assert not AccessAttempt.objects.exists()  # a sign-in clears the failures it ends


def test_the_pause_says_in_plain_words_to_wait_and_try_again(person):
    client = Client()
    for _ in range(5):
        answer = _try(client)
    html = answer.content.decode()
    text = visible_text(html)
    assert "<h1>Signing in is paused</h1>" in html
    assert "paused for 15 minutes" in text and "Wait 15 minutes, then try again." in text
    assert "axes" not in text.lower() and "locked" not in text.lower()
    assert engine_words(text) == []


def test_an_unknown_username_is_answered_as_a_wrong_password_then_paused_alike(person):
    known, unknown = Client(REMOTE_ADDR="192.0.2.1"), Client(REMOTE_ADDR="192.0.2.2")
    for _ in range(4):
        one, other = _try(known), _try(unknown, username="nobody-here")
        assert one.status_code == other.status_code == 200
        assert _error(one) == _error(other) != ""
    one, other = _try(known), _try(unknown, username="nobody-here")
    assert one.status_code == other.status_code == 429
    assert visible_text(one.content.decode()) == visible_text(other.content.decode())


def _error(answer) -> str:
    html = answer.content.decode()
    return html[html.find('role="alert"'):html.find("</p>", html.find('role="alert"'))]


def test_an_account_is_paused_from_every_address_and_an_address_for_every_account(person):
    for number in range(5):
        _try(Client(REMOTE_ADDR=f"198.51.100.{number}"))
    assert _try(Client(REMOTE_ADDR="203.0.113.9"), password="the right password"
                ).status_code == 429
    AccessAttempt.objects.all().delete()
    roaming = Client(REMOTE_ADDR="203.0.113.7")
    for number in range(5):
        _try(roaming, username=f"guess-{number}")
    assert _try(roaming, password="the right password").status_code == 429
    assert _try(Client(REMOTE_ADDR="203.0.113.8"), password="the right password"
                ).status_code == 302


def test_the_admins_sign_in_pauses_too(django_user_model):
    django_user_model.objects.create_superuser("root", password="the right password")
    client = Client()
    for _ in range(5):
        answer = _try(client, username="root", path="/admin/login/")
    assert answer.status_code == 429
    assert "Signing in is paused" in answer.content.decode()
    assert _try(Client(), username="root", password="the right password",
                path="/admin/login/").status_code == 429


def test_an_address_behind_the_proxy_counts_as_the_one_the_proxy_saw(person, settings):
    settings.NUM_PROXIES = 1
    for number in range(5):
        # Whatever a client writes first in X-Forwarded-For, the proxy adds what it saw.
        _try(Client(HTTP_X_FORWARDED_FOR=f"10.9.9.{number}, 192.0.2.50"), username=f"x{number}")
    assert _try(Client(HTTP_X_FORWARDED_FOR="192.0.2.50"), password="the right password"
                ).status_code == 429
    assert _try(Client(HTTP_X_FORWARDED_FOR="192.0.2.51"), password="the right password"
                ).status_code == 302


def test_the_admin_lists_the_failures_an_operator_clears(admin_client_logged_in, person):
    for _ in range(5):
        _try(Client())
    page = admin_client_logged_in.get("/admin/axes/accessattempt/")
    assert page.status_code == 200 and "grace" in page.content.decode()


def test_an_operator_lifts_a_pause_with_axes_reset_username(person):
    from django.core.management import call_command

    for number in range(5):
        _try(Client(REMOTE_ADDR=f"198.51.100.{number}"))
    assert _try(Client(), password="the right password").status_code == 429
    call_command("axes_reset_username", "grace", stdout=io.StringIO())
    assert _try(Client(), password="the right password").status_code == 302
