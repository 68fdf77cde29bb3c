from django.contrib import admin

from catalog.models import Product


@admin.register(Product)
class ProductAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "availability", "channels", "unit_cost", "is_paused"]
    list_editable = ["is_paused"]
    list_filter = ["availability", "is_paused"]
    readonly_fields = ["slug"]

    def has_delete_permission(self, request, obj=None):
        return False
