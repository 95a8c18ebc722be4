from django.core.management.base import BaseCommand

from timekeeping.demo import demo_load


class Command(BaseCommand):
    help = "Load the demo brand and login (idempotent) and print the login."

    def handle(self, *args, **options):
        login = demo_load()
        self.stdout.write(
            f"Demo brand {login.brand.name} ({login.brand.id}). "
            f"Log in at http://127.0.0.1:8000/admin/ as {login.username} / {login.password}"
        )
