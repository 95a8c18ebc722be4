"""Taking a subject's personal data out of what the product keeps about it, for an erasure
(`timekeeping.subjects.erasing`).

    Needles.of(subject)          its personal data, gathered before anything changes
    needles.scrub(value)         a text, or JSON of any depth, with each of them replaced
    records(brand_id, ids, …)    its records' `data` rewritten: the one exception to
                                 append-only (docs/foundation.md, "The record")

A needle is matched where it stands as a whole (not inside a longer word: a subject named "Ana"
leaves "Banana" alone); a name or key as written, an address in any case. A needle of one or
two characters is replaced only where it is a whole value, so a subject named "S" leaves
"US-CA" and every other S alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Q

from timekeeping.models import Ask, CustomerSubject, Invitation, Record, Subject

ERASED = "[erased]"  # what stands where personal data stood
SHORTEST = 3  # a needle shorter than this is replaced only as a whole value
CHUNK = 500  # ids in one query: far below any database's limit on parameters
GENERIC_PARTY = "the subject's contact"  # `jobs.asks`' party when the subject names no one
INPUT_PARTY = "the party in input."  # … when the job's input names no address


def chunks(values: Iterable, size: int = CHUNK) -> Iterator[list]:
    batch: list = []
    for value in values:
        batch.append(value)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _pattern(needles: set[str], flags: int = 0) -> re.Pattern | None:
    longest_first = sorted((each for each in needles if len(each) >= SHORTEST), key=len,
                           reverse=True)
    if not longest_first:
        return None
    either = "|".join(re.escape(each) for each in longest_first)
    return re.compile(rf"(?<!\w)(?:{either})(?!\w)", flags)


def _people_of(brand_id: str) -> set[str]:
    """The names and addresses of a brand's owner and members, in lower case."""
    users = get_user_model().objects.filter(
        Q(owned_brands=brand_id) | Q(memberships__brand_id=brand_id)).distinct()
    found = set()
    for user in users:
        found |= {user.get_username(), user.email, user.get_full_name()}
    return {each.strip().lower() for each in found if each and each.strip()}


@dataclass(frozen=True)
class Needles:
    """A subject's personal data as text to find: `names` (its name, key and owner's name, the
    party its asks named, its customers' names) as written; `addresses` (its contact, the
    addresses it was invited and asked at, its customers' sign-in names and addresses) in
    any case."""

    names: frozenset[str]
    addresses: frozenset[str]

    @classmethod
    def of(cls, subject: Subject) -> Needles:
        names = {subject.name, subject.key, subject.owner_name}
        addresses = {subject.contact_email}
        for party, email in Ask.objects.filter(brand_id=subject.brand_id,
                                               subject=subject).values_list("party", "email"):
            names.add(party)
            addresses.add(email)
        addresses |= set(Invitation.objects.filter(brand_id=subject.brand_id, subject=subject)
                         .values_list("email", flat=True))
        for link in CustomerSubject.objects.filter(brand_id=subject.brand_id, subject=subject
                                                   ).select_related("customer__user"):
            user = link.customer.user
            names.add(user.get_full_name())
            addresses |= {user.get_username(), user.email}
        # The brand's own people (a member who linked themselves as a customer to try the
        # portal, an owner whose address stands in as a contact) are no personal data of the
        # subject's: their names stay, and their emails are not taken for the subject's.
        staff = _people_of(subject.brand_id)
        names = {name for name in names if name != GENERIC_PARTY
                 and not name.startswith(INPUT_PARTY) and name.lower() not in staff}
        addresses = {address for address in addresses if address.lower() not in staff}
        return cls(frozenset(each.strip() for each in names if each and each.strip()),
                   frozenset(each.strip() for each in addresses if each and each.strip()))

    @cached_property
    def _patterns(self) -> list[re.Pattern]:
        found = [_pattern(set(self.names)), _pattern(set(self.addresses), re.IGNORECASE)]
        return [each for each in found if each is not None]

    def text(self, value: str) -> str:
        if value.strip() in self.names or value.strip().lower() in self._lowered:
            return ERASED
        for pattern in self._patterns:
            value = pattern.sub(ERASED, value)
        return value

    @cached_property
    def _lowered(self) -> set[str]:
        return {each.lower() for each in self.addresses}

    def scrub(self, value):
        """`value` (text, or JSON of any depth) with every needle replaced by ERASED."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {key: self.scrub(each) for key, each in value.items()}
        if isinstance(value, list):
            return [self.scrub(each) for each in value]
        return value

    def scrub_json_text(self, text: str) -> str:
        """A body kept as JSON text (an event as a receiver got it): scrubbed as JSON, so an
        escaped name is found too; text that is no JSON, as text."""
        try:
            parsed = json.loads(text)
        except ValueError:
            return self.text(text)
        scrubbed = self.scrub(parsed)
        return text if scrubbed == parsed else json.dumps(scrubbed)

    def as_stored(self) -> set[str]:
        """Each needle as JSON text may hold it (escaped or not), for a database's LIKE to
        find the rows worth reading."""
        found = set()
        for each in (*self.names, *self.addresses):
            if len(each) >= SHORTEST:
                found |= {json.dumps(each)[1:-1], json.dumps(each, ensure_ascii=False)[1:-1]}
        return found


def records(brand_id: str, rows: Iterable[tuple[str, datetime, object]],
            needles: Needles) -> list[str]:
    """Rewrite the `data` of these records of the brand (`rows`: each one's id, `written` and
    data) without the needles; answers the ids of those that changed.

    The one exception to append-only (DESIGN decision 5, docs/foundation.md): records never
    change, except that erasing a subject takes its personal data out of its own records. It
    is a raw UPDATE of `data` alone, row by row, named by id, brand and `written` (the month
    PostgreSQL keeps it in, so each update reads one partition), inside the erasure's
    transaction: the kind, instant, subject, job and timer stay as they were, and no other
    path of the product (the ORM's save, update and delete all refuse) can do it."""
    changed: list[tuple[str, datetime, object]] = []
    for pk, written, data in rows:
        scrubbed = needles.scrub(data)
        if scrubbed != data:
            changed.append((pk, written, scrubbed))
    field = Record._meta.get_field("data")
    table = connection.ops.quote_name(Record._meta.db_table)
    # Only PostgreSQL partitions the records by `written`; SQLite keeps it as text of its own.
    month = " AND written = %s" if connection.vendor == "postgresql" else ""
    with connection.cursor() as cursor:
        for batch in chunks(changed):
            cursor.executemany(
                f"UPDATE {table} SET data = %s WHERE id = %s AND brand_id = %s{month}",  # noqa: S608
                [(field.get_db_prep_save(data, connection), pk, brand_id,
                  *([written] if month else [])) for pk, written, data in batch])
            if cursor.rowcount not in (-1, len(batch)):  # each names exactly one row
                raise RuntimeError(f"records: {cursor.rowcount} of {len(batch)} rewritten")
    return [pk for pk, _, _ in changed]
