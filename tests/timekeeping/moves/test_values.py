"""What a writer may put in a row: declared, writable columns only, each of its type and in its
limits; everything else refused by name, and nothing changed (timekeeping.moves.values)."""

import io
import json
from datetime import date, datetime

import pytest
from django.contrib.auth import get_user_model
from hypothesis import given, settings
from hypothesis import strategies as st
from rest_framework.exceptions import APIException, ParseError

from tests.timekeeping.moves.test_moves import VENUE, make_venue, utc
from timekeeping.models import Brand, RowAudit
from timekeeping.moves.values import ValuesInvalid, clean
from timekeeping.specs.tables import compile_tables
from timekeeping.web.strict import StrictJSONParser

TABLES = compile_tables(VENUE["tables"])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
    | st.text(max_size=30) | st.dates().map(date.isoformat)
    | st.datetimes().map(lambda d: d.isoformat() + "Z"),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3),
    max_leaves=8)


@pytest.fixture
def owner_client(client):
    venue = make_venue("Corner Kitchen", "corner", VENUE)
    owner = get_user_model().objects.create_user("chef", password="pw")
    Brand.objects.filter(pk=venue.link.brand_id).update(owner=owner)
    client.force_login(owner)
    return venue, client


def patch(client, pk, body, table="orders"):
    return client.patch(f"/api/tables/{table}/rows/{pk}", body, content_type="application/json")


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
@pytest.mark.parametrize("key", ["id", "pk", "_state", "__class__"])
def test_a_patch_never_reaches_the_key_or_the_models_insides(owner_client, key):
    venue, client = owner_client
    orders = venue.model("orders")
    mine = orders.objects.create(customer="Ines", pickup_at=utc(2030, 1, 1), status="placed")
    other = orders.objects.create(customer="Rui", pickup_at=utc(2030, 1, 2), status="placed")
    answer = patch(client, mine.pk, {key: other.pk, "customer": "Mallory"})
    assert answer.status_code == 400 and list(answer.json()) == [key]
    assert orders.objects.get(pk=other.pk).customer == "Rui"
    assert orders.objects.get(pk=mine.pk).customer == "Ines"
    assert not RowAudit.objects.filter(kind="update").exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
def test_the_products_columns_and_unknown_ones_are_refused_by_name(owner_client):
    venue, client = owner_client
    stay = venue.model("stays").objects.create(guest="Ola", arrive=date(2030, 1, 1),
                                               status="booked")
    flag = patch(client, stay.pk, {"late_cancel": True}, table="stays")
    assert flag.status_code == 400 and "written by the product" in flag.json()["late_cancel"][0]
    made = client.post("/api/tables/orders/rows",
                       {"customer": "Ines", "pickup_at": "2030-01-01T12:00:00Z",
                        "status": "ready", "colour": "red"}, content_type="application/json")
    assert made.status_code == 400 and set(made.json()) == {"status", "colour"}
    assert "customer" in made.json()["colour"][0]  # it lists the columns one may write
    ticket = client.post("/api/tables/tickets/rows",
                         {"holder": "Ana", "doors_at": "2030-01-01T19:00:00Z",
                          "valid_to": "2030-01-01T23:00:00Z", "link_token": "chosen-by-me"},
                         content_type="application/json")
    assert ticket.status_code == 400 and list(ticket.json()) == ["link_token"]
    assert not venue.model("orders").objects.exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("drop_venue_tables")
@pytest.mark.parametrize(("field", "value"), [
    ("total", "12"), ("total", True), ("total", 2**63), ("total", 1.5),
    ("customer", 7), ("customer", "x" * 121), ("customer", None),
    ("pickup_at", "2030-01-01T12:00:00"), ("pickup_at", "9999-12-31T00:00:00Z"),
    ("pickup_at", "tomorrow"), ("pickup_at", 1700000000),
])
def test_a_value_of_the_wrong_type_or_out_of_its_limits_is_refused(owner_client, field, value):
    venue, client = owner_client
    body = {"customer": "Ines", "pickup_at": "2030-01-01T12:00:00Z", field: value}
    answer = client.post("/api/tables/orders/rows", body, content_type="application/json")
    assert answer.status_code == 400 and list(answer.json()) == [field]
    assert not venue.model("orders").objects.exists()


@settings(max_examples=300, deadline=None, derandomize=True)
@given(table=st.sampled_from(sorted(TABLES)),
       given_values=st.dictionaries(
           st.sampled_from(["customer", "pickup_at", "total", "email", "arrive", "guest",
                            "status", "id", "_state", "holder", "doors_at", "open", "x"])
           | st.text(max_size=8), JSON_VALUES, max_size=6))
def test_clean_either_converts_every_value_or_names_what_it_refuses(table, given_values):
    spec = TABLES[table]
    try:
        values = clean(spec, VENUE["tables"][table], given_values)
    except ValuesInvalid as invalid:
        assert set(invalid.errors) <= set(given_values) and invalid.errors
        return
    assert set(values) == set(given_values) <= set(spec.columns)
    for key, value in values.items():
        kind = spec.columns[key].type
        assert value is None or {"integer": int, "boolean": bool, "date": date,
                                 "timestamptz": datetime}.get(kind, str) is type(value)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(body=st.binary(max_size=64) | JSON_VALUES.map(lambda v: json.dumps(v).encode()))
def test_the_parser_gives_an_object_or_a_clear_refusal(body):
    try:
        parsed = StrictJSONParser().parse(io.BytesIO(body))
    except (ParseError, APIException):
        return
    assert isinstance(parsed, dict)
