from django.apps import AppConfig


class TimekeepingConfig(AppConfig):
    name = "timekeeping"
    verbose_name = "Keeping Time"

    def ready(self) -> None:
        """Everything the product registers, in one place (docs/architecture.md, "Wiring"):
        the system checks, then each package's timer kinds, gate checks and effects, hooks,
        operations and actions, in this order (a job's own time opens after its clocks, a
        subscription's after the job's)."""
        from django.core import checks as django_checks
        from django.utils.module_loading import autodiscover_modules

        from timekeeping import (
            automations,
            checks,
            clocks,
            jobs,
            moves,
            recurring,
            schedules,
            timers,
            webhooks,
        )
        from timekeeping.web import strict

        django_checks.register(checks.schedule_store, checks.TAG)
        strict.register_converters()
        # Automations after webhooks: a record's own deliveries are queued before a rule's.
        for package in (timers, clocks, jobs, recurring, schedules, moves, webhooks, automations):
            package.register()
        # A developer's own operations, due rules and actions: each installed app's
        # `operations`, `dues` and `actions` module, as docs/timers.md says.
        autodiscover_modules("operations", "dues", "actions")
