"""`manage.py brand export BRAND [--out FILE]`, `brand import FILE`, `brand delete BRAND
--as USER`, `brand deleted`, `brand undo ARCHIVE` (docs/operating.md, "A brand's data")."""

from __future__ import annotations

import sys

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from timekeeping.basics import wallclock
from timekeeping.brands import archives, exporting, importing
from timekeeping.brands.layout import LayoutError
from timekeeping.models import Brand, BrandArchive


class Command(BaseCommand):
    help = "A brand's whole data: export it, import it, delete it (30 days to undo)."

    def add_arguments(self, parser):
        verbs = parser.add_subparsers(dest="verb", required=True)
        out = verbs.add_parser("export", help="the brand's data as one JSON file")
        out.add_argument("brand", help="its id or short name (slug)")
        out.add_argument("--out", help="a file to write (default: standard output)")
        into = verbs.add_parser("import", help="load an export where its brand is not")
        into.add_argument("file", help="the export ('-': standard input)")
        gone = verbs.add_parser("delete", help="delete a brand, with 30 days to undo")
        gone.add_argument("brand", help="its id or short name (slug)")
        gone.add_argument("--as", dest="person", required=True,
                          help="the sign-in name of the owner deleting it")
        verbs.add_parser("deleted", help="the deleted brands that can still be brought back")
        back = verbs.add_parser("undo", help="bring a deleted brand back")
        back.add_argument("archive", help="the deletion's id (arc_…), from `brand deleted`")

    def handle(self, *args, verb: str, **options):
        getattr(self, f"_{verb}")(**options)

    def _export(self, brand, out=None, **_):
        found = _brand(brand)
        if out is None:
            written = exporting.write(found, self.stdout._out)
        else:
            with open(out, "w", encoding="utf-8", newline="\n") as file:
                written = exporting.write(found, file)
        self.stderr.write(f"exported {found.name} ({found.pk}): {written.rows} rows in "
                          f"{written.sections} sections")

    def _import(self, file, **_):
        try:
            if file == "-":
                loaded = importing.load(sys.stdin)
            else:
                with open(file, encoding="utf-8", newline="\n") as lines:
                    loaded = importing.load(lines)
        except OSError as error:
            raise CommandError(f"file: {error.strerror or error}") from None
        except (LayoutError, importing.ImportRefused) as refused:
            raise CommandError(f"file: {refused}; nothing was loaded") from None
        self.stdout.write(f"imported {loaded.brand.name} ({loaded.brand.pk}): {loaded.rows} "
                          f"rows, {loaded.table_rows} table rows; accounts made without a "
                          f"password: {len(loaded.people_made)}, found here: "
                          f"{len(loaded.people_found)}")

    def _delete(self, brand, person, **_):
        found = _brand(brand)
        user = get_user_model().objects.filter(username=person).first()
        if user is None or found.role_of(user) != "owner":
            raise CommandError(f"--as: {person!r} is not an owner of {found.name}")
        archive = archives.delete(found, by=user, now=wallclock.wall_now())
        self.stdout.write(f"deleted {archive.name} ({archive.brand_id}); undo with `brand "
                          f"undo {archive.pk}` until {archive.until:%Y-%m-%d %H:%M}Z")

    def _deleted(self, **_):
        for archive in BrandArchive.objects.filter(restored__isnull=True):
            self.stdout.write(f"{archive.pk}  {archive.name} ({archive.slug})  deleted "
                              f"{archive.deleted:%Y-%m-%d %H:%M}Z  until "
                              f"{archive.until:%Y-%m-%d %H:%M}Z  {archive.size} bytes")

    def _undo(self, archive, **_):
        found = BrandArchive.objects.filter(pk=archive).first()
        if found is None:
            raise CommandError(f"archive: no deleted brand {archive!r} (see `brand deleted`)")
        try:
            loaded = archives.undo(found, now=wallclock.wall_now())
        except archives.UndoRefused as refused:
            raise CommandError(f"archive: {refused}") from None
        self.stdout.write(f"brought back {loaded.brand.name} ({loaded.brand.pk})")


def _brand(text: str) -> Brand:
    found = Brand.objects.filter(Q(pk=text) | Q(slug=text)).first()
    if found is None:
        raise CommandError(f"brand: no brand {text!r} (its id or short name)")
    return found
