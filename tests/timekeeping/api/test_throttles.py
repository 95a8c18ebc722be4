"""The API counts requests per key, per signed-in person and per address (issue 31): past the
rate, 429 with Retry-After. Each test sets low rates and fixes the wall clock, which the
throttle reads through `timekeeping.basics.wallclock`."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.test import Client

from timekeeping.access import keys
from timekeeping.basics import wallclock

NOW = datetime(2027, 3, 9, 9, 30, tzinfo=ZoneInfo("America/New_York"))


@pytest.fixture
def low(settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "key": "3/min", "user": "4/min",
                               "anon": "2/min"}


def _key(brand) -> str:
    return keys.make(brand=brand, name="ops", by=None, now=NOW).secret


def _get(client, path="/api/subjects", secret=None, at=NOW):
    extra = {"HTTP_AUTHORIZATION": f"Bearer {secret}"} if secret else {}
    with wallclock.fixed(at):
        return client.get(path, **extra)


def test_a_key_gets_429_with_retry_after_past_its_rate_and_goes_on_a_minute_later(brand, low):
    secret = _key(brand)
    for second in range(3):
        assert _get(Client(), secret=secret, at=NOW + timedelta(seconds=second)).status_code == 200
    refused = _get(Client(), secret=secret, at=NOW + timedelta(seconds=20))
    assert refused.status_code == 429
    assert refused["Retry-After"] == "40"  # the first of the three leaves the window then
    assert "throttled" in refused.json()["detail"]
    assert _get(Client(), secret=secret, at=NOW + timedelta(seconds=60)).status_code == 200


def test_each_key_has_its_own_count_whatever_its_address(brand, low):
    first, second = _key(brand), _key(brand)
    for number in range(3):
        assert _get(Client(REMOTE_ADDR=f"192.0.2.{number}"), secret=first).status_code == 200
    assert _get(Client(REMOTE_ADDR="192.0.2.9"), secret=first).status_code == 429
    assert _get(Client(), secret=second).status_code == 200


def test_an_anonymous_address_has_its_lower_rate_beside_the_keys(brand, low):
    secret = _key(brand)
    stranger = Client(REMOTE_ADDR="198.51.100.4")
    assert [_get(stranger, "/api/").status_code for _ in range(3)] == [200, 200, 429]
    assert _get(Client(REMOTE_ADDR="198.51.100.5"), "/api/").status_code == 200
    # A key calling from the same address counts on its own.
    assert _get(Client(REMOTE_ADDR="198.51.100.4"), secret=secret).status_code == 200


def test_a_person_in_the_browser_counts_per_person(brand, actors, low):
    owner = Client()
    owner.force_login(actors["owner"])
    assert [_get(owner).status_code for _ in range(5)] == [200, 200, 200, 200, 429]
    again = Client(REMOTE_ADDR="192.0.2.77")  # another browser, the same person
    again.force_login(actors["owner"])
    assert _get(again).status_code == 429
    other = Client()
    other.force_login(actors["outsider"])
    assert _get(other).status_code == 200


def test_wrong_keys_count_against_their_address_so_keys_cannot_be_guessed_fast(brand, low):
    guesser = Client(REMOTE_ADDR="203.0.113.3")
    answers = [_get(guesser, secret=f"kt_guess{n}").status_code for n in range(3)]
    assert answers == [401, 401, 429]
    assert _get(guesser, secret=_key(brand)).status_code == 200  # a real key is not held up


def test_the_feed_counts_per_address(brand, low):
    feeds = Client(REMOTE_ADDR="192.0.2.200")
    path = "/subjects/sbj_00000000000000000000/calendar.ics?token=x"
    assert [_get(feeds, path).status_code for _ in range(3)] == [404, 404, 429]


@pytest.mark.parametrize(("remote", "forwarded", "proxies", "counted"), [
    ("192.0.2.1", "10.0.0.9", 0, "192.0.2.1"),  # no proxy: the header is the caller's word
    ("10.0.0.1", "6.6.6.6, 192.0.2.1", 1, "192.0.2.1"),  # what the one proxy saw
    ("2001:db8:1:2:aaaa::1", None, 0, "2001:db8:1:2::"),  # one /64, one machine
    ("::ffff:192.0.2.7", None, 0, "192.0.2.7"),
    ("", None, 0, "0.0.0.0"),
])
def test_an_address_is_read_as_the_proxies_in_front_vouch(settings, remote, forwarded, proxies,
                                                          counted):
    from django.test import RequestFactory

    from timekeeping.web.throttle import address_of

    settings.NUM_PROXIES = proxies
    extra = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded else {}
    assert address_of(RequestFactory().get("/", REMOTE_ADDR=remote, **extra)) == counted


def test_the_schema_says_every_operation_may_answer_429_as_it_does(brand, low, client):
    schema = client.get("/api/schema/?format=json").json()
    operations = [operation for path in schema["paths"].values()
                  for operation in path.values() if isinstance(operation, dict)]
    assert operations and all("429" in operation["responses"] for operation in operations)
    said = schema["paths"]["/api/subjects"]["get"]["responses"]["429"]
    assert said["headers"]["Retry-After"]["schema"]["type"] == "integer"
    secret = _key(brand)
    for _ in range(3):
        _get(Client(), secret=secret)
    refused = _get(Client(), secret=secret)
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 0
    assert set(refused.json()) == set(said["content"]["application/json"]["schema"]
                                      ["properties"])
