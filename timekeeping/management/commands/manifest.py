"""`manage.py manifest check FILE`, `manage.py manifest plan BRAND FILE` and
`manage.py manifest load BRAND FILE`."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from timekeeping import manifests
from timekeeping.models import Brand
from timekeeping.web import strict


class Command(BaseCommand):
    help = "Check a manifest (every problem at once), or load it as a brand's new version."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="verb", required=True)
        check = sub.add_parser("check", help="print every problem; exit 1 if there are any")
        check.add_argument("file")
        plan = sub.add_parser("plan", help="what loading would change; stores nothing; exit 1 "
                                           "if the load would be refused")
        plan.add_argument("brand", help="the brand's id (brd_…) or slug")
        plan.add_argument("file")
        load = sub.add_parser("load", help="plan, keep a new version and compile it")
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
        if options["verb"] == "plan":
            planned = manifests.plan(brand, document)
            self._print(planned)
            if planned.problems:
                raise CommandError(f"{len(planned.problems)} problem(s); a load would be "
                                   "refused")
            return
        try:
            applied = manifests.apply(brand, document, by="manage.py manifest load")
        except manifests.ManifestInvalid as invalid:
            for problem in invalid.problems:
                self.stdout.write(str(problem))
            raise CommandError(f"{len(invalid.problems)} problem(s); nothing was stored") from None
        self._print(applied.plan, problems=False)
        version = applied.version
        self.stdout.write(f"{brand.slug}: version {version.version}, bundle {version.bundle}")

    def _print(self, planned: manifests.Plan, *, problems: bool = True) -> None:
        current = planned.current.version if planned.current else None
        if planned.unchanged:
            self.stdout.write(f"unchanged: this is version {current}")
        elif not planned.problems:
            self.stdout.write(f"from version {current}: " if current else "a first version: ")
            for change in planned.changes:
                self.stdout.write(f"  {change}")
            if not planned.changes:
                self.stdout.write("  nothing a load reads changes")
        staying = planned.staying
        if staying.jobs or staying.subscriptions or staying.subjects:
            last = staying.last_owed.isoformat() if staying.last_owed else "none armed"
            self.stdout.write(
                f"staying on older versions: {staying.jobs} open job(s), "
                f"{staying.subscriptions} subscription(s), {staying.subjects} subject(s); "
                f"their last armed timer: {last}")
        if problems:
            for problem in planned.problems:
                self.stdout.write(str(problem))


def _read(path: str):
    """The file's JSON, read as strictly as an API body (`web.strict.json_text`): NaN,
    Infinity, a lone surrogate, a NUL or an integer of thousands of digits is refused here,
    naming the place, as at the API's door."""
    try:
        return strict.json_text(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CommandError(f"file: {path} does not exist") from None
    except (UnicodeDecodeError, ValueError) as error:
        raise CommandError(f"file: {path} is not a manifest's JSON ({error})") from None
