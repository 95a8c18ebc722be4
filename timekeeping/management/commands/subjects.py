"""`manage.py subjects calendar sbj_… --from DATE [--to DATE] [--test-clock tc_…]`."""

from datetime import date

from django.core.management.base import BaseCommand, CommandError

from timekeeping.clocks import subject_calendar
from timekeeping.models import Subject


class Command(BaseCommand):
    help = "A subject's calendar: every date kept and ahead."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="verb", required=True)
        cal = sub.add_parser("calendar", help="every date kept and ahead")
        cal.add_argument("subject_id")
        cal.add_argument("--from", dest="start")
        cal.add_argument("--to", dest="end")
        cal.add_argument("--test-clock")

    def handle(self, *args, **options):
        subject = Subject.objects.filter(pk=options["subject_id"]).first()
        if subject is None:
            raise CommandError(f"subject_id: no subject {options['subject_id']!r}")
        if options["test_clock"] and options["test_clock"] != subject.test_clock_id:
            lives = f"test clock {subject.test_clock_id}" if subject.test_clock_id else \
                "the real clock"
            raise CommandError(f"--test-clock: {subject.pk} lives on {lives}, not on "
                               f"{options['test_clock']!r}")
        found = subject_calendar.lines(subject, start=_date(options["start"], "--from"),
                                       end=_date(options["end"], "--to"))
        self.stdout.write(render(subject, found))


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
