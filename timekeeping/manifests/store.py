"""Keeping manifest versions and compiling them.

`load` checks a document, keeps it as a new version (its bundle is the sha256 of its
canonical JSON; loading the current content again returns the current version; loading an
older content again makes it a new, current version), and applies its calendar to the brand.
A document that fails its check changes nothing.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache

from django.db import transaction

from calendars.models import Calendar, Postponement
from timekeeping.manifests.check import Problem, check
from timekeeping.manifests.spec import ServiceSpec, compile_services
from timekeeping.models import Brand, Manifest


class ManifestInvalid(Exception):
    def __init__(self, problems: list[Problem]):
        super().__init__(f"the manifest has {len(problems)} problem(s)")
        self.problems = problems


def bundle_of(document: dict) -> str:
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def load(brand: Brand, document: object) -> Manifest:
    problems = check(document)
    if problems:
        raise ManifestInvalid(problems)
    if document.get("tables"):
        # Tables first, outside the version's transaction (SQLite builds tables only there);
        # building them is additive and idempotent, so a failure after it loses nothing.
        _apply_tables(brand, document)
    return _keep(brand, document)


def _apply_tables(brand: Brand, document: dict) -> None:
    from timekeeping.models import Connection
    from timekeeping.moves import tables
    from timekeeping.moves.spec import compile_tables

    zone = (document.get("calendar") or {}).get("zone", "")
    link, _ = Connection.objects.get_or_create(brand=brand, defaults={"zone": zone})
    tables.ensure(link, compile_tables(document["tables"]))


@transaction.atomic
def _keep(brand: Brand, document: dict) -> Manifest:
    bundle = bundle_of(document)
    last = Manifest.objects.select_for_update().filter(brand=brand).order_by("-version").first()
    if last is not None and last.bundle == bundle:
        return last  # already the current version
    # Content equal to an older version becomes a new version: the latest is what is used.
    version = Manifest.objects.create(brand=brand, bundle=bundle, document=document,
                                      version=(last.version + 1) if last else 1)
    if "calendar" in document:
        _apply_calendar(brand, document["calendar"])
    return version


def current(brand: Brand) -> Manifest | None:
    return Manifest.objects.filter(brand=brand).order_by("-version").first()


def services_of(bundle: str) -> dict[str, ServiceSpec]:
    return _compiled(bundle)


@lru_cache(maxsize=64)
def _compiled(bundle: str) -> dict[str, ServiceSpec]:
    return compile_services(Manifest.objects.filter(bundle=bundle).first().document)


def _apply_calendar(brand: Brand, spec: dict) -> None:
    holidays = spec.get("holidays")
    fields = {
        "zone": spec.get("zone", ""), "weekends": spec.get("weekends", ["sat", "sun"]),
        "holidays_country": holidays[0] if holidays else "",
        "holidays_subdivision": (holidays[1] or "") if holidays and len(holidays) > 1 else "",
        "closed_dates": spec.get("closed", []), "closes": spec.get("closes", "23:59"),
        "rings_at": spec.get("rings_at", ""), "roll": spec.get("roll", "next open day"),
    }
    if brand.calendar_id is None:
        brand.calendar = Calendar.objects.create(name=f"{brand.name} calendar", **fields)
        brand.save(update_fields=["calendar"])
    else:
        Calendar.objects.filter(pk=brand.calendar_id).update(**fields)
        brand.calendar.refresh_from_db()
    from timekeeping import clocks  # the clocks apply postponements; they import manifests

    for notice in spec.get("postpone", []):
        postponement, created = Postponement.objects.get_or_create(
            calendar=brand.calendar, from_date=notice["from"], through=notice["through"],
            to=notice["to"], notice=notice["notice"], where=notice.get("where", {}),
        )
        if created:
            clocks.postpone(brand, postponement)
