"""`manage.py subjects calendar sbj_… --from DATE [--to DATE] [--test-clock tc_…]`;
`manage.py subjects erase sbj_… --yes [--by NAME]` (docs/operating.md, "Erasing a subject")."""

from datetime import date

from django.core.management.base import BaseCommand, CommandError

from timekeeping.clocks import subject_calendar
from timekeeping.models import Subject
from timekeeping.subjects import erasing


class Command(BaseCommand):
    help = "A subject's calendar: every date kept and ahead; or erase its personal data."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="verb", required=True)
        cal = sub.add_parser("calendar", help="every date kept and ahead")
        cal.add_argument("subject_id")
        cal.add_argument("--from", dest="start")
        cal.add_argument("--to", dest="end")
        cal.add_argument("--test-clock")
        erase = sub.add_parser("erase", help="erase its personal data, keeping its anonymous "
                                             "record (cannot be undone)")
        erase.add_argument("subject_id")
        erase.add_argument("--yes", action="store_true",
                           help="say that you mean it: erasing cannot be undone")
        erase.add_argument("--by", default="an operator",
                           help="who asked, as the record names them")

    def handle(self, *args, **options):
        subject = Subject.objects.filter(pk=options["subject_id"]).first()
        if subject is None:
            raise CommandError(f"subject_id: no subject {options['subject_id']!r}")
        if options["verb"] == "erase":
            self.stdout.write(erase(subject, yes=options["yes"], by=options["by"]))
            return
        if options["test_clock"] and options["test_clock"] != subject.test_clock_id:
            lives = f"test clock {subject.test_clock_id}" if subject.test_clock_id else \
                "the real clock"
            raise CommandError(f"--test-clock: {subject.pk} lives on {lives}, not on "
                               f"{options['test_clock']!r}")
        found = subject_calendar.lines(subject, start=_date(options["start"], "--from"),
                                       end=_date(options["end"], "--to"))
        self.stdout.write(render(subject, found))


def erase(subject, *, yes: bool, by: str) -> str:
    if not yes:
        raise CommandError(f"--yes: erasing {subject.pk} cannot be undone; say --yes to erase "
                           "its personal data")
    try:
        done = erasing.erase(subject, by=by[:200])
    except erasing.SubjectErased as already:
        raise CommandError(f"subject_id: {already}") from None
    counts = ", ".join(f"{name} {count}" for name, count in done.counts().items())
    return f"{subject.pk} erased at {done.at:%Y-%m-%dT%H:%M:%SZ} · {counts}"


def _date(text, field):
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise CommandError(f"{field}: {text!r} is not a date written YYYY-MM-DD") from None


def render(subject, found) -> str:
    header = (f"{subject.pk} · {subject.kind} {subject.key} · {subject.name} · "
              f"{subject_calendar.zone_of_subject(subject)} · {len(found)} dates · webcal at "
              f"{subject_calendar.feed_path(subject)}")
    what = max([len("what"), *(len(line.what) for line in found)])
    kind = max([len("kind"), *(len(line.kind) for line in found)])
    answers = max([len("answers for"), *(len(line.answers_for) for line in found)])
    rows = [header, f"  {'date':<10}  {'what':<{what}}  {'kind':<{kind}}  "
                    f"{'answers for':<{answers}}  status"]
    for line in found:
        rows.append(f"  {line.date}  {line.what:<{what}}  {line.kind:<{kind}}  "
                    f"{line.answers_for:<{answers}}  {line.status}")
    return "\n".join(rows)
