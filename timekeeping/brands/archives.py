"""Deleting a brand, with 30 days to undo (issue 31): the brand's export is kept, gzipped in
parts (`BrandArchive`), and the brand is removed at once, its tables dropped, so nothing of it
runs or shows from then on. Undo loads the export back; the tick then catches up what fell due
meanwhile, as after any downtime. After 30 days the tick's housekeeping removes the archive,
and the accounts of the brand's people that no other brand has (`purge`)."""

from __future__ import annotations

import gzip
import io
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Exists, OuterRef

from timekeeping.brands import contents, exporting, importing, removing
from timekeeping.models import ArchivePart, Brand, BrandArchive, Customer, Member

KEPT = timedelta(days=30)
PART = 1024 * 1024


class UndoRefused(Exception):
    """Why the deletion cannot be undone: said to the person who asked."""


class _Parts(io.RawIOBase):
    """A writable file whose bytes are kept as the archive's parts, a megabyte at a time."""

    def __init__(self, archive: BrandArchive):
        self.archive, self.buffer, self.seq, self.size = archive, bytearray(), 0, 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.buffer += data
        while len(self.buffer) >= PART:
            self._keep(bytes(self.buffer[:PART]))
            del self.buffer[:PART]
        return len(data)

    def _keep(self, data: bytes) -> None:
        ArchivePart.objects.create(archive=self.archive, seq=self.seq, data=data)
        self.seq += 1
        self.size += len(data)

    def finish(self) -> int:
        if self.buffer:
            self._keep(bytes(self.buffer))
            self.buffer.clear()
        return self.size


class _Reading(io.RawIOBase):
    """The archive's parts read back in order, one part in memory at a time."""

    def __init__(self, archive: BrandArchive):
        self.archive, self.seq, self.current = archive, 0, memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, target) -> int:
        if not self.current:
            data = (ArchivePart.objects.filter(archive=self.archive, seq=self.seq)
                    .values_list("data", flat=True).first())
            if data is None:
                return 0
            self.current, self.seq = memoryview(bytes(data)), self.seq + 1
        count = min(len(target), len(self.current))
        target[:count] = self.current[:count]
        self.current = self.current[count:]
        return count


def keepers_of(brand: Brand, by) -> list[int]:
    owners = set(Member.objects.filter(brand=brand, role=Member.Role.OWNER)
                 .values_list("user_id", flat=True))
    return sorted(owners | {brand.owner_id, by.pk} - {None})


def delete(brand: Brand, *, by, now: datetime) -> BrandArchive:
    """Keep the brand's export, then remove the brand, in one transaction."""
    with transaction.atomic():
        brand = Brand.objects.select_for_update().get(pk=brand.pk)
        archive = BrandArchive.objects.create(
            brand_id=brand.pk, name=brand.name, slug=brand.slug, deleted=now,
            until=now + KEPT, deleted_by=by, keepers=keepers_of(brand, by),
            people=sorted(contents.people_of(brand.pk)))
        parts = _Parts(archive)
        with gzip.GzipFile(fileobj=parts, mode="wb", mtime=0) as zipped:
            text = io.TextIOWrapper(zipped, encoding="utf-8", newline="\n")
            exporting.write(brand, text)
            text.flush()
            text.detach()
        archive.size = parts.finish()
        archive.save(update_fields=["size"])
        removing.remove(brand)
    return archive


def undoable_by(user, now: datetime) -> list[BrandArchive]:
    """The deleted brands `user` may bring back (a handful: read and kept in memory)."""
    if not user.is_authenticated:
        return []
    found = BrandArchive.objects.filter(until__gt=now, restored__isnull=True).defer("people")
    return [archive for archive in found if user.is_superuser or user.pk in archive.keepers]


def undo(archive: BrandArchive, *, now: datetime) -> importing.Loaded:
    if archive.restored is not None or archive.until <= now:
        raise UndoRefused("its 30 days to undo are over")
    if Brand.objects.filter(slug=archive.slug).exists():
        raise UndoRefused(f"another brand has taken its short name ({archive.slug}) since")
    reading = io.BufferedReader(_Reading(archive))
    with gzip.GzipFile(fileobj=reading, mode="rb") as zipped:
        try:
            loaded = importing.load(io.TextIOWrapper(zipped, encoding="utf-8", newline="\n"))
        except importing.ImportRefused as refused:
            raise UndoRefused(str(refused)) from None
    archive.delete()
    return loaded


def past(now: datetime):
    """Archives whose 30 days are over: the tick's housekeeping removes them (`forget`)."""
    return BrandArchive.objects.filter(until__lte=now)


def forget(keys: list) -> None:
    """Remove these archives for good, with the accounts of people only their brand had."""
    for archive in BrandArchive.objects.filter(pk__in=keys):
        with transaction.atomic():
            _forget_people(archive.people)
            archive.delete()


def _forget_people(ids: list[int]) -> int:
    user = get_user_model()
    alone = (user.objects.filter(pk__in=[pk for pk in ids if isinstance(pk, int)],
                                 is_staff=False, is_superuser=False)
             .exclude(Exists(Member.objects.filter(user=OuterRef("pk"))))
             .exclude(Exists(Customer.objects.filter(user=OuterRef("pk"))))
             .exclude(Exists(Brand.objects.filter(owner=OuterRef("pk")))))
    count = alone.count()
    alone.delete()
    return count
