from django.contrib import admin

from timekeeping.models import Brand, Record, TestClock


@admin.register(Brand)
class BrandAdmin(admin.ModelAdmin):
    list_display = ["name", "id", "slug", "owner", "created"]
    search_fields = ["id", "name", "slug"]
    prepopulated_fields = {"slug": ["name"]}


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
