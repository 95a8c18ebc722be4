"""A brand removed whole: every row of it, its records included, and the tables its manifest
and its rehearsals made. The brand's calendar goes too unless another brand shares it."""

from __future__ import annotations

from django.db import transaction

from calendars.models import Calendar, Postponement
from timekeeping.brands import contents
from timekeeping.models import Brand, BrandTable, Connection, Rehearsal
from timekeeping.moves import tables


def remove(brand: Brand) -> int:
    """Remove the brand. Returns how many rows went (its tables' rows not counted)."""
    removed = 0
    with transaction.atomic():
        Brand.objects.select_for_update().filter(pk=brand.pk).exists()
        _drop_tables(brand)
        for model in reversed(contents.ordered()):
            # One DELETE per model, children first; records go only this way (the whole
            # brand), never through the ORM's append-only paths.
            queryset = contents.rows_of(model, brand.pk)
            removed += queryset._raw_delete(queryset.db)
        calendar = brand.calendar_id
        removed += Brand.objects.filter(pk=brand.pk)._raw_delete("default")
        if calendar is not None and not Brand.objects.filter(calendar_id=calendar).exists():
            Postponement.objects.filter(calendar_id=calendar).delete()
            Calendar.objects.filter(pk=calendar).delete()
    return removed


def _drop_tables(brand: Brand) -> None:
    link = Connection.objects.select_related("brand").filter(brand_id=brand.pk).first()
    if link is None:
        return
    names = list(BrandTable.objects.filter(brand_id=brand.pk).values_list("db_table",
                                                                           flat=True))
    for made in Rehearsal.objects.filter(brand_id=brand.pk).values_list("tables", flat=True):
        names += [name for name in made or [] if isinstance(name, str)]
    tables.drop(link, sorted(set(names)))
