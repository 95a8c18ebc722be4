"""The admin: people read what the product owns here, and change it only through the
product's own functions.

What the product writes (timers, records, deliveries, runs, jobs, clocks, schedules' state,
the audit) is shown and never added, changed or deleted here: changing a timer or a delivery
by hand would undo "exactly once", and deleting one would lose history or an owed timer.
Operators act through actions that call the same functions as the API and the commands.
The calendar and its postponements are registered here, not in `calendars/` (which never
imports `timekeeping/`), because saving them moves the dates on them.
"""

from datetime import timedelta

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_permission_codename
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe

from calendars.models import Calendar, Postponement
from timekeeping import clocks
from timekeeping.access import keys
from timekeeping.basics import instants, wallclock
from timekeeping.models import (
    ApiKey,
    Brand,
    BrandTable,
    Clock,
    Connection,
    Delivery,
    Fault,
    Job,
    Manifest,
    Member,
    Occurrence,
    Record,
    RowAudit,
    Schedule,
    ScheduleRun,
    Subject,
    TestClock,
    TickRun,
    Timer,
    Walk,
)
from timekeeping.moves import operate as moves_operate
from timekeeping.recurring import terms
from timekeeping.schedules import operate
from timekeeping.schedules import parking as schedule_parking
from timekeeping.timers import arming, outbox, records


def _by(request) -> str:
    return f"admin {request.user.get_username()}"


