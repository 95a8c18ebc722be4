"""The doors a stranger reaches without signing in are counted per address (issue 31): asking
for a password reset (and per email address asked for), an invitation's link, a reset link and
a digest's unsubscribe link. Past the rate: "Too many tries", 429 with Retry-After, the same
whether an account or a link exists or not."""

from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client

from tests.words import engine_words, visible_text
from timekeeping.basics import wallclock

NOW = datetime(2027, 11, 2, 16, 45, tzinfo=UTC)
RESET = "/accounts/password_reset/"


@pytest.fixture
def low(settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "reset": "2/min", "link": "2/min"}


@pytest.fixture
def person(django_user_model):
    return django_user_model.objects.create_user("grace", email="grace@harbor.example",
                                                 password="the old password")


def _post(client, path, data=None, at=NOW):
    with wallclock.fixed(at):
        return client.post(path, data or {})


def test_asking_for_resets_from_one_address_is_slowed_alike_for_known_and_unknown(
        person, low, mailoutbox):
    asker = Client(REMOTE_ADDR="203.0.113.20")
    answers = [_post(asker, RESET, {"email": email}) for email in
               ("grace@harbor.example", "nobody@example.test", "grace@harbor.example")]
    assert [a.status_code for a in answers] == [302, 302, 429]
    assert answers[2]["Retry-After"] == "60"
    text = visible_text(answers[2].content.decode())
    assert "Too many tries" in text and "Wait 1 minute, then try again." in text
    assert engine_words(text) == []
    assert len(mailoutbox) == 1
    # Reading the form is not counted; a minute later asking works again.
    with wallclock.fixed(NOW):
        assert asker.get(RESET).status_code == 200
    later = _post(asker, RESET, {"email": "grace@harbor.example"}, at=NOW + timedelta(minutes=1))
    assert later.status_code == 302 and len(mailoutbox) == 2


@pytest.mark.parametrize("email", ["grace@harbor.example", "nobody@example.test"])
def test_one_inbox_is_not_flooded_from_many_addresses(person, low, mailoutbox, email):
    answers = [_post(Client(REMOTE_ADDR=f"198.51.100.{n}"), RESET, {"email": email})
               for n in range(3)]
    assert [a.status_code for a in answers] == [302, 302, 429]
    assert len(mailoutbox) == (2 if email.startswith("grace") else 0)


@pytest.mark.parametrize("path", ["/accounts/invitations/NoSuchInvitation000000000000/",
                                  "/accounts/reset/MQ/wrong-token/",
                                  "/digest/unsubscribe/NoSuchDigest00000000000000"])
def test_guessing_a_link_is_slowed_per_address(db, low, path):
    guesser, other = Client(REMOTE_ADDR="203.0.113.30"), Client(REMOTE_ADDR="203.0.113.31")
    with wallclock.fixed(NOW):
        codes = [guesser.get(path).status_code for _ in range(3)]
        elsewhere = other.get(path).status_code
    assert codes[2] == 429 and codes[:2] == [elsewhere] * 2
