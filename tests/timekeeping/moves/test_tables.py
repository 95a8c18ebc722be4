"""A manifest's tables belong to one brand: named from its id, registered, built whole or not
at all, and never made by SQL text a manifest wrote."""

import copy
import importlib
import re
import warnings

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.timekeeping.moves.test_moves import VENUE
from timekeeping import manifests
from timekeeping.models import Brand, BrandTable, Connection, Manifest
from timekeeping.moves import tables
from timekeeping.moves.rows import Venue
from timekeeping.specs.tables import compile_tables

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]
DDL = re.compile(r"^\s*(CREATE|ALTER|DROP|GRANT|REVOKE|TRUNCATE)\b", re.IGNORECASE)
register_tables = importlib.import_module(
    "timekeeping.migrations.0004_register_tables").register_tables


def owned_brand(slug: str) -> tuple[Brand, object]:
    owner = get_user_model().objects.create_user(f"owner-{slug}", password="pw")
    return Brand.objects.create(name=slug, slug=slug, owner=owner), owner


def venue_of(brand: Brand) -> Venue:
    return Venue.of(Connection.objects.select_related("brand").get(brand=brand))


def test_brands_whose_slugs_read_alike_keep_tables_and_rows_of_their_own(client):
    alpha, alpha_owner = owned_brand("alpha-venue")
    beta, beta_owner = owned_brand("alphavenue")
    for brand in (alpha, beta):
        manifests.load(brand, VENUE)
    names = {venue_of(b).model("orders")._meta.db_table for b in (alpha, beta)}
    assert len(names) == 2 and all(len(name) <= 63 for name in names)
    client.force_login(alpha_owner)
    made = client.post("/api/tables/orders/rows", {"customer": "Ines",
                                                   "pickup_at": "2026-12-04T12:30:00Z"},
                       content_type="application/json")
    assert made.status_code == 201
    client.force_login(beta_owner)
    assert client.get("/api/tables/orders/rows").json()["rows"] == []
    assert client.get(f"/api/tables/orders/rows/{made.json()['id']}").status_code == 404
    registered = BrandTable.objects.get(brand=alpha, name="orders")
    assert registered.db_table == venue_of(alpha).model("orders")._meta.db_table
    assert registered.manifest == Manifest.objects.get(brand=alpha)


def test_the_longest_name_a_manifest_may_give_fits_postgresqls_limit():
    brand, _ = owned_brand("long")
    name = "a" * 41
    assert len(tables.db_table(brand, name)) == 57
    with pytest.raises(tables.UnsafeName):
        tables.db_table(brand, 'orders" text); --')


def test_a_brand_reaches_no_table_that_is_not_registered_to_it():
    brand, _ = owned_brand("venue")
    manifests.load(brand, VENUE)
    BrandTable.objects.filter(brand=brand, name="stays").delete()
    assert "stays" not in venue_of(brand).tables and "orders" in venue_of(brand).tables


def _blocking_index(brand: Brand) -> None:
    """An index already holding the name the orders table's index will take: the database
    refuses the table's deferred CREATE INDEX, as a hostile or clashing manifest would."""
    model = tables.model_for(brand, compile_tables(VENUE["tables"])["orders"])
    index = model._meta.indexes[0].name
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE TABLE {quote('blocker')} (x integer)")
        cursor.execute(f"CREATE INDEX {quote(index)} ON {quote('blocker')} (x)")


def test_a_table_the_database_refuses_keeps_nothing_and_leaves_the_worker_clean(client):
    brand, owner = owned_brand("venue")
    _blocking_index(brand)
    client.force_login(owner)
    answer = client.post(f"/api/brands/{brand.pk}/manifests", VENUE,
                         content_type="application/json")
    assert answer.status_code == 400
    [problem] = answer.json()["problems"]
    assert (problem["code"], problem["path"]) == ("table.build_refused", "$.tables.orders")
    assert not connection.in_atomic_block  # the worker's connection is not left in a block
    assert not Manifest.objects.filter(brand=brand).exists()
    assert not BrandTable.objects.filter(brand=brand).exists()
    if connection.vendor == "postgresql":  # tables and version were one transaction
        digest = tables.db_table(brand, "x")[: -len("x")]
        assert not [t for t in connection.introspection.table_names() if t.startswith(digest)]
    # The next request of this worker is served as usual.
    assert client.get(f"/api/subjects/{'sbj_' + 'x' * 16}/calendar").status_code == 404
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE blocker")
    assert client.post(f"/api/brands/{brand.pk}/manifests", VENUE,
                       content_type="application/json").status_code == 201


