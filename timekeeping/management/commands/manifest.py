"""`manage.py manifest check FILE` and `manage.py manifest load BRAND FILE`."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from timekeeping import manifests
from timekeeping.models import Brand


class Command(BaseCommand):
    help = "Check a manifest (every problem at once), or load it as a brand's new version."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="verb", required=True)
        check = sub.add_parser("check", help="print every problem; exit 1 if there are any")
        check.add_argument("file")
        load = sub.add_parser("load", help="check, keep a new version and compile it")
        load.add_argument("brand", help="the brand's id (brd_…) or slug")
        load.add_argument("file")

    def handle(self, *args, **options):
        document = _read(options["file"])
        if options["verb"] == "check":
            problems = manifests.check(document)
            for problem in problems:
                self.stdout.write(str(problem))
            if problems:
                raise CommandError(f"{len(problems)} problem(s); nothing was used")
            self.stdout.write("no problems")
            return
        brand = Brand.objects.filter(pk=options["brand"]).first() or Brand.objects.filter(
            slug=options["brand"]).first()
        if brand is None:
            raise CommandError(f"brand: no brand {options['brand']!r}")
        try:
            version = manifests.load(brand, document)
        except manifests.ManifestInvalid as invalid:
            for problem in invalid.problems:
                self.stdout.write(str(problem))
            raise CommandError(f"{len(invalid.problems)} problem(s); nothing was stored") from None
        self.stdout.write(f"{brand.slug}: version {version.version}, bundle {version.bundle}")


def _read(path: str):
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise CommandError(f"file: {path} does not exist") from None
    except json.JSONDecodeError as error:
        raise CommandError(f"file: {path} is not JSON ({error})") from None
