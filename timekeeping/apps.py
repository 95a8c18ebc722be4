from django.apps import AppConfig


class TimekeepingConfig(AppConfig):
    name = "timekeeping"
    verbose_name = "Keeping Time"

    def ready(self) -> None:
        # Operations and actions live in modules of any installed app; import them all so
        # their decorators register them before a tick needs them.
        from django.utils.module_loading import autodiscover_modules

        from timekeeping import checks, kinds  # noqa: F401 - registers the system checks

        kinds.load()
        autodiscover_modules("operations", "dues", "actions")

        from timekeeping.schedules import purge

        purge.register_actions()
