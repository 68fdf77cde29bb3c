from django.contrib import admin

from catalog.models import LookupSwitch, Product


@admin.register(Product)
class ProductAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "availability", "channels", "unit_cost", "is_paused"]
    list_editable = ["is_paused"]
    list_filter = ["availability", "is_paused"]
    readonly_fields = ["slug"]

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(LookupSwitch)
class LookupSwitchAdmin(admin.ModelAdmin):
    list_display = ["__str__", "paused", "reason", "updated_at"]

    def has_add_permission(self, request):
        return not LookupSwitch.objects.exists()

    def has_delete_permission(self, request, obj=None):
        return False
