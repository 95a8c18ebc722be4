"""One base for every test: named actors (owner, staff, buyer, member, outsider) and a brand."""

from datetime import UTC, datetime

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache

from tests.receiver import receiver  # noqa: F401 - a webhook receiver on loopback
from tests.world import world  # noqa: F401 - the doors' world, for every test that asks
from timekeeping.models import Brand, TestClock


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # The named actors each hash a password; the real hasher would dominate the suite's time.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def unthrottled(settings):
    """The suite sends many requests from one address: its rates are raised out of reach, and
    the tests of throttling set their own low ones. The counts live in each process's own
    memory, emptied for each test."""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                   "LOCATION": "tests"}}
    settings.THROTTLE_RATES = dict.fromkeys(settings.THROTTLE_RATES, "1000000/min")
    cache.clear()


@pytest.fixture
def actors(db):
    """Named people. The owner owns `brand`; the others are strangers to it until a test says."""
    users = get_user_model().objects
    return {
        "owner": users.create_user("owner", password="pw-owner"),
        "staff": users.create_user("staff", password="pw-staff"),
        "buyer": users.create_user("buyer", password="pw-buyer"),
        "member": users.create_user("member", password="pw-member"),
        "outsider": users.create_user("outsider", password="pw-outsider"),
    }


@pytest.fixture
def brand(actors):
    return Brand.objects.create(name="Northwind Filing", slug="northwind", owner=actors["owner"])


@pytest.fixture
def test_clock(brand):
    return TestClock.objects.create(
        brand=brand, name="spring", frozen_time=datetime(2028, 3, 1, 12, tzinfo=UTC)
    )


@pytest.fixture
def drop_venue_tables():
    """A manifest's tables are real tables outside Django's own, which a transactional test's
    flush does not empty: drop them after the test."""
    yield
    from django.db import connection

    from timekeeping.moves import tables

    with connection.cursor() as cursor:
        for name in connection.introspection.table_names(cursor):
            if name.startswith("tm_"):
                cursor.execute(f"DROP TABLE {connection.ops.quote_name(name)}")
    tables.forget()


@pytest.fixture
def admin_client_logged_in(client, db):
    user = get_user_model().objects.create_superuser("root", password="pw-root")
    client.force_login(user)
    return client


def pytest_collection_modifyitems(items):
    """The browser tests last: Playwright's event loop outlives them in the test thread, where
    Django would refuse the database work of any test after them."""
    items.sort(key=lambda item: "tests/browser/" in item.nodeid.replace("\\", "/"))
