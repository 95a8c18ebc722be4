from django.contrib import admin

from money.models import Account, Hold, Posting


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    list_display = ["key", "currency", "floor"]
    search_fields = ["key"]


@admin.register(Posting)
class PostingAdmin(admin.ModelAdmin):
    list_display = ["at", "kind", "reference", "currency"]
    list_filter = ["kind"]
    search_fields = ["reference"]

    def has_add_permission(self, request):
        return False  # only the ledger posts

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Hold)
class HoldAdmin(admin.ModelAdmin):
    list_display = ["reference", "amount", "currency", "state", "until", "last_refusal"]
    list_filter = ["state"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
