from django.contrib import admin

from money.models import Account, Hold, Posting


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    list_display = ["key", "currency", "floor"]
    search_fields = ["key"]

    def get_readonly_fields(self, request, obj=None):
        # Its entries are in its currency, under its key: only its floor is the operator's.
        return ["key", "currency"] if obj is not None else []


@admin.register(Posting)
class PostingAdmin(admin.ModelAdmin):
    list_display = ["at", "kind", "reference", "currency"]
    list_filter = ["kind"]
    search_fields = ["reference"]

    def has_add_permission(self, request):
        return False  # only the ledger posts

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # a posting is the ledger's history


@admin.register(Hold)
class HoldAdmin(admin.ModelAdmin):
    list_display = ["reference", "amount", "currency", "state", "until", "last_refusal"]
    list_filter = ["state"]

    def has_add_permission(self, request):
        return False  # only the ledger holds, takes and gives back

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False  # a hold still held is money owed back at its `until`
