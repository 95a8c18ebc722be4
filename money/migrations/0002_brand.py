"""Every row of the ledger carries the brand whose books it is (DESIGN "Scale", issue 14).

The ledger had no relation to a brand, only its account keys, which callers write with the
brand first: `<brand id>:customer:<subject>`, `<brand slug>:<payer>` (timed moves' holds), and
`held:` before a payer's key. An account takes the brand its key names (by id, else by slug);
an entry its account's; a posting its entries'; a hold its payer's. A row left without a
brand stops the migration, naming it, and nothing is changed: money is never guessed or
dropped. Each column is added empty, filled and then required, in this one migration.
"""

from collections import defaultdict

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery

CHUNK = 500


def brand_of(key: str, ids: set[str], slugs: dict[str, str]) -> str | None:
    head = key.removeprefix("held:").split(":", 1)[0]
    return head if head in ids else slugs.get(head)


def _accounts(apps) -> None:
    brand_model = apps.get_model("timekeeping", "Brand")
    account_model = apps.get_model("money", "Account")
    ids = set(brand_model.objects.values_list("pk", flat=True))
    slugs = dict(brand_model.objects.values_list("slug", "pk"))
    found, unknown = defaultdict(list), []
    for pk, key in account_model.objects.values_list("pk", "key").iterator():
        brand = brand_of(key, ids, slugs)
        if brand is None:
            unknown.append(key)
        else:
            found[brand].append(pk)
    if unknown:
        raise RuntimeError(f"{len(unknown)} ledger account(s) name no brand that exists, so "
                           f"their brand cannot be filled in: {', '.join(unknown[:20])}")
    for brand, pks in found.items():
        for start in range(0, len(pks), CHUNK):
            account_model.objects.filter(pk__in=pks[start:start + CHUNK]).update(brand_id=brand)


def backfill(apps, schema_editor):
    _accounts(apps)
    account = apps.get_model("money", "Account").objects
    entry = apps.get_model("money", "Entry").objects
    posting = apps.get_model("money", "Posting").objects
    entry.update(brand_id=Subquery(
        account.filter(pk=OuterRef("account_id")).values("brand_id")[:1]))
    posting.update(brand_id=Subquery(
        entry.filter(posting_id=OuterRef("pk")).order_by("pk").values("brand_id")[:1]))
    apps.get_model("money", "Hold").objects.update(brand_id=Subquery(
        account.filter(pk=OuterRef("payer_id")).values("brand_id")[:1]))
    empty = list(posting.filter(brand_id__isnull=True).values_list("reference", flat=True)[:20])
    if empty:
        raise RuntimeError(f"posting(s) with no entries, whose brand cannot be filled in: "
                           f"{', '.join(empty)}")


def _brand(name: str, related_name: str, *, null: bool) -> models.ForeignKey:
    return models.ForeignKey(null=null, on_delete=django.db.models.deletion.PROTECT,
                             related_name=related_name, to="timekeeping.brand")


TABLES = [("account", "accounts"), ("posting", "postings"), ("entry", "entries"),
          ("hold", "holds")]


class Migration(migrations.Migration):

    dependencies = [
        ("money", "0001_initial"),
        ("timekeeping", "0020_tenant_brand"),
    ]

    operations = [
        *[migrations.AddField(model_name=name, name="brand",
                              field=_brand(name, related, null=True))
          for name, related in TABLES],
        migrations.RunPython(backfill, migrations.RunPython.noop),
        *[migrations.AlterField(model_name=name, name="brand",
                                field=_brand(name, related, null=False))
          for name, related in TABLES],
        migrations.RemoveIndex(model_name="hold", name="hold_held_until"),
        migrations.AddIndex(
            model_name="hold",
            index=models.Index(condition=models.Q(("state", "held")), fields=["brand", "until"],
                               name="hold_held_until")),
    ]