class ReadOnlyAdmin(admin.ModelAdmin):
    """For what the product writes and people only read: records, timers, runs, the audit.
    Nothing is added, changed or deleted here; actions call the product's functions."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_operate_permission(self, request) -> bool:
        # The forms are read-only, so the admin's change permission is always False; an
        # action is for whom the auth system grants the model's change permission.
        codename = get_permission_codename("change", self.opts)
        return request.user.has_perm(f"{self.opts.app_label}.{codename}")


class MemberInline(admin.TabularInline):
    model = Member
    extra = 0
    fields = ["user", "role", "zone"]
    autocomplete_fields = ["user"]


@admin.register(Brand)
class BrandAdmin(admin.ModelAdmin):
    list_display = ["name", "id", "slug", "owner", "plan", "created"]
    search_fields = ["id", "name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    exclude = ["lease_holder", "lease_until"]
    inlines = [MemberInline]

    def has_delete_permission(self, request, obj=None):
        """A brand is deleted whole, its tables dropped and 30 days to undo kept, by its owner
        in the console or `manage.py brand delete` (docs/operating.md), never row by row."""
        return False

    def save_model(self, request, obj, form, change):
        """A change of plan goes through `recurring.terms.change_plan` (on the record, S24),
        and the operator is told what keeps the old plan and until when."""
        if not change or "plan" not in form.changed_data:
            return super().save_model(request, obj, form, change)
        plan, obj.plan = obj.plan, form.initial["plan"]
        super().save_model(request, obj, form, change)
        kept = terms.change_plan(brand=obj, plan=plan, by=records.person(request.user))
        self.message_user(request, terms.said(kept), messages.INFO)


class TestClockForm(forms.ModelForm):
    class Meta:
        model = TestClock
        fields = ["brand", "name", "frozen_time"]

    def clean_frozen_time(self):
        try:  # the span the API keeps too (`instants.parse_instant`)
            return instants.check_span(self.cleaned_data["frozen_time"], field="frozen_time")
        except instants.OutOfSpan as error:
            raise forms.ValidationError(str(error).removeprefix("frozen_time: ")) from None


@admin.register(TestClock)
class TestClockAdmin(admin.ModelAdmin):
    """A test clock is made here with its starting time; only its advance moves it after
    (`manage.py tick --test-clock … --to …`, or the API's advance)."""

    form = TestClockForm
    list_display = ["name", "id", "brand", "frozen_time", "status"]
    list_filter = ["status", "brand"]
    list_select_related = ["brand"]
    search_fields = ["id", "name"]

    def get_fields(self, request, obj=None):
        if obj is None:
            return ["brand", "name", "frozen_time"]
        return ["brand", "name", "frozen_time", "status", "created"]

    def get_readonly_fields(self, request, obj=None):
        # Its time, status and brand are the product's: moving a test clock backwards, or
        # to another brand, would undo what its advance fired.
        return [] if obj is None else ["brand", "frozen_time", "status", "created"]

    def has_delete_permission(self, request, obj=None):
        return False  # its timers, records and subjects would go with it


@admin.register(Walk)
class WalkAdmin(ReadOnlyAdmin):
    """Test clocks' advances, as the tick walks them; the trace is at
    /api/test_clocks/<id>/trace."""

    list_display = ["test_clock", "state", "start", "to", "reached", "fired", "failed",
                    "slices", "requested", "by"]
    list_filter = ["state", "brand"]
    list_select_related = ["test_clock"]
    search_fields = ["id", "test_clock__id"]
    exclude = ["brand"]


@admin.register(Record)
class RecordAdmin(ReadOnlyAdmin):
    """Records are append-only: the admin shows them and never changes one."""

    list_display = ["instant", "kind", "brand", "test_clock", "subject", "job", "timer"]
    list_filter = ["kind", "brand"]
    list_select_related = ["brand", "test_clock"]
    search_fields = ["id", "kind", "subject", "job", "timer"]
    date_hierarchy = "instant"


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
class TimerAdmin(ReadOnlyAdmin):
    list_display = ["id", "kind", "place", "owed", "state", "fired", "late_by", "owner_id",
                    "brand", "test_clock"]
    list_filter = ["state", "kind", "place", LateFilter, "brand"]
    list_select_related = ["brand", "test_clock"]
    search_fields = ["id", "key", "owner_id"]
    date_hierarchy = "owed"
    readonly_fields = ["why"]

    @admin.display(description="why")
    def why(self, obj):
        return arming.explain(obj) if obj.pk else ""


@admin.register(TickRun)
class TickRunAdmin(ReadOnlyAdmin):
    list_display = ["started", "brand", "test_clock", "instant", "passes", "fired", "armed",
                    "held", "failed", "dropped", "runaway", "unfinished", "finished"]
    list_filter = ["runaway", "unfinished", "brand"]
    list_select_related = ["brand", "test_clock"]
    date_hierarchy = "started"


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdmin):
    list_display = ["created", "channel", "idempotency_key", "state", "attempts",
                    "next_attempt", "delivered", "brand"]
    list_filter = ["state", "channel", "brand"]
    list_select_related = ["brand"]
    search_fields = ["id", "idempotency_key"]
    actions = ["send_again"]

    @admin.action(description="Send the selected failed deliveries again",
                  permissions=["operate"])
    def send_again(self, request, queryset):
        chosen = list(queryset.values_list("pk", flat=True))
        again = outbox.retry(chosen, now=wallclock.wall_now())
        self.message_user(request, f"{again} failed deliveries go out again at the next sweep; "
                                   f"{len(chosen) - again} were not failed and are left as "
                                   "they are.")


