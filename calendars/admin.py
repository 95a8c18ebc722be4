from django.contrib import admin

from calendars.models import Calendar, OpeningHours, Postponement, WeeklyHours


class PostponementInline(admin.TabularInline):
    model = Postponement
    extra = 0


@admin.register(Calendar)
class CalendarAdmin(admin.ModelAdmin):
    list_display = ["name", "zone", "holidays_country", "holidays_subdivision", "closes", "roll"]
    search_fields = ["name"]
    inlines = [PostponementInline]


@admin.register(Postponement)
class PostponementAdmin(admin.ModelAdmin):
    list_display = ["calendar", "from_date", "through", "to", "notice"]
    list_filter = ["calendar"]


class OpeningHoursInline(admin.TabularInline):
    model = OpeningHours
    extra = 0


@admin.register(WeeklyHours)
class WeeklyHoursAdmin(admin.ModelAdmin):
    list_display = ["name"]
    inlines = [OpeningHoursInline]
