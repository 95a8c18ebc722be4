from django.core.management.base import BaseCommand, CommandError

from timekeeping.demo import DemoRefused, demo_load


class Command(BaseCommand):
    help = "Load the demo brand and login (idempotent) and print the login. Needs DEBUG=true."

    def handle(self, *args, **options):
        try:
            login = demo_load()
        except DemoRefused as refused:
            raise CommandError(str(refused)) from None
        self.stdout.write(
            f"Demo brand {login.brand.name} ({login.brand.id}). "
            f"Log in at http://127.0.0.1:8000/admin/ as {login.username} / {login.password}"
        )
