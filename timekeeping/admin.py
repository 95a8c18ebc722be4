from datetime import timedelta

from django.contrib import admin, messages
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe

from timekeeping import clock, timers
from timekeeping.models import (
    Brand,
    Clock,
    Connection,
    Delivery,
    Job,
    Manifest,
    Occurrence,
    Record,
    RowAudit,
    Schedule,
    ScheduleRun,
    Subject,
    TestClock,
    TickRun,
    Timer,
)
from timekeeping.moves import operate as moves_operate
from timekeeping.schedules import operate


class ReadOnlyAdmin(admin.ModelAdmin):
    """For what the product writes and people only read: records, runs, the audit."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


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
class TickRunAdmin(ReadOnlyAdmin):
    list_display = ["started", "brand", "test_clock", "instant", "passes", "fired", "armed",
                    "held", "failed", "dropped", "runaway", "unfinished", "finished"]
    list_filter = ["runaway", "unfinished", "brand"]
    date_hierarchy = "started"


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ["created", "channel", "idempotency_key", "state", "attempts",
                    "next_attempt", "delivered", "brand"]
    list_filter = ["state", "channel", "brand"]
    search_fields = ["id", "idempotency_key"]


@admin.register(Schedule)
class ScheduleAdmin(admin.ModelAdmin):
    list_display = ["name", "brand", "action", "every", "next_due", "paused", "last_tick",
                    "active"]
    list_filter = ["paused", "active", "declared_in", "brand"]
    search_fields = ["name", "action", "key"]
    readonly_fields = ["key", "why"]
    actions = ["pause_schedules", "resume_schedules", "run_now"]

    def has_add_permission(self, request):
        return False  # schedules are declared in code or in a manifest

    @admin.display(description="every")
    def every(self, obj):
        return operate.every_text(obj.every_s)

    @admin.display(description="why")
    def why(self, obj):
        return operate.why(obj) if obj.pk else ""

    def changelist_view(self, request, extra_context=None):
        warning = operate.ticks_stopped()
        if warning:
            self.message_user(request, warning, level=messages.WARNING)
        return super().changelist_view(request, extra_context)

    @admin.action(description="Pause the selected schedules")
    def pause_schedules(self, request, queryset):
        for row in queryset:
            operate.pause(row)

    @admin.action(description="Resume the selected schedules")
    def resume_schedules(self, request, queryset):
        for row in queryset:
            operate.resume(row)

    @admin.action(description="Run the selected schedules at the next tick")
    def run_now(self, request, queryset):
        for row in queryset:
            operate.run_by_hand(row)


@admin.register(ScheduleRun)
class ScheduleRunAdmin(ReadOnlyAdmin):
    list_display = ["schedule", "due", "tick", "outcome", "reason", "items", "by_hand",
                    "finished"]
    list_filter = ["outcome", "by_hand"]
    search_fields = ["schedule__name", "reason"]
    date_hierarchy = "tick"


@admin.register(Manifest)
class ManifestAdmin(admin.ModelAdmin):
    list_display = ["brand", "version", "bundle", "created"]
    list_filter = ["brand"]
    readonly_fields = ["brand", "version", "bundle", "document", "created"]

    def has_add_permission(self, request):
        return False  # versions come from `manifest load` or the API, checked


@admin.register(Subject)
class SubjectAdmin(admin.ModelAdmin):
    list_display = ["name", "id", "kind", "key", "zone", "brand", "test_clock"]
    list_filter = ["brand", "kind"]
    search_fields = ["id", "name", "key"]
    exclude = ["feed_token"]


class ShownInline(admin.TabularInline):
    """Rows shown under their parent and changed only by the product."""

    extra = 0
    can_delete = False

    def get_readonly_fields(self, request, obj=None):
        return self.fields


class ClockInline(ShownInline):
    model = Clock
    fields = ["name", "title", "owner", "hard", "lives_on_subject"]


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "service", "period", "subject", "state", "opened", "test_clock"]
    list_filter = ["state", "service", "brand"]
    search_fields = ["id", "subject__name", "subject__id"]
    inlines = [ClockInline]


class OccurrenceInline(ShownInline):
    model = Occurrence
    fields = ["item", "seq", "rule_due", "due", "rolled_from", "moved_from", "late_from",
              "status", "settled_by"]


@admin.register(Clock)
class ClockAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "title", "subject", "job", "hard", "lives_on_subject"]
    list_filter = ["hard", "lives_on_subject", "brand"]
    search_fields = ["id", "name", "title"]
    inlines = [OccurrenceInline]


@admin.register(Connection)
class ConnectionAdmin(admin.ModelAdmin):
    """Per connection: the backlog, the rows set aside, and what moves in the next 24 hours."""

    list_display = ["brand", "database", "zone", "paused", "last_run"]
    list_filter = ["paused"]
    readonly_fields = ["backlog", "rows_set_aside", "next_24_hours", "last_run"]
    exclude = ["lease_holder", "lease_until"]

    def has_add_permission(self, request):
        return False  # a manifest with tables makes its brand's connection

    @admin.display(description="backlog (rows due, not yet moved)")
    def backlog(self, obj):
        lines = moves_operate.backlog(obj, now=clock.wall_now())
        return format_html_join(mark_safe("<br>"), "{} · timed move {} ({}): {} due, oldest {}", (
            (b.table, b.rule, b.move, b.due, b.oldest or "—") for b in lines)) or "—"

    @admin.display(description="set aside")
    def rows_set_aside(self, obj):
        rows = moves_operate.set_aside(obj, now=clock.wall_now())
        return format_html_join(mark_safe("<br>"), "{} #{} · timed move {} · until {} · {}", (
            (r.table, r.row, r.rule, r.until, r.code) for r in rows)) or "—"

    @admin.display(description="what moves in the next 24 hours")
    def next_24_hours(self, obj):
        lines = moves_operate.preview(obj, now=clock.wall_now(), hours=24)
        return format_html_join(mark_safe("<br>"), "{}", ((line,) for line in lines)) or "—"


@admin.register(RowAudit)
class RowAuditAdmin(ReadOnlyAdmin):
    list_display = ["at", "table", "row", "kind", "who", "connection"]
    list_filter = ["kind", "table"]
    search_fields = ["table", "who"]
