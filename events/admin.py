from django.contrib import admin

from accounts.admin import OwnerEmail
from events.models import Event


@admin.register(Event)
class EventAdmin(OwnerEmail, admin.ModelAdmin):
    """Read only: the table is append-only (the database refuses an edit), and staff act
    through the developers' and keys' own pages, which record events of their own."""

    owner_account = "account"
    list_display = ["id", "created_at", "type", "owner_email", "mode", "actor_type"]
    list_display += ["actor_email", "key_prefix"]
    list_filter = ["type", "mode", "actor_type"]
    search_fields = ["id", "account__memberships__user__email", "data__keyPrefix"]
    list_select_related = ["account"]
    date_hierarchy = "created_at"
    fields = ["id", "created_at", "type", "account", "mode", "actor_type", "actor_email", "data"]
    readonly_fields = fields

    @admin.display(description="key")
    def key_prefix(self, obj):
        return obj.data.get("keyPrefix")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