@admin.register(Schedule)
class ScheduleAdmin(ReadOnlyAdmin):
    """Schedules are declared in code or in a manifest, and their state (next due, lease,
    interval, failures in a row) is the engine's; pausing, resuming and running by hand are
    the actions, and for a parked one retrying it or giving it up (issue 31: the only door
    for the product's own schedules, which no brand's console lists)."""

    list_display = ["name", "brand", "action", "every", "next_due", "paused", "last_tick",
                    "active", "attempts", "parked"]
    list_filter = ["paused", "active", "declared_in", "brand"]
    # Brands may live in another database than schedules (SCHEDULES_STORE): fetched by a
    # second query, never joined.
    list_select_related = ()
    search_fields = ["name", "action", "key"]
    readonly_fields = ["why"]
    actions = ["pause_schedules", "resume_schedules", "run_now", "retry_parked", "give_up_parked"]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("brand")

    @admin.display(description="every")
    def every(self, obj):
        return operate.when_text(obj.every_s, obj.at)

    @admin.display(description="why")
    def why(self, obj):
        return operate.why(obj) if obj.pk else ""

    def changelist_view(self, request, extra_context=None):
        warning = operate.ticks_stopped()
        if warning:
            self.message_user(request, warning, level=messages.WARNING)
        return super().changelist_view(request, extra_context)

    @admin.action(description="Pause the selected schedules", permissions=["operate"])
    def pause_schedules(self, request, queryset):
        for row in queryset:
            operate.pause(row)

    @admin.action(description="Resume the selected schedules", permissions=["operate"])
    def resume_schedules(self, request, queryset):
        for row in queryset:
            operate.resume(row)

    @admin.action(description="Run the selected schedules at the next tick",
                  permissions=["operate"])
    def run_now(self, request, queryset):
        parked = [row.name for row in queryset if not operate.run_by_hand(row)]
        if parked:
            self.message_user(request, f"Not run, being parked (retry them instead): "
                                       f"{', '.join(parked)}.", level=messages.WARNING)

    @admin.action(description="Retry the selected parked schedules now", permissions=["operate"])
    def retry_parked(self, request, queryset):
        self._parked(request, queryset, schedule_parking.retry_now, "run at the next tick")

    @admin.action(description="Give up on the selected parked schedules (pause them)",
                  permissions=["operate"])
    def give_up_parked(self, request, queryset):
        self._parked(request, queryset, schedule_parking.give_up, "paused")

    def _parked(self, request, queryset, act, done: str) -> None:
        by, now, acted = records.person(request.user), wallclock.wall_now(), 0
        for row in queryset:
            try:
                act(row.pk, by=by, now=now)
                acted += 1
            except schedule_parking.NotParked:
                pass
        self.message_user(request, f"{acted} parked schedule(s) {done}; "
                                   f"{len(queryset) - acted} were not parked and are left as "
                                   "they are.")


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

    def has_delete_permission(self, request, obj=None):
        return False  # jobs, subjects and timers keep the version they opened under


@admin.register(Subject)
class SubjectAdmin(admin.ModelAdmin):
    """A subject's name, contact and input can be corrected here; its brand, its world (a
    test clock) and the manifest it opened under cannot, and it is never deleted here: its
    jobs, dates and armed timers hang on it. An erased subject is only read: its personal
    data is gone for good (`timekeeping.subjects.erasing`)."""

    list_display = ["name", "id", "kind", "key", "zone", "brand", "test_clock", "erased"]
    list_filter = ["brand", "kind"]
    list_select_related = ["brand", "test_clock"]
    search_fields = ["id", "name", "key"]
    exclude = ["feed_token"]

    def get_readonly_fields(self, request, obj=None):
        return ["brand", "test_clock", "bundle"] if obj is not None else ["bundle"]

    def has_change_permission(self, request, obj=None):
        return (obj is None or obj.erased is None) and super().has_change_permission(request,
                                                                                     obj)

    def has_delete_permission(self, request, obj=None):
        return False


class ShownInline(admin.TabularInline):
    """Rows shown under their parent and changed only by the product."""

    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ClockInline(ShownInline):
    model = Clock
    fk_name = "job"  # its own job; `steward` is the job keeping it between jobs (S16)
    fields = ["name", "title", "owner", "hard", "lives_on_subject"]


@admin.register(Job)
class JobAdmin(ReadOnlyAdmin):
    list_display = ["id", "service", "period", "subject", "state", "opened", "test_clock"]
    list_filter = ["state", "service", "brand"]
    list_select_related = ["subject", "test_clock"]
    search_fields = ["id", "subject__name", "subject__id"]
    inlines = [ClockInline]


