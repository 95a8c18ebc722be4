"""Making a subject: under the brand's current manifest version (its bundle) and plan (S24),
in the real world or a test clock's. A brand has one subject of a kind and key.

    make(brand, kind=…, key=…, name=…, test_clock=None, **fields)   the subject made
"""

from __future__ import annotations

from django.db import IntegrityError, transaction

from timekeeping.models import Brand, Subject, TestClock
from timekeeping.specs.current import current as current_of


class SubjectTaken(Exception):
    """The brand has a subject of this kind and key already."""

    def __init__(self, kind: str, key: str):
        super().__init__(f"the brand has a {kind} {key!r} already")
        self.kind, self.key = kind, key


def make(brand: Brand, *, kind: str, key: str, test_clock: TestClock | None = None,
         **fields) -> Subject:
    """Make the brand's subject `kind` `key` (`fields`: name, zone, input, contact_email,
    owner_name); refused with SubjectTaken when the brand has one already."""
    current = current_of(brand)
    try:
        # The unique constraint decides: of two requests at once, one makes the subject.
        with transaction.atomic():
            return Subject.objects.create(brand=brand, bundle=current.bundle if current else "",
                                          plan=brand.plan, kind=kind, key=key,
                                          test_clock=test_clock, **fields)
    except IntegrityError:
        raise SubjectTaken(kind, key) from None
