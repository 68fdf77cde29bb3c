"""Staff see endpoints and deliveries, read-only; secrets are never shown (not even
encrypted: the fields are left out)."""

from django.contrib import admin

from accounts.admin import OwnerEmail
from webhooks.models import WebhookAttempt, WebhookDelivery, WebhookEndpoint


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(OwnerEmail, ReadOnlyAdmin):
    owner_account = "account"
    list_display = ["id", "url", "owner_email", "enabled", "failing_since", "created_at"]
    list_filter = ["enabled"]
    search_fields = ["url", "account__memberships__user__email"]
    list_select_related = ["account"]
    fields = [
        "account",
        "url",
        "event_types",
        "enabled",
        "failing_since",
        "disabled_for_failing_at",
        "previous_secret_expires_at",
        "created_at",
    ]
    readonly_fields = fields


class WebhookAttemptInline(admin.TabularInline):
    model = WebhookAttempt
    fields = ["number", "attempted_at", "outcome", "status_code", "duration_ms", "error"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "event",
        "endpoint",
        "status",
        "attempts",
        "next_attempt_at",
        "created_at",
    ]
    list_filter = ["status"]
    search_fields = ["event__id", "endpoint__url", "endpoint__account__memberships__user__email"]
    list_select_related = ["event", "endpoint"]
    fields = ["event", "endpoint", "status", "attempts", "next_attempt_at", "created_at"]
    readonly_fields = fields
    inlines = [WebhookAttemptInline]
