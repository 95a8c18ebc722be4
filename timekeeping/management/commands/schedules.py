"""`manage.py schedules list | history NAME | pause NAME | resume NAME | run NAME | why NAME |
retry NAME | give-up NAME`."""

from django.core.management.base import BaseCommand, CommandError

from timekeeping.basics import wallclock
from timekeeping.schedules import operate, parking

PARKED = {"retry": parking.retry_now, "give-up": parking.give_up}


class Command(BaseCommand):
    help = "Watch and steer interval schedules."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="verb", required=True)
        sub.add_parser("list", help="every schedule, its interval, next due time and state")
        for verb, text in (("history", "its last runs and skips"), ("pause", "pause it"),
                           ("resume", "resume it"), ("run", "run it once at the next tick"),
                           ("why", "when it runs next and why, and its last skip or failure"),
                           ("retry", "a parked schedule: run it at the next tick"),
                           ("give-up", "a parked schedule: pause it, its failures forgotten")):
            one = sub.add_parser(verb, help=text)
            one.add_argument("name")
            one.add_argument("--brand", help="the brand's id or slug, where names repeat")

    def handle(self, *args, **options):
        verb = options["verb"]
        if verb == "list":
            self._list()
            return
        try:
            row = operate.find(options["name"], brand=options.get("brand"))
        except operate.NotFound as missing:
            raise CommandError(str(missing)) from None
        if verb == "history":
            for run in operate.history(row):
                reason = f" ({run.reason})" if run.reason else ""
                self.stdout.write(f"{run.due:%Y-%m-%d %H:%M:%SZ}  {run.outcome}{reason}"
                                  f"{'  by hand' if run.by_hand else ''}  items={run.items}")
        elif verb == "why":
            self.stdout.write(operate.why(row))
        elif verb in PARKED:
            self._parked(row, verb)
        elif verb == "run" and not operate.run_by_hand(row):
            raise CommandError(f"{row.name} is parked: retry it or give it up")
        else:
            if verb != "run":
                {"pause": operate.pause, "resume": operate.resume}[verb](row)
            self.stdout.write(f"{row.name}: {verb} done")

    def _parked(self, row, verb: str) -> None:
        try:
            PARKED[verb](row.pk, by="manage.py schedules", now=wallclock.wall_now())
        except parking.NotParked:
            raise CommandError(f"{row.name} is not parked: only a parked schedule is retried "
                               "or given up") from None
        self.stdout.write(f"{row.name}: " + ("runs at the next tick" if verb == "retry"
                                              else "given up: paused, its failures forgotten"))

    def _list(self):
        warning = operate.ticks_stopped()
        if warning:
            self.stdout.write(f"! {warning}")
        for row in operate.listing():
            state = "parked" if row.parked else "paused" if row.paused else "active"
            brand = row.brand.slug if row.brand else "(code)"
            due = f"{row.next_due:%Y-%m-%d %H:%M:%SZ}" if row.next_due else "—"
            when = operate.when_text(row.every_s, row.at)
            self.stdout.write(f"{row.name:<28} {brand:<14} {when:<11} next {due}  {state}")
