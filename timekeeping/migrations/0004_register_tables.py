"""Tables built before they were named by brand id: renamed to their new name and registered.

Before this, a table's physical name came from its brand's slug with punctuation removed, so
two brands could share one (`alpha-venue` and `alphavenue`). A table only one brand's name
led to is renamed and registered to that brand: its rows stay. A table two brands' names led
to is left as it is, unregistered, with a warning: whose rows are whose is an operator's call,
and each brand gets a new, empty table at its next manifest load.
"""

import hashlib
import re
import warnings

from django.db import connections, migrations

IDENTIFIER = re.compile(r"^[a-z][a-z0-9_]{0,62}$")


def _legacy(slug: str, name: str) -> str:
    return f"tm_{re.sub(r'[^a-z0-9]', '', slug.lower())[:20] or 'b'}_{name}"


def _new(brand_id: str, name: str) -> str:
    return f"tm_{hashlib.sha256(brand_id.encode()).hexdigest()[:12]}_{name}"


def _users(apps) -> dict:
    connection_model = apps.get_model("timekeeping", "Connection")
    manifest_model = apps.get_model("timekeeping", "Manifest")
    users: dict[tuple[str, str], list] = {}
    for link in connection_model.objects.select_related("brand"):
        latest = manifest_model.objects.filter(brand=link.brand).order_by("-version").first()
        tables = (latest.document or {}).get("tables") if latest else None
        for name in tables if isinstance(tables, dict) else {}:
            key = (link.database, _legacy(link.brand.slug, name))
            users.setdefault(key, []).append((link, name, latest))
    return users


def _rename(schema_editor, database: str, old: str, new: str) -> None:
    if database == schema_editor.connection.alias:
        editor = schema_editor
        editor.execute(editor.sql_rename_table % {"old_table": editor.quote_name(old),
                                                  "new_table": editor.quote_name(new)})
        return
    with connections[database].schema_editor() as editor:
        editor.execute(editor.sql_rename_table % {"old_table": editor.quote_name(old),
                                                  "new_table": editor.quote_name(new)})


def register_tables(apps, schema_editor):
    registry = apps.get_model("timekeeping", "BrandTable")
    for (database, legacy), users in _users(apps).items():
        if database not in connections or not IDENTIFIER.fullmatch(legacy):
            continue
        existing = set(connections[database].introspection.table_names())
        if legacy not in existing:
            continue
        if len(users) > 1:
            brands = ", ".join(link.brand_id for link, _, _ in users)
            warnings.warn(f"table {legacy} was shared by brands {brands}; left as it is",
                          stacklevel=1)
            continue
        link, name, latest = users[0]
        new = _new(link.brand_id, name)
        if new in existing or not IDENTIFIER.fullmatch(new):
            continue
        _rename(schema_editor, database, legacy, new)
        registry.objects.get_or_create(brand=link.brand, name=name, defaults={
            "connection": link, "database": database, "db_table": new, "manifest": latest})


class Migration(migrations.Migration):

    dependencies = [
        ("timekeeping", "0003_tables_faults_keys"),
    ]

    operations = [
        migrations.RunPython(register_tables, migrations.RunPython.noop),
    ]
