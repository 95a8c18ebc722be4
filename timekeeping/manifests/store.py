"""Keeping manifest versions and compiling them.

`apply` plans a document (`manifests.plan`: its check, and every removal of something in use
that its `removes` does not state), keeps it as a new version (its bundle is the sha256 of its
canonical JSON; loading the current content again returns the current version; loading an
older content again makes it a new, current version), builds its tables, applies its
calendar to the brand, and records each removal it made (`manifest.removed`: what, what still
used it, who). It answers with the version and the plan it applied; `load` with the version.
A document with a problem changes nothing.

A load is whole or absent: where the tables live on a database that builds tables inside a
transaction (PostgreSQL) and that database is the default one, the tables, the version and
the calendar commit together. SQLite builds tables only outside a transaction, and another
database cannot share a transaction with the default one: there the tables are built first,
each in its own transaction, and a load that fails afterwards leaves new, empty tables (or
columns) behind, which the next load of the manifest reuses. Nothing a user wrote is touched.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connections, transaction

from calendars.models import Calendar, Postponement
from timekeeping.basics import wallclock
from timekeeping.manifests.check import Problem
from timekeeping.manifests.plan import Plan, plan
from timekeeping.models import Brand, Connection, Manifest
from timekeeping.specs.current import bundle_of, current, services_of  # noqa: F401 - its API
from timekeeping.timers import in_progress, records


class ManifestInvalid(Exception):
    def __init__(self, problems: list[Problem]):
        super().__init__(f"the manifest has {len(problems)} problem(s)")
        self.problems = problems


@dataclass(frozen=True)
class Applied:
    version: Manifest
    plan: Plan


def load(brand: Brand, document: object, *, by: str = "") -> Manifest:
    return apply(brand, document, by=by).version


def apply(brand: Brand, document: object, *, by: str = "") -> Applied:
    """Load the document as the brand's manifest, by `by` (who, as records name them)."""
    planned = plan(brand, document)
    if planned.problems:
        raise ManifestInvalid(planned.problems)
    if not document.get("tables"):
        return _keep(brand, document, planned, by)
    link = _connection(brand, document)
    # PostgreSQL builds tables inside a transaction; Django's SQLite backend only outside one.
    if link.database == "default" and connections["default"].vendor == "postgresql":
        with transaction.atomic():
            return _keep(brand, document, planned, by, _build_tables(link, document))
    built = _build_tables(link, document)
    return _keep(brand, document, planned, by, built)


def _connection(brand: Brand, document: dict) -> Connection:
    zone = (document.get("calendar") or {}).get("zone", "")
    link, _ = Connection.objects.select_related("brand").get_or_create(
        brand=brand, defaults={"zone": zone})
    return link


def _build_tables(link: Connection, document: dict):
    from timekeeping.moves import tables
    from timekeeping.specs.tables import compile_tables

    compiled = compile_tables(document["tables"])
    try:
        tables.ensure(link, compiled)
    except (tables.TableRefused, tables.UnsafeName) as refused:
        name = getattr(refused, "table", "")
        raise ManifestInvalid([Problem(
            "table.build_refused", f"$.tables.{name}" if name else "$.tables",
            f"the database refused to build table '{name}': {refused}; nothing was kept")]
        ) from None
    return link, compiled


@transaction.atomic
def _keep(brand: Brand, document: dict, planned: Plan, by: str, built=None) -> Applied:
    bundle = bundle_of(document)
    last = Manifest.objects.select_for_update().filter(brand=brand).order_by("-version").first()
    if (last and last.bundle) != (planned.current and planned.current.bundle):
        # Another load came first: the plan is made again against what is current now.
        planned = plan(brand, document, current=last)
        if planned.problems:
            raise ManifestInvalid(planned.problems)
    if last is not None and last.bundle == bundle:
        version = last  # already the current version
    else:
        # Content equal to an older version becomes a new version: the latest is used.
        version = Manifest.objects.create(brand=brand, bundle=bundle, document=document,
                                          version=(last.version + 1) if last else 1)
        if document.get("calendar") is not None:
            _apply_calendar(brand, document["calendar"])
        _record_removals(brand, version, planned, by)
        in_progress.forget(brand)  # a load inside a firing: read again what it read once
    if built is not None:
        from timekeeping.moves import tables

        tables.register(*built, version)
    return Applied(version, planned)


def _record_removals(brand: Brand, version: Manifest, planned: Plan, by: str) -> None:
    for change in planned.removals:
        records.write("manifest.removed", brand=brand, instant=wallclock.now(brand=brand), data={
            "path": change.path, "what": change.what, "uses": list(change.uses),
            "stated": change.stated, "version": version.version, "by": by or "unknown"})


def _apply_calendar(brand: Brand, spec: dict) -> None:
    holidays = spec.get("holidays")
    fields = {
        "zone": spec.get("zone", ""), "weekends": spec.get("weekends", ["sat", "sun"]),
        "holidays_country": holidays[0] if holidays else "",
        "holidays_subdivision": (holidays[1] or "") if holidays and len(holidays) > 1 else "",
        "closed_dates": spec.get("closed", []), "closes": spec.get("closes", "23:59"),
        "rings_at": spec.get("rings_at", ""), "roll": spec.get("roll", "next open day"),
    }
    from timekeeping import clocks  # the clocks apply postponements; they import manifests

    if brand.calendar_id is None:
        brand.calendar = Calendar.objects.create(name=f"{brand.name} calendar", **fields)
        brand.save(update_fields=["calendar"])
    elif any(getattr(brand.calendar, name) != value for name, value in fields.items()):
        Calendar.objects.filter(pk=brand.calendar_id).update(**fields)
        brand.calendar.refresh_from_db()
        # Open dates on the calendar are rolled anew on it, or kept with the reason why.
        clocks.calendar_changed(brand.calendar, by=f"manifest of {brand.pk}")

    for notice in spec.get("postpone", []):
        postponement, created = Postponement.objects.get_or_create(
            calendar=brand.calendar, from_date=notice["from"], through=notice["through"],
            to=notice["to"], notice=notice["notice"], where=notice.get("where", {}),
        )
        if created:
            clocks.postpone(brand, postponement, by=f"manifest of {brand.pk}")
