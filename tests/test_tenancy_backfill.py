"""The migrations that gave every tenant table its brand (timekeeping 0019, money 0002) fill it
from the parent each row already had, and refuse, changing nothing, a ledger row whose brand
cannot be found."""

from datetime import UTC, date, datetime

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.migrating import migrate, schema_at

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("timekeeping", "0019_heartbeat_counts"), ("money", "0001_initial")]
AFTER = [("timekeeping", "0020_tenant_brand"), ("money", "0002_brand")]
AT = datetime(2027, 1, 4, 9, tzinfo=UTC)


@pytest.fixture
def before():
    """The schema before the brand columns; the latest again afterwards, whatever happened."""
    with schema_at(BEFORE) as apps:
        yield apps


def _brand(apps, slug):
    return apps.get_model("timekeeping", "Brand").objects.create(name=slug, slug=slug)


def _world(apps, brand):
    """A brand's connection with rows set aside, audited and sampled; a subject on a plan with
    an allowance, linked to a customer."""
    model = lambda name: apps.get_model("timekeeping", name).objects  # noqa: E731
    link = model("Connection").create(brand=brand)
    model("SetAside").create(connection=link, table="orders", row=1, rule=1, code="x", until=AT)
    model("RowAudit").create(connection=link, table="orders", row=1, kind="create", who="a",
                             at=AT)
    model("SampleRow").create(connection=link, table="orders", row=1)
    subject = model("Subject").create(brand=brand, kind="k", key=brand.slug, name="S")
    plan = model("Subscription").create(brand=brand, subject=subject, service="plan",
                                        bundle="b", anchor=date(2027, 1, 1), opened=AT)
    model("Allowance").create(subscription=plan, service="visit", cycle=1)
    user = apps.get_model("auth", "User").objects.create(username=f"buyer-{brand.slug}")
    model("Customer").create(brand=brand, user=user).subjects.add(subject)


def _books(apps, brand_key, *, reference):
    """A hold's posting as the ledger wrote it before: keys name the brand first."""
    account = apps.get_model("money", "Account").objects
    payer = account.create(key=f"{brand_key}:customer:1", currency="USD")
    held = account.create(key=f"held:{brand_key}:customer:1", currency="USD")
    posting = apps.get_model("money", "Posting").objects.create(
        kind="hold", reference=reference, currency="USD", at=AT)
    entry = apps.get_model("money", "Entry").objects
    entry.create(posting=posting, account=payer, amount=-100)
    entry.create(posting=posting, account=held, amount=100)
    apps.get_model("money", "Hold").objects.create(reference=reference, payer=payer,
                                                   amount=100, currency="USD", until=AT)


def test_it_gives_each_row_the_brand_of_its_parent(before):
    north, south = _brand(before, "north"), _brand(before, "south")
    for brand in (north, south):
        _world(before, brand)
    _books(before, north.pk, reference="by-id")
    _books(before, "south", reference="by-slug")  # timed moves' holds name the brand's slug
    after = migrate(AFTER)
    for name in ("SetAside", "RowAudit", "SampleRow", "Allowance", "CustomerSubject"):
        rows = after.get_model("timekeeping", name).objects
        assert sorted(rows.values_list("brand_id", flat=True)) == sorted([north.pk, south.pk])
    for name in ("Account", "Entry"):
        rows = after.get_model("money", name).objects
        assert sorted(rows.values_list("brand_id", flat=True)) == sorted([north.pk] * 2
                                                                         + [south.pk] * 2)
    for name in ("Posting", "Hold"):
        found = dict(after.get_model("money", name).objects.values_list("reference",
                                                                        "brand_id"))
        assert found == {"by-id": north.pk, "by-slug": south.pk}


def test_it_refuses_an_account_of_no_brand_and_changes_nothing(before):
    _books(before, _brand(before, "north").pk, reference="kept")
    before.get_model("money", "Account").objects.create(key="gone:earned:USD", currency="USD")
    with pytest.raises(RuntimeError, match="gone:earned:USD"):
        migrate(AFTER)
    columns = [c.name for c in connection.introspection.get_table_description(
        connection.cursor(), "money_account")]
    assert "brand_id" not in columns
    assert MigrationExecutor(connection).loader.applied_migrations.keys() >= {
        ("timekeeping", "0020_tenant_brand")}
    assert ("money", "0002_brand") not in MigrationExecutor(connection).loader.applied_migrations
    before.get_model("money", "Account").objects.filter(key="gone:earned:USD").delete()
    after = migrate(AFTER)
    assert after.get_model("money", "Posting").objects.get().brand_id is not None