class OccurrenceInline(ShownInline):
    model = Occurrence
    fields = ["item", "seq", "rule_due", "due", "rolled_from", "moved_from", "late_from",
              "status", "settled_by"]


@admin.register(Clock)
class ClockAdmin(ReadOnlyAdmin):
    list_display = ["id", "name", "title", "subject", "job", "hard", "lives_on_subject"]
    list_filter = ["hard", "lives_on_subject", "brand"]
    list_select_related = ["subject", "job"]
    search_fields = ["id", "name", "title"]
    inlines = [OccurrenceInline]


@admin.register(Connection)
class ConnectionAdmin(admin.ModelAdmin):
    """Per connection: the backlog, the rows set aside, and what moves in the next 24 hours.
    Its database is the manifest's to decide; its zone and pause are the operator's."""

    list_display = ["brand", "database", "zone", "paused", "last_run", "attempts",
                    "next_attempt", "parked"]
    list_filter = ["paused"]
    list_select_related = ["brand"]
    # Its failures and backoff (issue 31) are the job's to write; retry or give up on the
    # brand's Needs attention or over the API (`moves.parking`).
    readonly_fields = ["brand", "database", "backlog", "rows_set_aside", "next_24_hours",
                       "last_run", "attempts", "next_attempt", "parked", "last_error"]
    exclude = ["lease_holder", "lease_until"]

    def has_add_permission(self, request):
        return False  # a manifest with tables makes its brand's connection

    def has_delete_permission(self, request, obj=None):
        return False  # its audit and its rows set aside would go with it

    @admin.display(description="backlog (rows due, not yet moved)")
    def backlog(self, obj):
        lines = moves_operate.backlog(obj, now=wallclock.wall_now())
        return format_html_join(mark_safe("<br>"), "{} · timed move {} ({}): {} due, oldest {}", (
            (b.table, b.rule, b.move, b.due, b.oldest or "—") for b in lines)) or "—"

    @admin.display(description="set aside")
    def rows_set_aside(self, obj):
        rows = moves_operate.set_aside(obj, now=wallclock.wall_now())
        return format_html_join(mark_safe("<br>"), "{} #{} · timed move {} · until {} · {}", (
            (r.table, r.row, r.rule, r.until, r.code) for r in rows)) or "—"

    @admin.display(description="what moves in the next 24 hours")
    def next_24_hours(self, obj):
        lines = moves_operate.preview(obj, now=wallclock.wall_now(), hours=24)
        return format_html_join(mark_safe("<br>"), "{}", ((line,) for line in lines)) or "—"


@admin.register(RowAudit)
class RowAuditAdmin(ReadOnlyAdmin):
    list_display = ["at", "table", "row", "kind", "who", "connection"]
    list_filter = ["kind", "table"]
    list_select_related = ["connection__brand"]
    search_fields = ["table", "who"]


# -- the calendar: saving it, or adding a notice to it, moves the open dates on it ------------

# The fields a roll reads: a change to any other (the name) moves no date.
ROLLED_ON = {"zone", "weekends", "holidays_country", "holidays_subdivision", "closed_dates",
             "closes", "rings_at", "roll"}


@admin.register(Calendar)
class CalendarAdmin(admin.ModelAdmin):
    """Saving a calendar re-rolls the open dates of every brand on it
    (`clocks.calendar_changed`), in the same transaction, and says what moved."""

    list_display = ["name", "zone", "holidays_country", "holidays_subdivision", "closes", "roll"]
    search_fields = ["name"]
    readonly_fields = ["notices"]

    @admin.display(description="postponements (add them under Postponements)")
    def notices(self, obj):
        return format_html_join(mark_safe("<br>"), "{}", (
            (str(notice),) for notice in obj.postponements.all())) if obj.pk else "—"

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change and ROLLED_ON & set(form.changed_data):
            rerolled = clocks.calendar_changed(obj, by=_by(request))
            self.message_user(request, rerolled.said())


