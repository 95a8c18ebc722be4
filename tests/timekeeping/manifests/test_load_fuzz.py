"""A property test of the manifest load: any mutation of the examples either loads (a version,
its tables built and registered) or is refused with problems, keeping no version; nothing else
is ever raised. It builds real tables, so it is bounded to a hundred documents."""

from __future__ import annotations

import copy
import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.timekeeping.manifests.test_fuzz import TAX, VENUE, mutate
from timekeeping import manifests
from timekeeping.models import Brand, BrandTable, Manifest

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("drop_venue_tables")]
BOTH = {**TAX, "tables": VENUE["tables"]}
numbers = itertools.count()


@settings(max_examples=100, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(data=st.data(), count=st.integers(1, 2))
def test_a_load_either_keeps_a_version_or_refuses_with_problems(data, count):
    document = copy.deepcopy(BOTH)
    for _ in range(count):
        document = mutate(document, data)
    n = next(numbers)
    brand = Brand.objects.create(name=f"b{n}", slug=f"b{n}")
    try:
        version = manifests.load(brand, document)
    except manifests.ManifestInvalid as invalid:
        assert invalid.problems
        assert not Manifest.objects.filter(brand=brand).exists()
        assert not BrandTable.objects.filter(brand=brand).exists()
        return
    assert version.brand_id == brand.pk
    tables = document.get("tables") or {}
    assert set(BrandTable.objects.filter(brand=brand).values_list("name", flat=True)) == set(
        tables)
