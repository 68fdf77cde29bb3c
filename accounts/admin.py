from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.utils import timezone

from accounts.models import ApiKey, Developer, MonthlyUsage, User
from accounts.services import api_key_revoke, api_key_set_active


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    ordering = ["email"]
    list_display = ["email", "first_name", "last_name", "is_staff", "is_active", "date_joined"]
    search_fields = ["email", "first_name", "last_name"]
    fieldsets = (
        (None, {"fields": ("email", "password")}),
        ("Personal info", {"fields": ("first_name", "last_name")}),
        ("Permissions", {"fields": ("is_active", "is_staff", "is_superuser", "groups")}),
        ("Important dates", {"fields": ("last_login", "date_joined")}),
    )
    add_fieldsets = ((None, {"classes": ("wide",), "fields": ("email", "password1", "password2")}),)


class ApiKeyInline(admin.TabularInline):
    model = ApiKey
    fields = ["prefix", "name", "status", "expires_at", "last_used_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Developer)
class DeveloperAdmin(admin.ModelAdmin):
    list_display = ["user", "company", "access", "created_at"]
    list_filter = ["access"]
    search_fields = ["user__email", "company"]
    list_select_related = ["user"]
    readonly_fields = ["created_at"]
    inlines = [ApiKeyInline]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = [
        "prefix",
        "name",
        "developer",
        "status",
        "expires_at",
        "last_used_at",
        "monthly_quota",
        "rate_limit",
    ]
    list_filter = ["is_active", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["prefix", "name", "developer__user__email"]
    list_select_related = ["developer__user"]
    # The hash is never shown; it is not a field here at all.
    fields = [
        "developer",
        "name",
        "prefix",
        "status",
        "created_at",
        "expires_at",
        "revoked_at",
        "is_active",
        "last_used_at",
        "monthly_quota",
        "rate_limit",
    ]
    readonly_fields = ["developer", "prefix", "status", "created_at", "revoked_at", "last_used_at"]
    actions = ["revoke", "deactivate", "activate"]

    def has_add_permission(self, request):
        # Keys are issued where the raw key can be shown once: the portal or `manage.py apikey`.
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="status")
    def status(self, obj):
        return obj.status_at(timezone.now())

    @admin.action(description="Revoke selected keys (immediate, permanent)")
    def revoke(self, request, queryset):
        for key in queryset:
            api_key_revoke(api_key=key)
            self.log_change(request, key, "Revoked")
        self.message_user(request, f"Revoked {queryset.count()} key(s).", messages.SUCCESS)

    @admin.action(description="Deactivate selected keys")
    def deactivate(self, request, queryset):
        for key in queryset:
            api_key_set_active(api_key=key, active=False)
            self.log_change(request, key, "Deactivated")
        self.message_user(request, f"Deactivated {queryset.count()} key(s).", messages.SUCCESS)

    @admin.action(description="Activate selected keys")
    def activate(self, request, queryset):
        for key in queryset:
            api_key_set_active(api_key=key, active=True)
            self.log_change(request, key, "Activated")
        self.message_user(request, f"Activated {queryset.count()} key(s).", messages.SUCCESS)


@admin.register(MonthlyUsage)
class MonthlyUsageAdmin(admin.ModelAdmin):
    list_display = ["api_key", "period", "units_used"]
    list_filter = ["period"]
    search_fields = ["api_key__prefix", "api_key__developer__user__email"]
    list_select_related = ["api_key"]
    readonly_fields = ["api_key", "period", "units_used"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