@pytest.mark.parametrize("path, value", [
    (("orders", "columns", 1, "maxLength"), "20); UPDATE auth_user SET is_superuser = true; --"),
    (("orders", "states", "column"), 'status" text); UPDATE auth_user SET is_superuser = true; --'),
])
def test_a_hostile_manifest_runs_no_statement_and_makes_nobody_superuser(client, path, value):
    brand, owner = owned_brand("venue")
    document = copy.deepcopy(VENUE)
    target = document["tables"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    client.force_login(owner)
    with CaptureQueriesContext(connection) as ran:
        answer = client.post(f"/api/brands/{brand.pk}/manifests", document,
                             content_type="application/json")
    assert answer.status_code == 400
    assert [q["sql"] for q in ran.captured_queries if DDL.match(q["sql"])] == []
    owner.refresh_from_db()
    assert not owner.is_superuser
    assert not Manifest.objects.filter(brand=brand).exists()


def test_a_manifest_runs_only_the_ddl_of_its_own_brands_tables():
    brand, _ = owned_brand("venue")
    prefix = tables.db_table(brand, "x")[: -len("x")]
    with CaptureQueriesContext(connection) as ran:
        manifests.load(brand, VENUE)
    ddl = [q["sql"] for q in ran.captured_queries if DDL.match(q["sql"])]
    assert ddl, "the load built tables"
    for statement in ddl:
        assert re.match(r'^\s*(CREATE TABLE|CREATE INDEX|ALTER TABLE)\b', statement, re.I), \
            statement
        named = re.findall(r'"(tm_[^"]*)"', statement) + re.findall(r'`(tm_[^`]*)`', statement)
        tables_named = [n for n in named if not n.endswith("_due")]
        assert tables_named and all(n.startswith(prefix) for n in tables_named), statement


def _to_legacy(brand: Brand) -> dict[str, str]:
    """Rename the brand's tables back to the names they had before tables were named by
    brand id, and forget their registration: a database as an older release left it."""
    legacy = {}
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for row in BrandTable.objects.filter(brand=brand):
            old = f"tm_{re.sub(r'[^a-z0-9]', '', brand.slug)[:20]}_{row.name}"
            cursor.execute(f"ALTER TABLE {quote(row.db_table)} RENAME TO {quote(old)}")
            legacy[row.name] = old
    BrandTable.objects.filter(brand=brand).delete()
    tables.forget()
    return legacy


def test_the_upgrade_renames_a_brands_old_tables_and_keeps_their_rows():
    brand, _ = owned_brand("old-venue")
    manifests.load(brand, VENUE)
    venue_of(brand).model("settings").objects.create(no_show_at="10:00", offer_hours=24,
                                                     arrive_from="15:00", cancel_hours=48,
                                                     door_on=True)
    _to_legacy(brand)
    with connection.schema_editor() as editor:
        register_tables(apps, editor)
    assert BrandTable.objects.filter(brand=brand).count() == len(VENUE["tables"])
    assert venue_of(brand).model("settings").objects.get().no_show_at == "10:00"


def test_the_upgrade_leaves_a_table_two_brands_shared_and_warns():
    alpha, _ = owned_brand("alpha-venue")
    beta, _ = owned_brand("alphavenue")
    manifests.load(alpha, VENUE)
    manifests.load(beta, {"calendar": {"zone": "Europe/London"}, "tables": {
        "settings": VENUE["tables"]["settings"]}})
    legacy = _to_legacy(alpha)
    # Before the upgrade beta had no settings table of its own: it shared alpha's.
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {connection.ops.quote_name(tables.db_table(beta, 'settings'))}")
    BrandTable.objects.filter(brand=beta).delete()
    with warnings.catch_warnings(record=True) as said, connection.schema_editor() as editor:
        warnings.simplefilter("always")
        register_tables(apps, editor)
    assert any("shared by brands" in str(w.message) for w in said)
    assert legacy["settings"] in connection.introspection.table_names()
    assert not BrandTable.objects.filter(name="settings").exists()
    assert BrandTable.objects.filter(brand=alpha, name="orders").exists()
