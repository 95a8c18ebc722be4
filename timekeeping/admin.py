from datetime import timedelta

from django.contrib import admin

from timekeeping import timers
from timekeeping.models import Brand, Delivery, Record, TestClock, TickRun, Timer


@admin.register(Brand)
class BrandAdmin(admin.ModelAdmin):
    list_display = ["name", "id", "slug", "owner", "created"]
    search_fields = ["id", "name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    filter_horizontal = ["staff"]
    exclude = ["lease_holder", "lease_until"]


@admin.register(TestClock)
class TestClockAdmin(admin.ModelAdmin):
    list_display = ["name", "id", "brand", "frozen_time", "status"]
    list_filter = ["status", "brand"]
    search_fields = ["id", "name"]


@admin.register(Record)
class RecordAdmin(admin.ModelAdmin):
    """Records are append-only: the admin shows them and never changes one."""

    list_display = ["instant", "kind", "brand", "test_clock", "subject", "job", "timer"]
    list_filter = ["kind", "brand"]
    search_fields = ["id", "kind", "subject", "job", "timer"]
    date_hierarchy = "instant"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class LateFilter(admin.SimpleListFilter):
    title = "late"
    parameter_name = "late"

    def lookups(self, request, model_admin):
        return [("yes", "fired late"), ("no", "fired on time")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(late_by__gt=timedelta(0))
        if self.value() == "no":
            return queryset.filter(late_by=timedelta(0))
        return queryset


@admin.register(Timer)
class TimerAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "place", "owed", "state", "fired", "late_by", "owner_id",
                    "brand", "test_clock"]
    list_filter = ["state", "kind", "place", LateFilter, "brand"]
    search_fields = ["id", "key", "owner_id"]
    date_hierarchy = "owed"
    readonly_fields = ["why"]

    @admin.display(description="why")
    def why(self, obj):
        return timers.explain(obj) if obj.pk else ""


@admin.register(TickRun)
class TickRunAdmin(admin.ModelAdmin):
    list_display = ["started", "brand", "test_clock", "instant", "passes", "fired", "armed",
                    "held", "failed", "dropped", "runaway", "unfinished", "finished"]
    list_filter = ["runaway", "unfinished", "brand"]
    date_hierarchy = "started"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["created", "channel", "idempotency_key", "state", "attempts",
                    "next_attempt", "delivered", "brand"]
    list_filter = ["state", "channel", "brand"]
    search_fields = ["id", "idempotency_key"]
