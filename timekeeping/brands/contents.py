"""What a brand's data is: the models an export holds, in the order a load writes them
(a row after the rows it points to), and how each finds the brand's rows."""

from __future__ import annotations

from functools import cache

from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import models

from timekeeping.models import Brand

# Not the brand's: the archive of deleted brands, what the whole installation shares (its
# heartbeat, spent form tokens), and the brand row itself (a section of its own).
LEFT_OUT = {"timekeeping.brand", "timekeeping.brandarchive", "timekeeping.archivepart",
            "timekeeping.heartbeat", "timekeeping.spenttoken"}
# The apps whose rows belong to a brand: the product's, and the ledger's (`money`).
APPS = ("timekeeping", "money")
# Rows that reach their brand through another row.
THROUGH = {"timekeeping.schedulerun": "schedule__brand_id"}


def label(model) -> str:
    return model._meta.label_lower


@cache
def ordered() -> tuple[type[models.Model], ...]:
    """The brand's models, each after every model it points to (a row is written after the
    rows it points to, whatever the database checks when)."""
    chosen = [model for app in APPS for model in apps.get_app_config(app).get_models()
              if label(model) not in LEFT_OUT]
    done: list = []
    waiting = sorted(chosen, key=label)
    while waiting:
        ready = [model for model in waiting
                 if all(target in done or target not in waiting or target is model
                        for target in _targets(model))]
        if not ready:
            raise RuntimeError(f"models point at each other: {[label(m) for m in waiting]}")
        done += ready
        waiting = [model for model in waiting if model not in ready]
    return tuple(done)


def _targets(model) -> list:
    return [field.related_model for field in model._meta.concrete_fields if field.is_relation]


def rows_of(model, brand_id: str) -> models.QuerySet:
    lookup = THROUGH.get(label(model), "brand_id")
    return model._default_manager.filter(**{lookup: brand_id})


def people_fields() -> list[tuple[type[models.Model], str]]:
    """(model, attname) of every column that names a sign-in account."""
    user = get_user_model()
    found = [(Brand, "owner_id")]
    for model in ordered():
        found += [(model, field.attname) for field in model._meta.concrete_fields
                  if field.is_relation and field.related_model is user]
    return found


def people_of(brand_id: str) -> set[int]:
    """The accounts of the brand's people: its owner, members, customers, and whoever made its
    keys, invitations and digests."""
    found: set[int] = set()
    for model, attname in people_fields():
        rows = (Brand.objects.filter(pk=brand_id) if model is Brand
                else rows_of(model, brand_id))
        found |= set(rows.exclude(**{attname: None}).values_list(attname, flat=True))
    return found
