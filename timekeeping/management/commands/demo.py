from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from timekeeping.demo import DemoRefused, demo_load


class Command(BaseCommand):
    help = ("Load the demo brands and their logins (idempotent) and print the four sign-ins. "
            "Needs DEBUG=true.")

    def handle(self, *args, **options):
        try:
            login = demo_load()
        except DemoRefused as refused:
            raise CommandError(str(refused)) from None
        self.stdout.write(f"The demo is loaded ({login.brand.name} is {login.brand.id}). "
                          f"Sign in at {settings.SITE_URL}/accounts/login/ as:")
        width = max(len(f"{each.username} / {each.password}") for each in login.sign_ins)
        for each in login.sign_ins:
            self.stdout.write(f"  {f'{each.username} / {each.password}':<{width}}  {each.who}")
        self.stdout.write(login.receiver)
        self.stdout.write(f"Operators: the admin at {settings.SITE_URL}/admin/ "
                          f"({login.username}).")
