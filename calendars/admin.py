"""Opening hours. Calendars and postponements are registered by `timekeeping/admin.py`:
saving either moves the open dates on the calendar, which only `timekeeping` knows of, and
`calendars/` never imports `timekeeping/`."""

from django.contrib import admin

from calendars.models import OpeningHours, WeeklyHours


class OpeningHoursInline(admin.TabularInline):
    model = OpeningHours
    extra = 0


@admin.register(WeeklyHours)
class WeeklyHoursAdmin(admin.ModelAdmin):
    list_display = ["name"]
    inlines = [OpeningHoursInline]
