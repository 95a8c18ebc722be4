"""`manage.py rundemo`: the demo's server with the tick running in the same process."""

from django.core.management import call_command
from django.core.management.base import BaseCommand

from timekeeping.tick import loop


class Command(BaseCommand):
    help = "Serve the demo on 127.0.0.1:8000 and tick every minute in the same process."

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")

    def handle(self, *args, **options):
        stop = loop.start_in_background()
        self.stdout.write("Ticking every minute in this process (manage.py tick --loop).")
        try:
            # No autoreloader: it would start a second process, and a second tick thread.
            call_command("runserver", options["addrport"], use_reloader=False)
        finally:
            stop.set()
