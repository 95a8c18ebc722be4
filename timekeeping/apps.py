from django.apps import AppConfig


class TimekeepingConfig(AppConfig):
    name = "timekeeping"
    verbose_name = "Keeping Time"
