"""A brand's current manifest, and the services a kept version compiles to (cached per version:
a version's bundle is the sha256 of its canonical JSON, so a bundle never changes meaning)."""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache

from timekeeping.models import Brand, Manifest
from timekeeping.specs.services import ServiceSpec, compile_services


def bundle_of(document: dict) -> str:
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def current(brand: Brand) -> Manifest | None:
    return Manifest.objects.filter(brand=brand).order_by("-version").first()


def services_of(bundle: str) -> dict[str, ServiceSpec]:
    return _compiled(bundle)


@lru_cache(maxsize=64)
def _compiled(bundle: str) -> dict[str, ServiceSpec]:
    return compile_services(Manifest.objects.filter(bundle=bundle).first().document)
