"""`manage.py moves backlog|set-aside|preview [--hours N] [--brand SLUG]`: what operators
see of a connection's timed moves."""

from django.core.management.base import BaseCommand, CommandError

from timekeeping.basics import wallclock
from timekeeping.models import Connection
from timekeeping.moves import operate


class Command(BaseCommand):
    help = "The timed moves of a brand's connection: backlog, rows set aside, what moves next."

    def add_arguments(self, parser):
        parser.add_argument("verb", choices=["backlog", "set-aside", "preview"])
        parser.add_argument("--brand", help="the brand's id or slug (needed with several)")
        parser.add_argument("--hours", type=int, default=24, help="preview: how far ahead")

    def handle(self, *args, **options):
        links = Connection.objects.select_related("brand")
        if options["brand"]:
            links = links.filter(brand__slug=options["brand"]) | links.filter(
                brand__pk=options["brand"])
        links = list(links)
        if len(links) != 1:
            raise CommandError("--brand: name the brand whose connection to show "
                               f"({len(links)} connections match)")
        link, now = links[0], wallclock.wall_now()
        if options["verb"] == "backlog":
            for line in operate.backlog(link, now=now):
                oldest = f"{line.oldest:%Y-%m-%d %H:%M}Z" if line.oldest else "—"
                self.stdout.write(f"{line.table:<16} timed move {line.rule}  {line.move:<24} "
                                  f"{line.due} due, oldest {oldest}")
        elif options["verb"] == "set-aside":
            for row in operate.set_aside(link, now=now):
                self.stdout.write(f"{row.table} #{row.row}  timed move {row.rule}  until "
                                  f"{row.until:%Y-%m-%d %H:%M}Z  {row.code}")
        else:
            for line in operate.preview(link, now=now, hours=options["hours"]):
                self.stdout.write(line)