class PostponementForm(forms.ModelForm):
    """Adding is applying: once the fields are valid, `clocks.add_postponement` judges the
    notice and, in one transaction, stores it and moves the dates it covers. A refusal is
    shown on the field it names, and then nothing was written."""

    by = ""  # who adds it; the admin sets it per request
    FIELD_OF = {"from": "from_date"}  # the function's names for the form's fields

    class Meta:
        model = Postponement
        fields = ["calendar", "from_date", "through", "to", "where", "notice", "test_clock"]

    def full_clean(self):
        super().full_clean()
        if not self.is_bound or self._errors:
            return
        data = self.cleaned_data
        try:
            self.added = clocks.add_postponement(
                calendar=data["calendar"], from_date=data["from_date"], through=data["through"],
                to=data["to"], where=data["where"] or {}, notice=data["notice"],
                test_clock_id=data["test_clock"], by=self.by)
        except clocks.OrderRefused as refused:
            name = self.FIELD_OF.get(refused.field, refused.field)
            self.add_error(name if name in self.fields else None, refused.message)


@admin.register(Postponement)
class PostponementAdmin(admin.ModelAdmin):
    form = PostponementForm
    list_display = ["calendar", "from_date", "through", "to", "notice", "test_clock"]
    list_filter = ["calendar"]
    list_select_related = ["calendar"]
    fieldsets = [(None, {
        "fields": ["calendar", "from_date", "through", "to", "where", "notice", "test_clock"],
        "description": "Adding a postponement moves, at once, every open date of each brand "
                       "on the calendar that falls from 'from' through 'through' (on matching "
                       "subjects) to 'to', hard dates included. A notice once applied is "
                       "history: it is never edited or deleted here. To undo it, add another "
                       "notice that moves the dates back.",
    })]

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        return type(form.__name__, (form,), {"by": _by(request)})

    def save_form(self, request, form, change):
        return form.added[0]  # already stored by add_postponement, with its moves

    def save_model(self, request, obj, form, change):
        moved = form.added[1]
        self.message_user(request, f"Moved {len(moved)} open dates"
                                   + (f": {'; '.join(moved)}." if moved else "."))

    def save_related(self, request, form, formsets, change):
        pass  # a postponement has no related rows to save


@admin.register(Fault)
class FaultAdmin(ReadOnlyAdmin):
    """Places of the tick that failed: open ones first (docs/operating.md, Failures)."""

    list_display = ["phase", "where", "brand", "count", "first_seen", "last_seen", "resolved",
                    "error"]
    list_filter = ["phase", ("resolved", admin.EmptyFieldListFilter)]
    list_select_related = ["brand"]
    search_fields = ["where", "error"]
    ordering = ["-resolved", "-last_seen"]


@admin.register(ApiKey)
class ApiKeyAdmin(ReadOnlyAdmin):
    """A brand's API keys: made by its owner through the API (the secret shown once there);
    revoked there or here."""

    list_display = ["name", "id", "brand", "created", "last_used", "revoked"]
    list_filter = [("revoked", admin.EmptyFieldListFilter), "brand"]
    list_select_related = ["brand"]
    search_fields = ["id", "name"]
    exclude = ["digest"]
    actions = ["revoke"]

    @admin.action(description="Revoke the selected keys", permissions=["operate"])
    def revoke(self, request, queryset):
        now = wallclock.wall_now()
        for key in queryset:
            keys.revoke(key, now=now)
        self.message_user(request, f"{queryset.count()} key(s) revoked.")


@admin.register(BrandTable)
class BrandTableAdmin(ReadOnlyAdmin):
    """Which brand and manifest version made each SQL table."""

    list_display = ["name", "db_table", "brand", "database", "manifest", "created"]
    list_filter = ["database", "brand"]
    list_select_related = ["brand", "manifest"]
    search_fields = ["name", "db_table"]
