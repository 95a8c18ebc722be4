"""`manage.py tick`: one tick of every real brand clock, then the outbox sweep.

    manage.py tick                                   # what cron runs every minute
    manage.py tick --loop                            # tick at each whole minute until stopped
    manage.py tick --test-clock tc_7Hq4 --to 2028-02-01T20:00Z --trace [--on sbj_7Hq2,job_4Tx9]
    manage.py tick --dry-run --to 2026-12-01T09:00Z  # what would fire by then; sends nothing
"""

import time
from datetime import timedelta

from django.core.management.base import BaseCommand, CommandError

from timekeeping import checks
from timekeeping.basics import wallclock
from timekeeping.basics.instants import parse_instant
from timekeeping.models import TestClock
from timekeeping.tick import collector, loop, phases, test_clocks, trace

PROGRESS_EVERY_S = 10.0  # a plain progress line at most this often, when not on a terminal
BAR_EVERY_S = 0.1  # the bar is redrawn at most this often
BAR_WIDTH = 30


def _plain(text: str) -> str:
    return text  # progress is not an error: no error colour on standard error


class WalkProgress:
    """A test clock's walk as it goes, on standard error (standard output keeps the summary
    or the trace): on a terminal, one bar redrawn in place (the instant reached, timers fired,
    time left); elsewhere (a log, a pipe), a plain line every PROGRESS_EVERY_S seconds. Time
    is measured on the monotonic clock."""

    def __init__(self, out, *, terminal: bool):
        self.out, self.terminal = out, terminal
        self.began = time.monotonic()
        self.last: float | None = None
        self.drawn = False

    def __call__(self, progress: test_clocks.Progress) -> None:
        now = time.monotonic()
        every = BAR_EVERY_S if self.terminal else PROGRESS_EVERY_S
        done = progress.share >= 1
        if self.last is not None and now - self.last < every and not (done and self.terminal):
            return
        if done and not self.terminal:
            return  # the summary line says where it ended
        self.last = now
        text = (f"{progress.reached:%Y-%m-%dT%H:%M:%SZ} · {progress.fired:,} fired · "
                f"{self._left(progress, now)}")
        if self.terminal:
            filled = round(progress.share * BAR_WIDTH)
            self.out.write(f"\r[{'#' * filled}{'-' * (BAR_WIDTH - filled)}] "
                           f"{progress.share:4.0%} {text}", ending="", style_func=_plain)
            self.out.flush()
            self.drawn = True
        else:
            self.out.write(f"walked to {text} ({progress.share:.0%})", style_func=_plain)

    def end(self) -> None:
        if self.drawn:
            self.out.write("", style_func=_plain)  # off the bar's line

    def _left(self, progress: test_clocks.Progress, now: float) -> str:
        if progress.share >= 1:
            return "done"
        if progress.share <= 0:
            return "time left unknown"
        seconds = (now - self.began) * (1 - progress.share) / progress.share
        return f"about {seconds:,.0f} s left"


class Command(BaseCommand):
    help = "Fire every owed timer once, in order, then sweep the outbox."
    # Only the product's own checks, which the tick needs (where schedules keep their state):
    # Django's others import the whole site (its URLs, views, admin and API) each minute,
    # 16 MB of a tick's 90 and a fifth of its start-up, for nothing the tick uses (issue 32).
    requires_system_checks = [checks.TAG]

    def add_arguments(self, parser):
        parser.add_argument("--loop", action="store_true",
                            help="tick at each whole minute of UTC until stopped")
        parser.add_argument("--to", help="an ISO 8601 instant: advance a test clock to it "
                                         "(with --test-clock), or preview to it (--dry-run)")
        parser.add_argument("--test-clock", help="the test clock to advance (tc_…)")
        parser.add_argument("--trace", action="store_true", help="print the trace")
        parser.add_argument("--on", help="comma-separated owner ids: trace only their timers")
        parser.add_argument("--dry-run", action="store_true",
                            help="run inside a transaction that is rolled back; send nothing")
        parser.add_argument("--budget", type=float, default=phases.DEFAULT_BUDGET.total_seconds(),
                            help="seconds a tick may spend (default 50)")

    def handle(self, *args, **options):
        collector.settle()  # what start-up made, out of the collector's way
        to = self._instant(options["to"])
        on = [part for part in (options["on"] or "").split(",") if part]
        if options["loop"]:
            loop.tick_forever(write=self.stdout.write)
            return
        if options["test_clock"]:
            self._advance(options, to, on)
            return
        if to is not None and not options["dry_run"]:
            raise CommandError("--to: the real clock cannot be moved; add --test-clock tc_… to "
                               "advance a test clock, or --dry-run to preview")
        instant = (to or wallclock.wall_now()) if options["dry_run"] else wallclock.wall_now()
        stream = (trace.Stream(self.stdout.write, instant=instant, on=on)
                  if options["trace"] else None)
        if options["dry_run"]:
            result = phases.preview(to=instant, trace=stream)
        else:
            result = phases.run_once(now=instant, budget=timedelta(seconds=options["budget"]),
                                     trace=stream)
        if stream is not None:
            stream.end()
        if options["dry_run"]:
            self.stdout.write("dry run, nothing kept: " + result.summary())
            return
        for line in result.report():
            self.stdout.write(line)

    def _advance(self, options, to, on):
        if to is None:
            raise CommandError("--to: say where to advance the test clock, e.g. "
                               "--to 2028-04-16T00:00:00Z")
        test_clock = TestClock.objects.select_related("brand").filter(
            pk=options["test_clock"]).first()
        if test_clock is None:
            raise CommandError(f"--test-clock: no test clock {options['test_clock']!r}")
        start = test_clock.frozen_time
        progress = WalkProgress(self.stderr, terminal=self.stderr.isatty())
        try:
            if options["dry_run"]:
                ticked = test_clocks.preview(
                    test_clock, to=to, on=on,
                    lines=self.stdout.write if options["trace"] else None)
                if not options["trace"]:
                    self._said(test_clock, start, to, ticked.run)
                return
            # Asked for like any advance, then walked here, slice by slice: killed, the tick
            # takes it on where it stopped.
            walk = test_clocks.request(test_clock, to=to, by="manage.py tick")
            test_clocks.drive(walk, progress=progress)
        except test_clocks.AdvanceRefused as refused:
            raise CommandError(str(refused)) from None
        except test_clocks.WalkFailed as failed:
            raise CommandError(str(failed)) from None
        finally:
            progress.end()
        walk.refresh_from_db()
        if options["trace"]:
            for line in trace.walk_lines(walk, on=on):
                self.stdout.write(line)
        else:
            self._said(test_clock, start, to, walk)

    def _said(self, test_clock, start, to, figures):
        self.stdout.write(f"{test_clock.pk} · {start:%Y-%m-%dT%H:%M:%SZ} → "
                          f"{to:%Y-%m-%dT%H:%M:%SZ} · {figures.fired} fired · "
                          f"{figures.armed} armed · {figures.failed} failed · "
                          f"{figures.passes} passes")

    @staticmethod
    def _instant(text):
        if text is None:
            return None
        try:
            return parse_instant(text, field="--to")
        except ValueError as error:
            raise CommandError(str(error)) from None
