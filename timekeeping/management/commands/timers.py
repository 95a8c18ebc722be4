"""`manage.py timers why tmr_…`: why a timer has or has not fired, in a sentence."""

from django.core.management.base import BaseCommand, CommandError

from timekeeping.models import Timer
from timekeeping.timers import arming


class Command(BaseCommand):
    help = "Ask about timers: `timers why tmr_…`."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="verb", required=True)
        why = sub.add_parser("why", help="why a timer has or has not fired")
        why.add_argument("timer_id")

    def handle(self, *args, **options):
        timer = Timer.objects.select_related("brand", "test_clock").filter(
            pk=options["timer_id"]).first()
        if timer is None:
            raise CommandError(f"timer_id: no timer {options['timer_id']!r}")
        self.stdout.write(arming.explain(timer))
