from django.contrib import admin

from events.models import Event


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    """Read only: the table is append-only (the database refuses an edit), and staff act
    through the developers' and keys' own pages, which record events of their own."""

    list_display = ["id", "created_at", "type", "account", "mode", "actor_type", "key_prefix"]
    list_filter = ["type", "mode", "actor_type"]
    search_fields = ["id", "account__user__email", "data__keyPrefix"]
    list_select_related = ["account__user"]
    date_hierarchy = "created_at"
    fields = ["id", "created_at", "type", "account", "mode", "actor_type", "data"]
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
